package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// callbackWorkflow is a Callback step "a" (heartbeat_timeout hb when not
// nil) followed by a NoOp step "b".
func callbackWorkflow(t *testing.T, hb any, rp *model.RetryPolicy) *Graph {
	t.Helper()
	a := model.Step{Kind: model.KindStep, ID: "a", Type: model.StepCallback, RetryPolicy: rp}
	if hb != nil {
		typ := model.TypeString
		if _, ok := hb.(int64); ok {
			typ = model.TypeLong
		}
		a.Params = params(ParamHeartbeatTimeout, literal(typ, hb))
	}
	a.Transition.Successors = []model.Successor{{StepID: "b", Condition: "true"}}
	wf := &model.Workflow{ID: "cb", Steps: []model.Step{a, {Kind: model.KindStep, ID: "b", Type: model.StepNoOp}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	return g
}

func heartbeatTimers(cmds []Command) []StartTimer {
	var out []StartTimer
	for _, c := range cmds {
		if t, ok := c.(StartTimer); ok && t.Purpose == PurposeHeartbeat {
			out = append(out, t)
		}
	}
	return out
}

func TestTaskHeartbeatsKeepAWaitingStepUntilTheyStop(t *testing.T) {
	ctx := context.Background()
	g := callbackWorkflow(t, "5m", nil)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	require.Equal(t, model.StepRunning, d.State.Step("a").Status)
	assert.Empty(t, heartbeatTimers(d.Commands), "the check starts when the worker hands the step over")

	d, err = Decide(ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 1, At: t0.Add(time.Second).UnixMilli(), Target: "sqs q"}, t0.Add(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Second).UnixMilli(), d.State.Step("a").WaitingSince)
	assert.Equal(t, []StartTimer{{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat, FireAt: t0.Add(time.Second + 5*time.Minute).UTC()}}, heartbeatTimers(d.Commands))
	require.NotEmpty(t, d.Timeline)
	assert.Equal(t, "waiting for its task token (sent to sqs q)", d.Timeline[len(d.Timeline)-1].Message)

	// A duplicate report changes nothing.
	assertUnchanged(t, ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 1, At: t0.Add(3 * time.Second).UnixMilli()}, t0.Add(4*time.Second))

	// A heartbeat at 4m moves the deadline: the check at 5m01s arms
	// another for 9m.
	d, err = Decide(ctx, g, d.State, TaskHeartbeat{StepID: "a", Attempt: 1, At: t0.Add(4 * time.Minute).UnixMilli()}, t0.Add(4*time.Minute))
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat}, t0.Add(time.Second+5*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.StepRunning, d.State.Step("a").Status)
	assert.Equal(t, []StartTimer{{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat, FireAt: t0.Add(9 * time.Minute).UTC()}}, heartbeatTimers(d.Commands))

	// No heartbeat since: the attempt times out (no timeout retries by
	// default) and the run fails.
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat}, t0.Add(9*time.Minute))
	require.NoError(t, err)
	a := d.State.Step("a")
	assert.Equal(t, model.StepTimedOut, a.Status)
	assert.Contains(t, a.Message, "no heartbeat for 300s (heartbeat_timeout)")
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
}

func TestHeartbeatTimeoutIsRetriedAsATimeout(t *testing.T) {
	ctx := context.Background()
	rp := &model.RetryPolicy{TimeoutRetryLimit: pl(1), Backoff: &model.Backoff{Type: model.FixedBackoff, TimeoutRetryBackoffInSecs: pl(1)}}
	g := callbackWorkflow(t, int64(60), rp)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 1, At: t0.UnixMilli()}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat}, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, model.StepTimeoutFailed, d.State.Step("a").Status)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeRetry}, t0.Add(61*time.Second))
	require.NoError(t, err)
	a := d.State.Step("a")
	require.Equal(t, int64(2), a.Attempt)
	assert.Zero(t, a.WaitingSince, "a new attempt waits anew")
	// The second attempt ends through its token: its outputs reach b.
	d, err = Decide(ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 2, At: t0.Add(62 * time.Second).UnixMilli()}, t0.Add(62*time.Second))
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 2, Outcome: OutcomeSucceeded, Outputs: map[string]any{"rows": int64(7)}}, t0.Add(70*time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
	assert.Equal(t, int64(7), d.State.Step("a").Outputs["rows"])
	// The first attempt's late check changes nothing.
	assertUnchanged(t, ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat}, t0.Add(2*time.Minute))
}

