package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func actionGraph(t *testing.T) *Graph {
	t.Helper()
	wf := &model.Workflow{ID: "act", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepHTTP, RetryPolicy: noRetries(),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
		{Kind: model.KindStep, ID: "c", Type: model.StepSleep, Params: params("sleep_seconds", literal(model.TypeLong, int64(60)))},
	}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	return g
}

// TestEveryStepStatusActionPair covers every (step status, step action)
// pair of statuses-actions.txt: CheckAction allows exactly what the table
// allows, and applying an allowed action this runtime supports gives the
// table's result status.
func TestEveryStepStatusActionPair(t *testing.T) {
	ctx := context.Background()
	g := actionGraph(t)
	started, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	pairs := 0
	for _, status := range model.StepStatuses() {
		for _, action := range model.StepActions() {
			if action == model.StepActionTimeOut {
				continue // internal, never a user action
			}
			pairs++
			st := started.State.Clone()
			st.Step("a").Status = status
			err := CheckAction(st, "a", string(action))
			tableAllows := slices.Contains(model.AllowedStepActions(status), action)
			supported := slices.Contains(supportedStepActions, action) && !st.Step("a").settled()
			if action == model.StepActionRestart {
				supported = st.Step("a").settled()
			}
			switch {
			case !tableAllows:
				require.ErrorIs(t, err, ErrActionNotAllowed, "%s on %s", action, status)
				var ae *ActionError
				require.True(t, errors.As(err, &ae))
				assert.Equal(t, string(status), ae.Status)
				assert.Contains(t, err.Error(), string(status))
			case !supported:
				require.ErrorIs(t, err, ErrActionNotSupported, "%s on %s", action, status)
			default:
				require.NoError(t, err, "%s on %s", action, status)
				d, err := Decide(ctx, g, st, Action{StepID: "a", Action: string(action)}, t0)
				require.NoError(t, err)
				if action == model.StepActionRestart {
					// RESTART leads to CREATED: a new attempt, which runs.
					assert.Equal(t, model.StepRunning, d.State.Step("a").Status, "%s on %s", action, status)
					assert.Equal(t, int64(2), d.State.Step("a").Attempt, "%s on %s", action, status)
					continue
				}
				if action == model.StepActionBypassStepDependencies {
					// BYPASS leads to EVALUATING_PARAMS, from which the step
					// goes on and runs.
					assert.Equal(t, model.StepRunning, d.State.Step("a").Status, "%s on %s", action, status)
					continue
				}
				if action == model.StepActionResume {
					// RESUME leads to WAITING_FOR_SIGNALS; a step without
					// signal dependencies goes straight on and runs.
					assert.Equal(t, model.StepRunning, d.State.Step("a").Status, "%s on %s", action, status)
					continue
				}
				assert.Equal(t, model.StepActionResult(action), d.State.Step("a").Status, "%s on %s", action, status)
			}
		}
	}
	assert.Equal(t, len(model.StepStatuses())*(len(model.StepActions())-1), pairs)
}

// TestEveryWorkflowStatusActionPair does the same for instance actions.
func TestEveryWorkflowStatusActionPair(t *testing.T) {
	ctx := context.Background()
	g := actionGraph(t)
	started, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	for _, status := range model.WorkflowStatuses() {
		for _, action := range model.WorkflowActions() {
			st := started.State.Clone()
			st.Status = status
			err := CheckAction(st, "", string(action))
			switch {
			case !slices.Contains(model.AllowedWorkflowActions(status), action):
				require.ErrorIs(t, err, ErrActionNotAllowed, "%s on %s", action, status)
				assert.Contains(t, err.Error(), string(status))
			case !slices.Contains(supportedWorkflowActions, action):
				require.ErrorIs(t, err, ErrActionNotSupported, "%s on %s", action, status)
			default:
				require.NoError(t, err, "%s on %s", action, status)
				d, err := Decide(ctx, g, st, Action{Action: string(action)}, t0)
				require.NoError(t, err)
				assert.Equal(t, model.WorkflowActionResult(action), d.State.Status, "%s on %s", action, status)
			}
		}
	}
}

func TestStopKillSkipEffects(t *testing.T) {
	ctx := context.Background()
	g := actionGraph(t)
	start := func() *Instance {
		d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
		require.NoError(t, err)
		return d.State
	}
	// SKIP: the step counts as run, its successor runs.
	d, err := Decide(ctx, g, start(), Action{StepID: "a", Action: "skip"}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepSkipped, d.State.Step("a").Status)
	assert.Equal(t, model.StepSucceeded, d.State.Step("b").Status)

	// STOP a step: downstream does not run; the run ends STOPPED once the
	// rest finishes.
	d, err = Decide(ctx, g, start(), Action{StepID: "a", Action: "STOP"}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepUnsatisfied, d.State.Step("b").Status)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "c", Attempt: 1, Purpose: PurposeSleep}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowStopped, d.State.Status)

	// KILL the instance: steps in flight FATALLY_FAILED, run FAILED; late
	// results change nothing.
	d, err = Decide(ctx, g, start(), Action{Action: "kill"}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("c").Status)
	assertUnchanged(t, ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeSucceeded}, t0)

	// An action the state no longer allows (a race) is a no-op.
	assertUnchanged(t, ctx, g, d.State, Action{Action: "stop"}, t0)
}
