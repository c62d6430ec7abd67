package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// parallelHTTP builds root -> job.1..job.n (Http, tagged) -> join.
func parallelHTTP(n int, tags ...string) *model.Workflow {
	wf := &model.Workflow{ID: "par"}
	root := model.Step{Kind: model.KindStep, ID: "root", Type: model.StepNoOp}
	for i := 1; i <= n; i++ {
		root.Transition.Successors = append(root.Transition.Successors, model.Successor{StepID: fmt.Sprintf("job.%d", i)})
	}
	wf.Steps = append(wf.Steps, root)
	var tl model.TagList
	for _, t := range tags {
		tl = append(tl, model.Tag{Name: t, Plain: true})
	}
	for i := 1; i <= n; i++ {
		wf.Steps = append(wf.Steps, model.Step{
			Kind: model.KindStep, ID: fmt.Sprintf("job.%d", i), Type: model.StepHTTP, Tags: tl, RetryPolicy: noRetries(),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "join"}}},
		})
	}
	wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: "join", Type: model.StepNoOp})
	return wf
}

// countingPermits is an in-memory Permits: tag -> limit, with holders and
// waiters, as the store keeps them.
type countingPermits struct {
	limits  map[string]int
	holders map[string]map[string]bool
	waiters map[string]map[string]bool
	peak    map[string]int
}

func newCountingPermits(limits map[string]int) *countingPermits {
	return &countingPermits{limits: limits, holders: map[string]map[string]bool{},
		waiters: map[string]map[string]bool{}, peak: map[string]int{}}
}

func (p *countingPermits) Acquire(req PermitRequest) PermitAnswer {
	tags, ok := p.acquire(req)
	return PermitAnswer{Tags: tags, OK: ok}
}

func (p *countingPermits) acquire(req PermitRequest) ([]string, bool) {
	key := fmt.Sprintf("%s#%d", req.StepID, req.Attempt)
	var limited, full []string
	for _, t := range req.Tags {
		limit, ok := p.limits[t]
		if !ok {
			continue
		}
		limited = append(limited, t)
		if len(p.holders[t]) >= limit {
			full = append(full, t)
		}
	}
	if len(full) > 0 {
		for _, t := range full {
			if p.waiters[t] == nil {
				p.waiters[t] = map[string]bool{}
			}
			p.waiters[t][key] = true
		}
		return full, false
	}
	for _, t := range limited {
		if p.holders[t] == nil {
			p.holders[t] = map[string]bool{}
		}
		p.holders[t][key] = true
		p.peak[t] = max(p.peak[t], len(p.holders[t]))
	}
	return limited, true
}

func (p *countingPermits) Release(stepID string, attempt int64, tags []string, held bool) {
	key := fmt.Sprintf("%s#%d", stepID, attempt)
	for _, t := range tags {
		if held {
			delete(p.holders[t], key)
		} else {
			delete(p.waiters[t], key)
		}
	}
}

func statusesOf(st *Instance, status model.StepStatus) []string {
	var out []string
	for _, s := range st.Steps {
		if s.Status == status {
			out = append(out, s.StepID)
		}
	}
	return out
}

func TestTagPermitsBoundRunningSteps(t *testing.T) {
	ctx := context.Background()
	p := newCountingPermits(map[string]int{"db": 2})
	g, d := startRun(t, parallelHTTP(6, "db"), WithPermits(p))
	var err error
	st := d.State
	assert.Equal(t, []string{"job.1", "job.2"}, statusesOf(st, model.StepRunning))
	assert.Equal(t, []string{"job.3", "job.4", "job.5", "job.6"}, statusesOf(st, model.StepWaitingForPermits))
	assert.Equal(t, []string{"db"}, st.Step("job.1").Permits)
	assert.Equal(t, []string{"db"}, st.Step("job.3").Permits, "a waiting step names what it waits on")
	assert.Len(t, p.waiters["db"], 4)

	// Each finish frees a permit for the next waiting step, in definition
	// order; never more than 2 run.
	for round := 0; round < 6; round++ {
		running := statusesOf(st, model.StepRunning)
		require.NotEmpty(t, running, "round %d", round)
		require.LessOrEqual(t, len(running), 2)
		s := st.Step(running[0])
		d, err = Decide(ctx, g, st, StepFinished{StepID: s.StepID, Attempt: s.Attempt, Outcome: OutcomeSucceeded}, t0, WithPermits(p))
		require.NoError(t, err)
		st = d.State
		assert.Empty(t, st.Step(s.StepID).Permits, "a finished step holds nothing")
	}
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	assert.Equal(t, 2, p.peak["db"])
	assert.Empty(t, p.holders["db"])
	assert.Empty(t, p.waiters["db"])
}