func TestAWaitingStepIsNotSentToAWorkerAgain(t *testing.T) {
	ctx := context.Background()
	g := callbackWorkflow(t, "90s", nil)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	st := d.State
	cmds, err := Awaited(ctx, g, st, t0)
	require.NoError(t, err)
	assert.Contains(t, cmds, Command(RunStep{StepID: "a", Attempt: 1, StepKind: model.KindStep, StepType: model.StepCallback, Params: st.Step("a").Params}))

	d, err = Decide(ctx, g, st, TaskWaiting{StepID: "a", Attempt: 1, At: t0.UnixMilli()}, t0)
	require.NoError(t, err)
	cmds, err = Awaited(ctx, g, d.State, t0)
	require.NoError(t, err)
	for _, c := range cmds {
		_, run := c.(RunStep)
		assert.False(t, run, "a waiting attempt is not re-driven to a worker: %#v", c)
	}
	assert.Contains(t, cmds, Command(StartTimer{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat, FireAt: t0.Add(90 * time.Second).UTC()}))
}

func TestHeartbeatTimeoutParam(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want time.Duration
		err  string
	}{
		{v: int64(30), want: 30 * time.Second},
		{v: "5m", want: 5 * time.Minute},
		{v: 1.5, want: 1500 * time.Millisecond},
		{v: "0", err: "outside"},
		{v: int64(-1), err: "outside"},
		{v: "soon", err: "heartbeat_timeout"},
		{v: true, err: "bool is not a duration"},
		{v: "121d", err: "outside"},
	} {
		got, ok, err := HeartbeatTimeout(Values{ParamHeartbeatTimeout: tc.v})
		assert.True(t, ok, "%v", tc.v)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.v)
			continue
		}
		require.NoError(t, err, "%v", tc.v)
		assert.Equal(t, tc.want, got, "%v", tc.v)
	}
	_, ok, err := HeartbeatTimeout(Values{})
	assert.False(t, ok)
	assert.NoError(t, err)

	// A bad value fails the step as it launches.
	ctx := context.Background()
	g := callbackWorkflow(t, "soon", nil)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("a").Status)
	assert.Contains(t, d.State.Step("a").Message, "param heartbeat_timeout")
}

func cancels(cmds []Command) []CancelJob { return commandsOf[CancelJob](cmds) }

func TestAJobIsCancelledWhenItsAttemptEndsOtherwise(t *testing.T) {
	ctx := context.Background()
	g := callbackWorkflow(t, "60s", nil)
	running := func(t *testing.T) *Instance {
		t.Helper()
		d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
		require.NoError(t, err)
		d, err = Decide(ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 1, At: t0.UnixMilli(), Target: "ECS task arn:t", Job: "ecs:arn:t"}, t0)
		require.NoError(t, err)
		require.Equal(t, "ecs:arn:t", d.State.Step("a").Job)
		assert.Equal(t, "running as ECS task arn:t", d.Timeline[len(d.Timeline)-1].Message)
		return d.State
	}

	t.Run("stopped", func(t *testing.T) {
		d, err := Decide(ctx, g, running(t), Action{Action: "stop", StepID: "a"}, t0.Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, []CancelJob{{StepID: "a", Attempt: 1, StepType: model.StepCallback, Job: "ecs:arn:t", Reason: d.State.Step("a").Message}}, cancels(d.Commands))
		assert.Empty(t, d.State.Step("a").Job)
	})
	t.Run("heartbeat timeout", func(t *testing.T) {
		d, err := Decide(ctx, g, running(t), TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeHeartbeat}, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Len(t, cancels(d.Commands), 1)
	})
	t.Run("run killed", func(t *testing.T) {
		d, err := Decide(ctx, g, running(t), Action{Action: "kill"}, t0.Add(time.Second))
		require.NoError(t, err)
		require.Len(t, cancels(d.Commands), 1)
		assert.Equal(t, model.WorkflowFailed, d.State.Status)
	})
	t.Run("ended by the job", func(t *testing.T) {
		d, err := Decide(ctx, g, running(t), StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeUserError, Message: "exit code 1"}, t0.Add(time.Second))
		require.NoError(t, err)
		assert.Empty(t, cancels(d.Commands))
		assert.Empty(t, d.State.Step("a").Job)
	})
}

func TestAJobStartedForAnEndedAttemptIsCancelled(t *testing.T) {
	ctx := context.Background()
	g := callbackWorkflow(t, nil, nil)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, Action{Action: "stop"}, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, model.WorkflowStopped, d.State.Status)
	// The worker's hand-over arrives after the stop.
	d, err = Decide(ctx, g, d.State, TaskWaiting{StepID: "a", Attempt: 1, At: t0.UnixMilli(), Job: "ecs:arn:t"}, t0.Add(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []CancelJob{{StepID: "a", Attempt: 1, StepType: model.StepCallback, Job: "ecs:arn:t",
		Reason: "its step attempt ended before the job started"}}, cancels(d.Commands))
}
