package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func sleepy(id string, secs int64, timeout *model.ParsableDuration, rp *model.RetryPolicy) model.Step {
	return model.Step{Kind: model.KindStep, ID: id, Type: model.StepSleep, Timeout: timeout, RetryPolicy: rp,
		Params: params("sleep_seconds", literal(model.TypeLong, secs))}
}

func TestStepTimeoutRetriesThenTimesOut(t *testing.T) {
	ctx := context.Background()
	rp := &model.RetryPolicy{TimeoutRetryLimit: pl(1), Backoff: &model.Backoff{Type: model.FixedBackoff, TimeoutRetryBackoffInSecs: pl(5)}}
	wf := &model.Workflow{ID: "to", Steps: []model.Step{sleepy("a", 600, &model.ParsableDuration{Expr: "${limit}s"}, rp)}}
	wf.Params = params("limit", literal(model.TypeLong, int64(30)))
	g, d := startRun(t, wf)
	var err error
	// The sleep timer and the timeout timer ("${limit}s" = 30s).
	require.Len(t, stepCommands(d.Commands), 2)
	assert.Equal(t, StartTimer{StepID: "a", Attempt: 1, Purpose: PurposeTimeout, FireAt: t0.Add(30 * time.Second).UTC()}, stepCommands(d.Commands)[0])

	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeTimeout}, t0.Add(30*time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.StepTimeoutFailed, d.State.Step("a").Status)
	retry := d.Commands[0].(StartTimer)
	assert.Equal(t, PurposeRetry, retry.Purpose)
	assert.Equal(t, t0.Add(35*time.Second).UTC(), retry.FireAt)
	// The first attempt's own sleep timer arriving later changes nothing.
	assertUnchanged(t, ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Hour))

	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeRetry}, retry.FireAt)
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.State.Step("a").Attempt)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 2, Purpose: PurposeTimeout}, retry.FireAt.Add(30*time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.StepTimedOut, d.State.Step("a").Status)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
}

func TestTimeoutAfterSuccessIsIgnored(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "to", Steps: []model.Step{sleepy("a", 1, &model.ParsableDuration{Seconds: 10}, nil)}}
	g, d := startRun(t, wf)
	var err error
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, model.WorkflowSucceeded, d.State.Status)
	assertUnchanged(t, ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeTimeout}, t0.Add(10*time.Second))
}

func TestWorkflowTimeout(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "wto", Timeout: &model.ParsableDuration{Seconds: 100}, Steps: []model.Step{
		sleepy("a", 600, nil, nil),
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
	}}
	wf.Steps[0].Transition.Successors = []model.Successor{{StepID: "c", Condition: "true"}}
	wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: "c", Type: model.StepNoOp})
	g, d := startRun(t, wf)
	var err error
	assert.Contains(t, d.Commands, Command(StartTimer{Purpose: PurposeWorkflowTimeout, FireAt: t0.Add(100 * time.Second).UTC()}))
	d, err = Decide(ctx, g, d.State, TimerFired{Purpose: PurposeWorkflowTimeout}, t0.Add(100*time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowTimedOut, d.State.Status)
	assert.Equal(t, model.StepTimedOut, d.State.Step("a").Status, "Maestro ends the steps in flight TIMED_OUT")
	assert.Equal(t, model.StepSucceeded, d.State.Step("b").Status)
	assert.Equal(t, model.StepNotCreated, d.State.Step("c").Status)
	assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowTimedOut}}, d.Commands)
	// Firing again (a duplicate delivery) changes nothing.
	assertUnchanged(t, ctx, g, d.State, TimerFired{Purpose: PurposeWorkflowTimeout}, t0.Add(101*time.Second))
}

func TestBadTimeoutFailsTheStep(t *testing.T) {
	wf := &model.Workflow{ID: "to", Steps: []model.Step{sleepy("a", 1, &model.ParsableDuration{Expr: "${missing}"}, nil)}}
	_, d := startRun(t, wf)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("a").Status)
	assert.Contains(t, d.State.Step("a").Message, "missing")
}