func TestStoppingWaitingStepWithdrawsWait(t *testing.T) {
	ctx := context.Background()
	p := newCountingPermits(map[string]int{"db": 1})
	g, d := startRun(t, parallelHTTP(3, "db"), WithPermits(p))
	var err error
	require.Equal(t, model.StepWaitingForPermits, d.State.Step("job.3").Status)
	require.NoError(t, CheckAction(d.State, "job.3", "STOP"))
	d, err = Decide(ctx, g, d.State, Action{StepID: "job.3", Action: "STOP"}, t0, WithPermits(p))
	require.NoError(t, err)
	assert.Equal(t, model.StepStopped, d.State.Step("job.3").Status)
	assert.False(t, p.waiters["db"]["job.3#1"])
	assert.True(t, p.waiters["db"]["job.2#1"])

	// Killing the run releases the held permit and withdraws every wait.
	d, err = Decide(ctx, g, d.State, Action{Action: "KILL"}, t0, WithPermits(p))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	assert.Empty(t, p.holders["db"])
	assert.Empty(t, p.waiters["db"])
}

func TestInstanceStepConcurrency(t *testing.T) {
	ctx := context.Background()
	wf := parallelHTTP(5)
	two := int64(2)
	wf.InstanceStepConcurrency = &two
	g, d := startRun(t, wf)
	var err error
	st := d.State
	assert.Equal(t, []string{"job.1", "job.2"}, statusesOf(st, model.StepRunning))
	assert.Len(t, statusesOf(st, model.StepWaitingForPermits), 3)
	d, err = Decide(ctx, g, st, StepFinished{StepID: "job.2", Attempt: 1, Outcome: OutcomeUserError}, t0)
	require.NoError(t, err)
	assert.Equal(t, []string{"job.1", "job.3"}, statusesOf(d.State, model.StepRunning), "a failed step frees its slot too")
}

func TestBreakpointPausesAndResumes(t *testing.T) {
	ctx := context.Background()
	g, err := Compile(chain(3, model.StepNoOp), newEvaluator(t))
	require.NoError(t, err)
	bps := []Breakpoint{{StepID: "job.2"}}
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, WithBreakpoints(bps))
	require.NoError(t, err)
	st := d.State
	assert.Equal(t, model.StepSucceeded, st.Step("job.1").Status)
	assert.Equal(t, model.StepPaused, st.Step("job.2").Status)
	assert.Equal(t, model.StepNotCreated, st.Step("job.3").Status)
	assert.Equal(t, model.WorkflowInProgress, st.Status)

	// Other events leave it paused, breakpoint or not.
	d, err = Decide(ctx, g, st, Continue{}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.StepPaused, d.State.Step("job.2").Status)

	require.NoError(t, CheckAction(st, "job.2", "RESUME"))
	d, err = Decide(ctx, g, st, Action{StepID: "job.2", Action: "RESUME"}, t0, WithBreakpoints(bps))
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d.State.Step("job.2").Status, "a resumed attempt is not paused again")
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
	var path []string
	for _, tr := range d.Transitions {
		if tr.StepID == "job.2" {
			path = append(path, tr.To)
		}
	}
	assert.Equal(t, []string{"EVALUATING_PARAMS", "STARTING", "RUNNING", "FINISHING", "SUCCEEDED"}, path)

	// RESUME on a step that is not paused is refused with its status.
	err = CheckAction(d.State, "job.2", "RESUME")
	assert.ErrorIs(t, err, ErrActionNotAllowed)
}

func TestBreakpointMatching(t *testing.T) {
	st := &Instance{WorkflowVersion: 3, InstanceID: 7, RunID: 2}
	tests := []struct {
		bp      Breakpoint
		step    string
		attempt int64
		want    bool
	}{
		{Breakpoint{StepID: "a"}, "a", 1, true},
		{Breakpoint{StepID: "a"}, "b", 1, false},
		{Breakpoint{StepID: "a", Version: 3}, "a", 1, true},
		{Breakpoint{StepID: "a", Version: 2}, "a", 1, false},
		{Breakpoint{StepID: "a", Instance: 7, Run: 2}, "a", 1, true},
		{Breakpoint{StepID: "a", Instance: 8}, "a", 1, false},
		{Breakpoint{StepID: "a", Run: 1}, "a", 1, false},
		{Breakpoint{StepID: "a", Attempt: 2}, "a", 2, true},
		{Breakpoint{StepID: "a", Attempt: 2}, "a", 1, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.bp.Matches(st, tc.step, tc.attempt), "%+v on %s#%d", tc.bp, tc.step, tc.attempt)
	}
}

func TestBreakpointOnRetryAttemptOnly(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "r", Steps: []model.Step{{Kind: model.KindStep, ID: "a", Type: model.StepHTTP}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	bps := []Breakpoint{{StepID: "a", Attempt: 2}}
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, WithBreakpoints(bps))
	require.NoError(t, err)
	require.Equal(t, model.StepRunning, d.State.Step("a").Status)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeUserError}, t0, WithBreakpoints(bps))
	require.NoError(t, err)
	at := d.State.Step("a").RetryAt
	require.NotZero(t, at)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeRetry}, time.UnixMilli(at), WithBreakpoints(bps))
	require.NoError(t, err)
	assert.Equal(t, model.StepPaused, d.State.Step("a").Status)
	assert.Equal(t, int64(2), d.State.Step("a").Attempt)
	assert.True(t, slices.Contains(model.AllowedStepActions(model.StepPaused), model.StepActionSkip))
}
