package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// memSignals is an in-memory Signals: announced signals, newest last,
// compared with = and >= only (enough for these tests; the real matching is
// the signals package's).
type memSignals struct {
	list    []SignalMatch
	queries []SignalQuery
}

func (m *memSignals) Find(q SignalQuery) (SignalMatch, bool) {
	m.queries = append(m.queries, q)
	for i := len(m.list) - 1; i >= 0; i-- {
		s := m.list[i]
		if s.Name != q.Name {
			continue
		}
		ok := true
		for _, c := range q.Conditions {
			got := fmt.Sprint(s.Params[c.Param])
			want := fmt.Sprint(c.Value)
			switch c.Op {
			case model.OpEqual:
				ok = ok && got == want
			case model.OpGreaterEqual:
				ok = ok && got >= want
			default:
				ok = false
			}
		}
		if ok {
			return s, true
		}
	}
	return SignalMatch{}, false
}

func gatedWorkflow() *model.Workflow {
	dep := model.SignalDependency{Name: "db/table1", MatchNames: []string{"dt"}, MatchParams: map[string]*model.SignalMatchParam{
		"dt": {Param: expr(model.TypeString, "'2026' + '1122'"), Operator: model.OpGreaterEqual},
	}}
	return &model.Workflow{ID: "gated", Steps: []model.Step{
		{Kind: model.KindStep, ID: "wait", Type: model.StepNoOp, SignalDependencies: []model.SignalDependency{dep},
			Params:        params("got", expr(model.TypeString, "params.getFromSignalDependency('0', 'dt')")),
			SignalOutputs: []model.SignalOutput{{Name: "out/done", Params: params("dt", expr(model.TypeString, "got"), "n", literal(model.TypeLong, int64(1)))}},
			Transition:    model.Transition{Successors: []model.Successor{{StepID: "after"}}}},
		{Kind: model.KindStep, ID: "after", Type: model.StepNoOp},
	}}
}

func TestSignalDependencyWaitsThenRuns(t *testing.T) {
	ctx := context.Background()
	sigs := &memSignals{list: []SignalMatch{{Name: "db/table1", Seq: 1, Params: map[string]any{"dt": "20261121"}}}}
	g, d := startRun(t, gatedWorkflow(), WithSignals(sigs))
	var err error
	s := d.State.Step("wait")
	require.Equal(t, model.StepWaitingForSignals, s.Status, "an older signal does not match dt >= 20261122")
	assert.Equal(t, []string{"db/table1"}, s.WaitsFor)
	require.Len(t, sigs.queries, 1)
	assert.Equal(t, []SignalCondition{{Param: "dt", Op: model.OpGreaterEqual, Value: "20261122"}}, sigs.queries[0].Conditions)
	timer := stepCommands(d.Commands)[0].(StartTimer)
	assert.Equal(t, PurposeSignalCheck, timer.Purpose)
	assert.Equal(t, t0.Add(signalCheckDelay).UTC(), timer.FireAt)

	// A signal of another name wakes nothing; the right one lets it run.
	d, err = Decide(ctx, g, d.State, SignalArrived{Name: "db/other", Seq: 1}, t0, WithSignals(sigs))
	require.NoError(t, err)
	assert.Equal(t, model.StepWaitingForSignals, d.State.Step("wait").Status)
	sigs.list = append(sigs.list, SignalMatch{Name: "db/table1", Seq: 2, Params: map[string]any{"dt": "20261122"}})
	raw, _ := json.Marshal(SignalArrived{Name: "db/table1", Seq: 2})
	ev, err := UnmarshalEvent(raw)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ev, t0.Add(time.Second), WithSignals(sigs))
	require.NoError(t, err)
	s = d.State.Step("wait")
	assert.Equal(t, model.StepSucceeded, s.Status)
	assert.Equal(t, "20261122", s.Params["got"], "params.getFromSignalDependency reads the matched signal")
	assert.Equal(t, int64(2), s.SignalDeps[0].Seq)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
	var ann []AnnounceSignal
	for _, c := range d.Commands {
		if a, ok := c.(AnnounceSignal); ok {
			ann = append(ann, a)
		}
	}
	require.Len(t, ann, 1)
	assert.Equal(t, AnnounceSignal{StepID: "wait", Attempt: 1, Index: 0, Name: "out/done",
		Params: map[string]any{"dt": "20261122", "n": int64(1)}}, ann[0])
	raw, _ = json.Marshal(ann[0])
	back, err := UnmarshalCommand(raw)
	require.NoError(t, err)
	assert.Equal(t, "out/done", back.(AnnounceSignal).Name)

	// The re-check timer of an attempt that moved on changes nothing.
	late, err := Decide(ctx, g, d.State, TimerFired{StepID: "wait", Attempt: 1, Purpose: PurposeSignalCheck}, t0.Add(time.Minute), WithSignals(sigs))
	require.NoError(t, err)
	assert.Empty(t, late.Transitions)
}

func TestSignalDependencyMetFromHistoryAndBypass(t *testing.T) {
	ctx := context.Background()
	// Announced before the step started: history counts.
	sigs := &memSignals{list: []SignalMatch{{Name: "db/table1", Seq: 7, Params: map[string]any{"dt": "20261201"}}}}
	g, d := startRun(t, gatedWorkflow(), WithSignals(sigs))
	var err error
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
	assert.Equal(t, "20261201", d.State.Step("wait").Params["got"])

	// Nothing announced: BYPASS releases the step.
	d, err = Decide(ctx, g, newInstance(g), StartRun{}, t0, WithSignals(&memSignals{}))
	require.NoError(t, err)
	require.Equal(t, model.StepWaitingForSignals, d.State.Step("wait").Status)
	require.NoError(t, CheckAction(d.State, "wait", "BYPASS_STEP_DEPENDENCIES"))
	d, err = Decide(ctx, g, d.State, Action{StepID: "wait", Action: "BYPASS_STEP_DEPENDENCIES"}, t0, WithSignals(&memSignals{}))
	require.NoError(t, err)
	s := d.State.Step("wait")
	assert.Equal(t, model.StepFatallyFailed, s.Status, "got reads an unmatched dependency and fails: %s", s.Message)
	assert.Contains(t, s.Message, "getFromSignalDependency")
}

func TestTriggerSignalsReachParams(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "trig", Params: params("w", expr(model.TypeLong, "params.getFromSignal('signal_a', 'watermark')")),
		Steps: []model.Step{{Kind: model.KindStep, ID: "s", Type: model.StepNoOp,
			Params: params("foo", expr(model.TypeString, "params.getFromSignal('foo')"))}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	ini := Initiator{Type: "SIGNAL", Signals: []SignalMatch{
		{Name: "signal_a", Seq: 3, Params: map[string]any{"foo": "bat", "watermark": int64(123456)}},
		{Name: "signal_b", Seq: 9, Params: map[string]any{"foo": "other", "bar": "baz"}},
	}}
	d, err := Decide(ctx, g, newInstance(g), StartRun{Initiator: ini}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowSucceeded, d.State.Status, d.State.Message)
	assert.Equal(t, int64(123456), d.State.Params["w"])
	assert.Equal(t, "bat", d.State.Step("s").Params["foo"], "the first trigger name wins a shared param")
}