func TestDefaultTimeouts(t *testing.T) {
	ctx := context.Background()
	timers := func(cmds []Command) map[TimerPurpose]time.Time {
		out := map[TimerPurpose]time.Time{}
		for _, c := range cmds {
			if st, ok := c.(StartTimer); ok {
				out[st.Purpose] = st.FireAt
			}
		}
		return out
	}
	httpStep := model.Step{Kind: model.KindStep, ID: "call", Type: model.StepHTTP}

	// No timeouts: the run gets the 10-day default, which bounds the step
	// too, so the step arms no timer of its own.
	g, d := startRun(t, &model.Workflow{ID: "d", Steps: []model.Step{httpStep}})
	var err error
	got := timers(d.Commands)
	assert.Equal(t, map[TimerPurpose]time.Time{PurposeWorkflowTimeout: t0.Add(model.DefaultTimeout).UTC()}, got)
	assert.Equal(t, t0.Add(model.DefaultTimeout).UnixMilli(), d.State.TimeoutAt)

	// A 120-day workflow: a step without a timeout times out after 10 days.
	wf := &model.Workflow{ID: "d", Timeout: &model.ParsableDuration{Seconds: int64(model.MaxTimeout / time.Second)}, Steps: []model.Step{httpStep}}
	g, err = Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err = Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	got = timers(d.Commands)
	assert.Equal(t, t0.Add(model.MaxTimeout).UTC(), got[PurposeWorkflowTimeout])
	assert.Equal(t, t0.Add(model.DefaultTimeout).UTC(), got[PurposeTimeout])

	// A run that ends in its first decision needs no timer at all.
	g, err = Compile(chain(2, model.StepNoOp), newEvaluator(t))
	require.NoError(t, err)
	d, err = Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Empty(t, timers(d.Commands))
}

// TestIterationsArmNoTimerTheirParentsDeadlineMakesMoot: an iteration
// whose deadline is not earlier than its parent's arms no workflow-timeout
// timer in its first decision, and the sweeper's list of what it awaits
// (Awaited) names none; one whose deadline comes first, a subworkflow's
// instance, and a run without a parent arm theirs.
func TestIterationsArmNoTimerTheirParentsDeadlineMakesMoot(t *testing.T) {
	ctx := context.Background()
	tenDays := t0.Add(model.DefaultTimeout).UnixMilli()
	for _, tc := range []struct {
		name   string
		parent *ParentRef
		want   bool
	}{
		{"no parent", nil, true},
		{"an iteration of a parent with the default timeout, started before it", &ParentRef{Deadline: tenDays - 1000}, false},
		{"an iteration whose deadline is its parent's", &ParentRef{Deadline: tenDays}, false},
		{"an iteration of a parent with a longer timeout", &ParentRef{Deadline: tenDays + 1000}, true},
		{"an iteration started before deadlines were kept", &ParentRef{}, true},
		{"a subworkflow's instance", &ParentRef{Subworkflow: true, Deadline: tenDays - 1000}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := &model.Workflow{ID: "it", Steps: []model.Step{{Kind: model.KindStep, ID: "call", Type: model.StepHTTP}}}
			g, err := Compile(wf, newEvaluator(t))
			require.NoError(t, err)
			st := newInstance(g)
			if tc.parent != nil {
				p := *tc.parent
				p.WorkflowID, p.InstanceID, p.RunID, p.StepID, p.Attempt, p.Depth = "parent", 1, 1, "loop", 1, 1
				st.Parent = &p
			}
			d, err := Decide(ctx, g, st, StartRun{}, t0)
			require.NoError(t, err)
			require.Equal(t, tenDays, d.State.TimeoutAt, "the run's deadline is kept either way")
			armed := func(cmds []Command) bool {
				return slices.ContainsFunc(cmds, func(c Command) bool {
					x, ok := c.(StartTimer)
					return ok && x.Purpose == PurposeWorkflowTimeout
				})
			}
			assert.Equal(t, tc.want, armed(d.Commands), "armed in the first decision")
			awaited, err := Awaited(ctx, g, d.State, t0.Add(time.Minute))
			require.NoError(t, err)
			assert.Equal(t, tc.want, armed(awaited), "awaited")
		})
	}
}
