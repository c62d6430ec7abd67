package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// TestEndingIsBoundedPerDecision: ending a run with 120 steps in flight
// touches at most WithMaxEnds steps per decision and goes on through
// Continue; events arriving meanwhile start nothing; the run ends once every
// step has.
func TestEndingIsBoundedPerDecision(t *testing.T) {
	const n, maxEnds = 120, 25
	ctx := context.Background()
	// "bad" (an Http step that fails FAIL_IMMEDIATELY) first, so it runs.
	wf := &model.Workflow{ID: "wide", Timeout: &model.ParsableDuration{Seconds: 600}, Steps: []model.Step{
		{Kind: model.KindStep, ID: "bad", Type: model.StepHTTP, FailureMode: model.FailImmediately,
			RetryPolicy: &model.RetryPolicy{ErrorRetryLimit: pl(0), PlatformRetryLimit: pl(0)}},
	}}
	for i := 0; i < n; i++ {
		wf.Steps = append(wf.Steps, sleepy(fmt.Sprintf("s%03d", i), 3600, nil, nil))
	}
	wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: "after", Type: model.StepNoOp})
	wf.Steps[1].Transition.Successors = []model.Successor{{StepID: "after", Condition: "true"}}
	g, started := startRun(t, wf)
	require.Equal(t, model.StepRunning, started.State.Step("s000").Status)
	require.Equal(t, model.StepRunning, started.State.Step("bad").Status)
	require.Equal(t, model.StepWaitingForPermits, started.State.Step("s119").Status, "past instance_step_concurrency, still in flight")

	for _, tc := range []struct {
		name      string
		ev        Event
		step      model.StepStatus
		run       model.WorkflowStatus
		wantTouch int // steps ended in all; "bad" is one of them for FAIL_IMMEDIATELY
	}{
		{"kill", Action{Action: "kill", Principal: "arn:aws:iam::1:user/ops"}, model.StepFatallyFailed, model.WorkflowFailed, n + 1},
		{"stop", Action{Action: "stop"}, model.StepStopped, model.WorkflowStopped, n + 1},
		{"workflow timeout", TimerFired{Purpose: PurposeWorkflowTimeout}, model.StepTimedOut, model.WorkflowTimedOut, n + 1},
		{"FAIL_IMMEDIATELY", StepFinished{StepID: "bad", Attempt: 1, Outcome: OutcomeFatalError}, model.StepStopped, model.WorkflowFailed, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(time.Minute)
			d, err := Decide(ctx, g, started.State, tc.ev, now, WithMaxEnds(maxEnds))
			require.NoError(t, err)
			decisions := 1
			for d.Continue {
				touched := map[string]bool{}
				for _, tr := range d.Transitions {
					if tr.StepID != "" {
						touched[tr.StepID] = true
					}
				}
				require.LessOrEqual(t, len(touched), maxEnds+1, "steps touched by one decision")
				assert.Equal(t, model.WorkflowInProgress, d.State.Status)
				require.NotNil(t, d.State.Ending)
				// A step finishing meanwhile starts nothing after it.
				d, err = Decide(ctx, g, d.State, StepFinished{StepID: "s000", Attempt: 1, Outcome: OutcomeSucceeded}, now, WithMaxEnds(maxEnds))
				require.NoError(t, err)
				decisions++
				if d.Continue {
					d, err = Decide(ctx, g, d.State, Continue{}, now, WithMaxEnds(maxEnds))
					require.NoError(t, err)
					decisions++
				}
			}
			assert.Equal(t, tc.run, d.State.Status)
			assert.Nil(t, d.State.Ending)
			assert.Contains(t, d.Commands, Command(InstanceDone{Status: tc.run}))
			for i := 0; i < n; i++ {
				assert.Equal(t, tc.step, d.State.Step(fmt.Sprintf("s%03d", i)).Status)
			}
			assert.Equal(t, model.StepNotCreated, d.State.Step("after").Status, "nothing starts while the run ends")
			assert.GreaterOrEqual(t, decisions, tc.wantTouch/maxEnds)
			if tc.name == "kill" {
				assert.Equal(t, "workflow instance failed by a user action of arn:aws:iam::1:user/ops", d.State.Step("s042").Message)
			}
		})
	}
}

// TestAbortFailsTheRunAndDropsItsData: Abort (the store cannot hold the
// run's state) ends the steps in flight, fails the run with the reason and
// drops the evaluated params and outputs that made the state too large.
func TestAbortFailsTheRunAndDropsItsData(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "abort", Params: params("w", literal(model.TypeString, "wp")), Steps: []model.Step{
		{Kind: model.KindStep, ID: "done", Type: model.StepNoOp, Params: params("p", literal(model.TypeString, "x"))},
		sleepy("nap", 3600, nil, nil),
	}}
	g, d := startRun(t, wf)
	var err error
	require.NotNil(t, d.State.Step("done").Params)
	d, err = Decide(ctx, g, d.State, Abort{Reason: "the run state item would be 512000 bytes"}, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	assert.Equal(t, "the run cannot go on: the run state item would be 512000 bytes", d.State.Message)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("nap").Status)
	assert.Equal(t, model.StepSucceeded, d.State.Step("done").Status)
	assert.Nil(t, d.State.Params)
	assert.Nil(t, d.State.Step("done").Params)
	assertUnchanged(t, ctx, g, d.State, Abort{Reason: "again"}, t0.Add(2*time.Second), "an ended run ignores Abort")
	// Abort round-trips through the inbox encoding.
	raw, err := json.Marshal(Abort{Reason: "r"})
	require.NoError(t, err)
	ev, err := UnmarshalEvent(raw)
	require.NoError(t, err)
	assert.Equal(t, Abort{Reason: "r"}, ev)
}

// TestOutputsCap: a step reporting outputs past MaxStepOutputsBytes fails.
func TestOutputsCap(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, &model.Workflow{ID: "out", Steps: []model.Step{{Kind: model.KindStep, ID: "h", Type: model.StepHTTP}}})
	var err error
	big := map[string]any{"blob": strings.Repeat("x", MaxStepOutputsBytes)}
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "h", Attempt: 1, Outcome: OutcomeSucceeded, Outputs: big}, t0)
	require.NoError(t, err)
	h := d.State.Step("h")
	assert.Equal(t, model.StepFatallyFailed, h.Status)
	assert.Contains(t, h.Message, "over the limit of 262144 bytes per step")
	assert.NoError(t, CheckOutputs(map[string]any{"small": "ok"}))
}
