package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// attemptStore plays the store's attempt items for offloaded params.
type attemptStore struct {
	params map[string]Values // by step id
	reads  int
	err    error
}

func (s *attemptStore) StepParams(_ context.Context, stepID string, attempt, run int64) (Values, error) {
	return storeRead(&s.reads, s.err, s.params, stepID)
}

// storeRead counts a read of a fake store's item for stepID and answers
// with the store's error when it has one, else with the item in items.
func storeRead[V any](reads *int, err error, items map[string]V, stepID string) (V, error) {
	*reads++
	if err != nil {
		var none V
		return none, err
	}
	return items[stepID], nil
}

// TestOffloadedParamsAreReadWhenNeeded: a settled step's params and
// outputs leave the run's state (Offload); a later step's param and an edge
// condition that use them read them through WithStepParams, once per
// decision, and decide as they would with the params in the state. A read
// that fails fails the decision, never the step; a missing reader too.
func TestOffloadedParamsAreReadWhenNeeded(t *testing.T) {
	ctx := context.Background()
	// a (Http) -> w (Http) -> c (never); a -> c when a's "n" (an output
	// overriding its param) > 1; c's param reads it too. c is decided once
	// w ends, after a settled.
	wf := &model.Workflow{ID: "off", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepHTTP, RetryPolicy: noRetries(),
			Params:     params("n", literal(model.TypeLong, int64(0))),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "w", Condition: "true"}, {StepID: "c", Condition: "n > 1"}}}},
		{Kind: model.KindStep, ID: "w", Type: model.StepHTTP, RetryPolicy: noRetries(),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "c", Condition: "false"}}}},
		{Kind: model.KindStep, ID: "c", Type: model.StepNoOp,
			Params: params("copy", expr(model.TypeLong, "params.getFromStep('a', 'n') * 10"))},
	}}
	g, started := startRun(t, wf)
	aDone, err := Decide(ctx, g, started.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeSucceeded, Outputs: map[string]any{"n": int64(4)}}, t0)
	require.NoError(t, err)
	require.Equal(t, int64(4), aDone.State.Step("a").Params["n"])

	off := Offload(aDone.State)
	require.True(t, off.Step("a").Offloaded)
	assert.Nil(t, off.Step("a").Params)
	assert.Nil(t, off.Step("a").Outputs)
	assert.False(t, off.Step("w").Offloaded, "a running step keeps its params")
	assert.NotNil(t, off.Step("w").Params)
	assert.NotNil(t, aDone.State.Step("a").Params, "Offload copies")

	wDone := StepFinished{StepID: "w", Attempt: 1, Outcome: OutcomeSucceeded}
	want, err := Decide(ctx, g, aDone.State, wDone, t0)
	require.NoError(t, err)
	require.Equal(t, model.StepSucceeded, want.State.Step("c").Status)
	require.Equal(t, int64(40), want.State.Step("c").Params["copy"])

	store := &attemptStore{params: map[string]Values{"a": aDone.State.Step("a").Params}}
	got, err := Decide(ctx, g, off, wDone, t0, WithStepParams(store))
	require.NoError(t, err)
	assert.Equal(t, want.State.Step("c").Status, got.State.Step("c").Status)
	assert.Equal(t, int64(40), got.State.Step("c").Params["copy"])
	assert.Equal(t, 1, store.reads, "read once for the condition and the param")

	failing := &attemptStore{err: errors.New("throttled")}
	_, err = Decide(ctx, g, off, wDone, t0, WithStepParams(failing))
	require.ErrorContains(t, err, "throttled")
	_, err = Decide(ctx, g, off, wDone, t0)
	require.ErrorContains(t, err, "no reader")
}

// loopStore plays the loop params items as well as the attempt items.
type loopStore struct {
	attemptStore
	loops     map[string]map[string]any
	loopReads int
}

func (s *loopStore) LoopParams(_ context.Context, stepID string, attempt, run int64) (map[string]any, error) {
	return storeRead(&s.loopReads, s.err, s.loops, stepID)
}

// TestLoopParamsLeaveTheState: a running foreach step's loop params past
// OffloadLoopElements values leave the stored state (Offload), and the
// decisions that launch its iterations read them through the reader, with
// their exact types (a DOUBLE_ARRAY of whole numbers stays DOUBLE); small
// ones stay. A read that fails fails the decision, never the step, and so
// does a reader that cannot read loop params.
func TestLoopParamsLeaveTheState(t *testing.T) {
	ctx := context.Background()
	n := OffloadLoopElements + 36
	g, d := startRun(t, loopWorkflow(n, 2, ""))
	full := d.State
	lp := full.Step("loop").Params[LoopParamsName]
	require.NotNil(t, lp)
	off := Offload(full)
	require.True(t, off.Step("loop").LoopParamsOffloaded)
	assert.NotContains(t, off.Step("loop").Params, LoopParamsName)
	assert.Contains(t, full.Step("loop").Params, LoopParamsName, "Offload copies")

	ended := ChildEnded{StepID: "loop", Attempt: 1, Index: 0, Status: model.WorkflowSucceeded}
	want, err := Decide(ctx, g, full, ended, t0)
	require.NoError(t, err)
	reader := &loopStore{loops: map[string]map[string]any{"loop": lp.(map[string]any)}}
	got, err := Decide(ctx, g, off, ended, t0, WithStepParams(reader))
	require.NoError(t, err)
	assert.Equal(t, started(want), started(got))
	assert.Equal(t, []int64{2}, started(got))
	assert.Equal(t, 1, reader.loopReads)
	for _, c := range got.Commands {
		if sc, ok := c.(StartChild); ok {
			assert.Equal(t, int64(2), sc.Params["i"])
		}
	}

	_, err = Decide(ctx, g, off, ended, t0, WithStepParams(&loopStore{attemptStore: attemptStore{err: errors.New("throttled")}}))
	require.ErrorContains(t, err, "throttled")
	_, err = Decide(ctx, g, off, ended, t0, WithStepParams(&attemptStore{}))
	require.ErrorContains(t, err, "no reader")

	// Exact types: whole doubles stay DOUBLE.
	doubles := off.Clone()
	reader.loops["loop"] = map[string]any{"i": make([]float64, n)}
	for i := range n {
		reader.loops["loop"]["i"].([]float64)[i] = float64(i)
	}
	got, err = Decide(ctx, g, doubles, ended, t0, WithStepParams(reader))
	require.NoError(t, err)
	for _, c := range got.Commands {
		if sc, ok := c.(StartChild); ok {
			assert.Equal(t, float64(2), sc.Params["i"])
		}
	}

	// A small loop keeps its params in the state.
	small, err := Compile(loopWorkflow(OffloadLoopElements, 2, ""), newEvaluator(t))
	require.NoError(t, err)
	d, err = Decide(ctx, small, newInstance(small), StartRun{}, t0)
	require.NoError(t, err)
	assert.False(t, Offload(d.State).Step("loop").LoopParamsOffloaded)
	assert.Contains(t, Offload(d.State).Step("loop").Params, LoopParamsName)
}
