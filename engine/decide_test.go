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

const (
	succeeded   = model.StepSucceeded
	unsatisfied = model.StepUnsatisfied
)

func TestSamples(t *testing.T) {
	tests := []struct {
		file      string
		runParams model.Params
		want      map[string]model.StepStatus
		// order, when set, is the exact order in which steps must end.
		order []string
		// params checks evaluated step params: step -> name -> value.
		params map[string]map[string]any
	}{
		{
			file: "sample-dag-test-7.json",
			want: map[string]model.StepStatus{
				"job.1": succeeded, "job.2": succeeded, "job.3": succeeded, "job.4": succeeded,
				"job.5": succeeded, "job.6": succeeded, "job.7": succeeded, "job.8": succeeded,
			},
			params: map[string]map[string]any{"job.4": {"sleep_seconds": int64(15), "step_id": "job.4"}},
		},
		{
			file: "sample-dag-test-8.json",
			want: map[string]model.StepStatus{
				"job.1": succeeded, "job.2": succeeded, "job.3": unsatisfied, "job.4": succeeded, "job.5": succeeded,
			},
		},
		{
			file: "sample-conditional-wf.json",
			want: map[string]model.StepStatus{
				"job.1": succeeded, "job.2": succeeded, "job.3": succeeded, "job.4": unsatisfied,
				"job.5": unsatisfied, "job.6": succeeded, "job.7": succeeded,
			},
			params: map[string]map[string]any{"job.7": {"param5": int64(15)}, "job.3": {"param2": int64(15)}},
		},
		{
			file: "fixtures-sample-conditional-wf.json",
			want: map[string]model.StepStatus{
				"job.1": succeeded, "job.2": succeeded, "job.3": succeeded, "job.4": succeeded,
				"job.5": succeeded, "job.6": succeeded, "job.7": succeeded,
			},
		},
		{
			// foo's definition is Maestro's SEL with Joda ("new DateTime(..)"),
			// unchanged.
			file: "sample-dag-test-1.json",
			want: map[string]model.StepStatus{
				"job.1": succeeded, "job.2": succeeded, "job.3": succeeded,
				"job.4": succeeded, "job.5": succeeded, "job.6": succeeded,
			},
		},
		{
			file: "sample-dag-test-3.json",
			want: map[string]model.StepStatus{
				"job1": succeeded, "job.2": succeeded, "job3": succeeded, "job4": succeeded,
			},
			order: []string{"job1", "job3", "job.2", "job4"},
			params: map[string]map[string]any{
				"job.2": {"sleep_seconds": int64(16), "param1": "161", "param2": "15 + 1",
					// Util.dateIntHourToTs(TARGET_RUN_DATE, TARGET_RUN_HOUR, 'UTC', 0, 0)/1000
					"vtts_ts": time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Unix()},
				"job1": {"sleep_seconds": int64(15), "step_attempt_id": int64(1), "workflow_instance_id": int64(1)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			g := loadGraph(t, tc.file)
			r := drive(t, g, newInstance(g), StartRun{RunParams: tc.runParams}, nil)
			assert.Equal(t, model.WorkflowSucceeded, r.state.Status, "instance status (message %q)", r.state.Message)
			assert.Equal(t, tc.want, r.statuses())
			checkEdgeOrder(t, g, r)
			if tc.order != nil {
				assert.Equal(t, tc.order, r.ended)
			}
			for step, want := range tc.params {
				got := r.state.Step(step).Params
				for name, v := range want {
					assert.Equal(t, v, got[name], "%s param %s", step, name)
				}
			}
			for _, s := range r.state.Steps {
				if s.Status == unsatisfied {
					assert.Contains(t, s.Message, "not satisfied", "step %s", s.StepID)
				}
			}
		})
	}
}

func TestConditionalUnsatisfiedMessages(t *testing.T) {
	g := loadGraph(t, "sample-dag-test-8.json")
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	// Only NoOp steps: the whole run is one decision.
	require.Equal(t, model.WorkflowSucceeded, d.State.Status)
	require.Equal(t, []Command{InstanceDone{Status: model.WorkflowSucceeded}}, d.Commands)
	job3 := d.State.Step("job.3")
	assert.Equal(t, `not satisfied: job.1 -> job.3 condition "x > 10" is false`, job3.Message)
	var entry *TimelineEntry
	for i := range d.Timeline {
		if d.Timeline[i].StepID == "job.3" {
			entry = &d.Timeline[i]
		}
	}
	require.NotNil(t, entry)
	assert.Equal(t, string(unsatisfied), entry.Status)
	assert.Equal(t, job3.Message, entry.Message)
}

func TestStepLifecycleTransitions(t *testing.T) {
	g := loadGraph(t, "sample-dag-test-3.json")
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	var got []string
	for i, tr := range d.Transitions {
		assert.Equal(t, int64(i+1), tr.Seq)
		assert.Equal(t, t0.UnixMilli(), tr.Time)
		got = append(got, fmt.Sprintf("%s#%d %s->%s", tr.StepID, tr.Attempt, tr.From, tr.To))
	}
	assert.Equal(t, []string{
		"#0 CREATED->IN_PROGRESS",
		"job1#1 NOT_CREATED->CREATED",
		"job1#1 CREATED->INITIALIZED",
		"job1#1 INITIALIZED->EVALUATING_PARAMS",
		"job1#1 EVALUATING_PARAMS->STARTING",
		"job1#1 STARTING->RUNNING",
	}, got)
	assert.Equal(t, int64(len(d.Transitions)), d.State.Seq)
	require.Len(t, d.Timeline, len(d.Transitions))
	assert.Equal(t, []Command{StartTimer{
		StepID: "job1", Attempt: 1, Purpose: PurposeSleep, FireAt: t0.Add(15 * time.Second),
	}}, stepCommands(d.Commands))
	job1 := d.State.Step("job1")
	assert.Equal(t, t0.UnixMilli(), job1.CreateTime)
	assert.Equal(t, t0.UnixMilli(), job1.StartTime)
	assert.Zero(t, job1.EndTime)
}

func TestDuplicateAndLateEvents(t *testing.T) {
	ctx := context.Background()
	g := loadGraph(t, "sample-dag-test-3.json")
	started, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	st := started.State
	later := t0.Add(15 * time.Second)
	fired, err := Decide(ctx, g, st, TimerFired{StepID: "job1", Attempt: 1, Purpose: PurposeSleep}, later)
	require.NoError(t, err)
	require.True(t, fired.Changed())
	require.Equal(t, succeeded, fired.State.Step("job1").Status)
	require.Equal(t, model.StepRunning, fired.State.Step("job3").Status)

	noops := []struct {
		name string
		st   *Instance
		ev   Event
	}{
		{"timer fired twice", fired.State, TimerFired{StepID: "job1", Attempt: 1, Purpose: PurposeSleep}},
		{"timer for another attempt", fired.State, TimerFired{StepID: "job3", Attempt: 2, Purpose: PurposeSleep}},
		{"timer for a step not started", fired.State, TimerFired{StepID: "job4", Attempt: 1, Purpose: PurposeSleep}},
		{"step finished for a finished attempt", fired.State, StepFinished{StepID: "job1", Attempt: 1, Outcome: OutcomeSucceeded}},
		{"step finished for a future attempt", fired.State, StepFinished{StepID: "job3", Attempt: 2, Outcome: OutcomeUserError}},
		{"second start", fired.State, StartRun{}},
		{"start of a running instance", st, StartRun{Initiator: Initiator{Type: "TIME"}}},
		{"step finished before start", newInstance(g), StepFinished{StepID: "job1", Attempt: 1, Outcome: OutcomeSucceeded}},
		{"timer before start", newInstance(g), TimerFired{StepID: "job1", Attempt: 1, Purpose: PurposeSleep}},
	}
	for _, tc := range noops {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(ctx, g, tc.st, tc.ev, later.Add(time.Minute))
			require.NoError(t, err)
			assert.False(t, d.Changed())
			assert.Empty(t, d.Commands)
			assert.Empty(t, d.Transitions)
			assert.Empty(t, d.Timeline)
			assert.Equal(t, tc.st, d.State)
			assert.NotSame(t, tc.st, d.State)
		})
	}

	// After the end, everything is a no-op.
	r := drive(t, g, newInstance(g), StartRun{}, nil)
	require.Equal(t, model.WorkflowSucceeded, r.state.Status)
	for _, ev := range []Event{
		StartRun{},
		TimerFired{StepID: "job4", Attempt: 1, Purpose: PurposeSleep},
		StepFinished{StepID: "job.2", Attempt: 1, Outcome: OutcomeFatalError},
	} {
		d, err := Decide(ctx, g, r.state, ev, t0.Add(time.Hour))
		require.NoError(t, err)
		assert.False(t, d.Changed(), "%T", ev)
		assert.Equal(t, r.state, d.State)
	}
}

func TestDecideErrors(t *testing.T) {
	ctx := context.Background()
	g := loadGraph(t, "sample-dag-test-3.json")
	started, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	other := loadGraph(t, "sample-dag-test-7.json")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		g    *Graph
		st   *Instance
		ev   Event
		want string
	}{
		{"nil graph", ctx, nil, started.State, StartRun{}, "nil graph"},
		{"nil state", ctx, g, nil, StartRun{}, "nil instance state"},
		{"nil event", ctx, g, started.State, nil, "nil event"},
		{"unknown step", ctx, g, started.State, StepFinished{StepID: "ghost", Attempt: 1, Outcome: OutcomeSucceeded}, `unknown step "ghost"`},
		{"unknown timer purpose", ctx, g, started.State, TimerFired{StepID: "job1", Attempt: 1, Purpose: "alarm"}, `unknown timer purpose "alarm"`},
		{"state of another workflow", ctx, other, started.State, StepFinished{StepID: "job.2", Attempt: 1, Outcome: OutcomeSucceeded}, "state has 4 steps, the definition 8"},
		{"cancelled", cancelled, g, started.State, StartRun{}, "context canceled"},
		{"zero instance", ctx, g, &Instance{}, StartRun{}, `instance status "" is not a workflow status`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decide(tc.ctx, tc.g, tc.st, tc.ev, t0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// A bad outcome for the current attempt is an error too.
	fired, err := Decide(ctx, g, started.State, TimerFired{StepID: "job1", Attempt: 1, Purpose: PurposeSleep}, t0)
	require.NoError(t, err)
	_, err = Decide(ctx, g, fired.State, StepFinished{StepID: "job3", Attempt: 1, Outcome: "MAYBE"}, t0)
	require.ErrorContains(t, err, `unknown outcome "MAYBE"`)
}

func TestDeterminismAndJSONRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"sample-dag-test-3.json", "sample-conditional-wf.json", "sample-kubernetes-output-wf.json"} {
		t.Run(file, func(t *testing.T) {
			g := loadGraph(t, file)
			r := drive(t, g, newInstance(g), StartRun{}, func(c RunStep) StepFinished {
				return StepFinished{StepID: c.StepID, Attempt: c.Attempt, Outcome: OutcomeSucceeded,
					Outputs: map[string]any{"foo": "bar", "n": json.Number("7"), "ratio": 0.5, "list": []any{"a", "b"}}}
			})
			require.NotEmpty(t, r.decisions)
			for i, d := range r.decisions {
				data, err := json.Marshal(d)
				require.NoError(t, err, "decision %d", i)
				var back Decision
				require.NoError(t, json.Unmarshal(data, &back), "decision %d: %s", i, data)
				require.Equal(t, d, &back, "decision %d round trip: %s", i, data)
			}
			data, err := json.Marshal(r.state)
			require.NoError(t, err)
			var back Instance
			require.NoError(t, json.Unmarshal(data, &back))
			require.Equal(t, r.state, &back)
			// Every input state, decoded from its JSON, decides exactly as the
			// original, also when the event went through JSON.
			for i, in := range r.inputs {
				data, err := json.Marshal(in)
				require.NoError(t, err)
				var decoded Instance
				require.NoError(t, json.Unmarshal(data, &decoded))
				evData, err := json.Marshal(r.events[i])
				require.NoError(t, err)
				ev, err := UnmarshalEvent(evData)
				require.NoError(t, err)
				d, err := Decide(ctx, g, &decoded, ev, r.times[i])
				require.NoError(t, err)
				require.Equal(t, r.decisions[i], d, "decision %d from decoded state", i)
			}
		})
	}
}

func TestOutputsOverrideParams(t *testing.T) {
	g := loadGraph(t, "sample-kubernetes-output-wf.json")
	tests := []struct {
		name    string
		outputs map[string]any
		end     model.StepStatus
	}{
		{"output overrides default", map[string]any{"foo": "bar"}, succeeded},
		{"no output keeps default", nil, unsatisfied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := drive(t, g, newInstance(g), StartRun{}, func(c RunStep) StepFinished {
				require.Equal(t, model.StepKubernetes, c.StepType)
				require.Equal(t, "default", c.Params["foo"])
				return StepFinished{StepID: c.StepID, Attempt: c.Attempt, Outcome: OutcomeSucceeded, Outputs: tc.outputs}
			})
			assert.Equal(t, model.WorkflowSucceeded, r.state.Status)
			assert.Equal(t, tc.end, r.state.Step("end").Status)
			if tc.outputs != nil {
				assert.Equal(t, Values{"foo": "bar"}, r.state.Step("job1").Outputs)
				assert.Equal(t, "bar", r.state.Step("job1").Params["foo"])
			}
		})
	}
}

// chain builds a workflow of n steps of the given type, job.1 -> job.2 -> ...
func chain(n int, typ model.StepType) *model.Workflow {
	wf := &model.Workflow{ID: "chain"}
	for i := 1; i <= n; i++ {
		s := model.Step{Kind: model.KindStep, ID: fmt.Sprintf("job.%d", i), Type: typ}
		if i < n {
			s.Transition.Successors = []model.Successor{{StepID: fmt.Sprintf("job.%d", i+1), Condition: "true"}}
		}
		wf.Steps = append(wf.Steps, s)
	}
	return wf
}

// fanOut builds root -> job.1..job.n -> join, every edge conditional on a
// workflow param so that conditions are evaluated.
func fanOut(n int) *model.Workflow {
	wf := &model.Workflow{ID: "fan-out", Params: params("x", literal(model.TypeLong, int64(5)))}
	root := model.Step{Kind: model.KindStep, ID: "root", Type: model.StepNoOp}
	for i := 1; i <= n; i++ {
		root.Transition.Successors = append(root.Transition.Successors, model.Successor{StepID: fmt.Sprintf("job.%d", i), Condition: "x > 3"})
	}
	wf.Steps = append(wf.Steps, root)
	for i := 1; i <= n; i++ {
		wf.Steps = append(wf.Steps, model.Step{
			Kind: model.KindStep, ID: fmt.Sprintf("job.%d", i), Type: model.StepNoOp,
			Params:     params("p", expr(model.TypeLong, "x * 2")),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "join", Condition: "p == 10"}}},
		})
	}
	wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: "join", Type: model.StepNoOp})
	return wf
}

func TestEagerOneDecision(t *testing.T) {
	tests := []struct {
		name  string
		wf    *model.Workflow
		steps int
	}{
		{"100-step NoOp chain", chain(100, model.StepNoOp), 100},
		{"100-wide fan-out and join", fanOut(100), 102},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, d := startRun(t, tc.wf)
			require.Equal(t, model.WorkflowSucceeded, d.State.Status, d.State.Message)
			require.Equal(t, []Command{InstanceDone{Status: model.WorkflowSucceeded}}, d.Commands)
			require.Len(t, d.State.Steps, tc.steps)
			for _, s := range d.State.Steps {
				require.Equal(t, succeeded, s.Status, s.StepID)
			}
			// Instance: CREATED->IN_PROGRESS->SUCCEEDED; each step 7 changes.
			require.Len(t, d.Transitions, 2+7*tc.steps)
			require.Equal(t, int64(2+7*tc.steps), d.State.Seq)
		})
	}
}

func TestSleep(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		params model.Params
		want   time.Duration
		fail   string
	}{
		{"default 3 seconds", model.Params{}, 3 * time.Second, ""},
		{"sleep_seconds literal", params("sleep_seconds", literal(model.TypeLong, int64(42))), 42 * time.Second, ""},
		{"sleep_seconds expression", params("sleep_seconds", expr(model.TypeLong, "6 * 7")), 42 * time.Second, ""},
		{"negative", params("sleep_seconds", literal(model.TypeLong, int64(-1))), 0, "sleep_seconds: -1 is negative"},
		{"not a number", params("sleep_seconds", literal(model.TypeString, "soon")), 0, `sleep_seconds: "soon" is not a whole number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &model.Workflow{ID: "sleepy", Steps: []model.Step{{Kind: model.KindStep, ID: "nap", Type: model.StepSleep, Params: tc.params}}}
			g, d := startRun(t, wf)
			if tc.fail != "" {
				assert.Equal(t, model.StepFatallyFailed, d.State.Step("nap").Status)
				assert.Contains(t, d.State.Step("nap").Message, tc.fail)
				assert.Equal(t, model.WorkflowFailed, d.State.Status)
				assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowFailed}}, d.Commands)
				return
			}
			require.Equal(t, []Command{StartTimer{StepID: "nap", Attempt: 1, Purpose: PurposeSleep, FireAt: t0.Add(tc.want)}}, stepCommands(d.Commands))
			require.Equal(t, model.StepRunning, d.State.Step("nap").Status)
			done, err := Decide(ctx, g, d.State, TimerFired{StepID: "nap", Attempt: 1, Purpose: PurposeSleep}, t0.Add(tc.want))
			require.NoError(t, err)
			assert.Equal(t, succeeded, done.State.Step("nap").Status)
			assert.Equal(t, t0.Add(tc.want).UnixMilli(), done.State.Step("nap").EndTime)
			assert.Equal(t, model.WorkflowSucceeded, done.State.Status)
			assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowSucceeded}}, done.Commands)
		})
	}
}

// failing builds a -> b -> c, a -> d (Http steps), plus e (Http, independent).
func failing() *model.Workflow {
	step := func(id string, succ ...string) model.Step {
		// No retries: these tests are about what a final failure does.
		s := model.Step{Kind: model.KindStep, ID: id, Type: model.StepHTTP, RetryPolicy: noRetries()}
		for _, to := range succ {
			s.Transition.Successors = append(s.Transition.Successors, model.Successor{StepID: to, Condition: "true"})
		}
		return s
	}
	return &model.Workflow{ID: "failing", Steps: []model.Step{step("a", "b", "d"), step("b", "c"), step("c"), step("d"), step("e")}}
}

func TestFailAfterRunning(t *testing.T) {
	ctx := context.Background()
	// Without retries left, user and platform errors end the step
	// FATALLY_FAILED too (issue 4: "retries exhausted -> FATALLY_FAILED").
	outcomes := []struct {
		outcome Outcome
		status  model.StepStatus
		msg     string
	}{
		{OutcomeUserError, model.StepFatallyFailed, "boom (retries exhausted: 0 error, 0 platform)"},
		{OutcomePlatformError, model.StepFatallyFailed, "boom (retries exhausted: 0 error, 0 platform)"},
		{OutcomeFatalError, model.StepFatallyFailed, "boom"},
	}
	for _, tc := range outcomes {
		t.Run(string(tc.outcome), func(t *testing.T) {
			g, d := startRun(t, failing())
			var err error
			require.Len(t, stepCommands(d.Commands), 2) // a and e run
			assert.Equal(t, "a", stepCommands(d.Commands)[0].(RunStep).StepID)
			assert.Equal(t, model.StepHTTP, stepCommands(d.Commands)[0].(RunStep).StepType)
			assert.Equal(t, "e", d.Commands[1].(RunStep).StepID)

			d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: tc.outcome, Message: "boom"}, t0.Add(time.Second))
			require.NoError(t, err)
			st := d.State
			assert.Equal(t, tc.status, st.Step("a").Status)
			assert.Equal(t, tc.msg, st.Step("a").Message)
			for _, id := range []string{"b", "c", "d"} {
				assert.Equal(t, unsatisfied, st.Step(id).Status, id)
				assert.Equal(t, fmt.Sprintf("not run: upstream step \"a\" ended %s", tc.status), st.Step(id).Message)
			}
			// e is still running: the instance waits for it.
			assert.Equal(t, model.StepRunning, st.Step("e").Status)
			assert.Equal(t, model.WorkflowInProgress, st.Status)
			assert.Empty(t, d.Commands)

			d, err = Decide(ctx, g, st, StepFinished{StepID: "e", Attempt: 1, Outcome: OutcomeSucceeded}, t0.Add(2*time.Second))
			require.NoError(t, err)
			assert.Equal(t, succeeded, d.State.Step("e").Status)
			assert.Equal(t, model.WorkflowFailed, d.State.Status)
			assert.Equal(t, fmt.Sprintf("step \"a\" ended %s", tc.status), d.State.Message)
			assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowFailed}}, d.Commands)
			assert.Equal(t, t0.Add(2*time.Second).UnixMilli(), d.State.EndTime)
		})
	}
}

func TestFailureBlocksJoinWithSucceededPredecessor(t *testing.T) {
	// a (Http) and b (NoOp) both lead to c: a's failure makes c UNSATISFIED
	// although b succeeded.
	wf := &model.Workflow{ID: "join", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepHTTP, RetryPolicy: noRetries(), Transition: model.Transition{Successors: []model.Successor{{StepID: "c", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{{StepID: "c", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "c", Type: model.StepNoOp},
	}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	r := drive(t, g, newInstance(g), StartRun{}, func(c RunStep) StepFinished {
		return StepFinished{StepID: c.StepID, Attempt: c.Attempt, Outcome: OutcomeUserError}
	})
	assert.Equal(t, map[string]model.StepStatus{"a": model.StepFatallyFailed, "b": succeeded, "c": unsatisfied}, r.statuses())
	assert.Equal(t, model.WorkflowFailed, r.state.Status)
}

func TestParamEvaluation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		wfParams  model.Params
		runParams model.Params
		step      model.Params
		want      map[string]any
		fail      string // step FATALLY_FAILED message part
	}{
		{
			name:     "workflow params visible, definition order independent",
			wfParams: params("a", literal(model.TypeLong, int64(2)), "b", expr(model.TypeLong, "a * 10")),
			step:     params("c", expr(model.TypeLong, "d + b"), "d", expr(model.TypeLong, "a + 1")),
			want:     map[string]any{"c": int64(23), "d": int64(3)},
		},
		{
			name:      "run params override definition params",
			wfParams:  params("a", literal(model.TypeLong, int64(2)), "b", expr(model.TypeLong, "a * 10")),
			runParams: params("a", literal(model.TypeLong, int64(7))),
			step:      params("c", expr(model.TypeLong, "b")),
			want:      map[string]any{"c": int64(70)},
		},
		{
			name: "default step params and definition params",
			step: params("me", expr(model.TypeString, "step_id + '#' + step_attempt_id"), "inst", expr(model.TypeLong, "workflow_instance_id")),
			want: map[string]any{"me": "only#1", "inst": int64(1), "step_id": "only", "step_attempt_id": int64(1)},
		},
		{
			name: "step params override default step params",
			step: params("step_id", literal(model.TypeString, "custom")),
			want: map[string]any{"step_id": "custom"},
		},
		{
			name: "system params",
			step: params("d", expr(model.TypeString, "TARGET_RUN_DATE"), "h", expr(model.TypeString, "TARGET_RUN_HOUR"), "ts", expr(model.TypeLong, "RUN_TS")),
			want: map[string]any{"d": "20261122", "h": "10", "ts": t0.UnixMilli()},
		},
		{
			name: "derived minus/plus system params (Maestro's default params)",
			step: params(
				"utcMinus", expr(model.TypeLong, "DERIVED_RUN_DATE_UTC_MINUS_ONE"),
				"utcPlus", expr(model.TypeLong, "DERIVED_RUN_DATE_UTC_PLUS_ONE"),
				"utcMinusHour", expr(model.TypeLong, "DERIVED_RUN_DATE_UTC_MINUS_ONE_HOUR"),
				"utcPlusHour", expr(model.TypeLong, "DERIVED_RUN_DATE_UTC_PLUS_ONE_HOUR"),
				"pacificMinus", expr(model.TypeLong, "DERIVED_RUN_DATE_US_PACIFIC_MINUS_ONE"),
				"hourMinus", expr(model.TypeString, "DERIVED_RUN_HOUR_UTC_MINUS_ONE_HOUR"),
				"hourPlus", expr(model.TypeString, "DERIVED_RUN_HOUR_UTC_PLUS_ONE_HOUR"),
			),
			// t0 is 2026-11-22 10:30 UTC: derived 10:00 UTC, 02:00 in Los Angeles.
			want: map[string]any{
				"utcMinus": int64(20261121), "utcPlus": int64(20261123), "utcMinusHour": int64(20261122),
				"utcPlusHour": int64(20261122), "pacificMinus": int64(20261121), "hourMinus": "09", "hourPlus": "11",
			},
		},
		{
			name:     "params.containsKey",
			wfParams: params("x", literal(model.TypeLong, int64(1))),
			step: params(
				"hasX", expr(model.TypeBoolean, "params.containsKey('x')"),
				"hasStepID", expr(model.TypeBoolean, "params.containsKey('step_id')"),
				"hasNothing", expr(model.TypeBoolean, "params.containsKey('nothing_here')"),
				"fallback", expr(model.TypeString, "params.containsKey('opt') ? params.get('opt') : 'default'"),
			),
			want: map[string]any{"hasX": true, "hasStepID": true, "hasNothing": false, "fallback": "default"},
		},
		{
			name: "MAESTRO_STEP_ERROR_RETRIES of the current step",
			step: params("retries", expr(model.TypeLong, "params.getFromStep('MAESTRO_STEP_ERROR_RETRIES')")),
			want: map[string]any{"retries": int64(0)},
		},
		{
			name: "evaluation error fails the step",
			step: params("bad", expr(model.TypeLong, "params.getFromStep('ghost', 'x')")),
			fail: `params.getFromStep: unknown step "ghost"`,
		},
		{
			name: "expression that does not compile fails the step",
			step: params("bad", expr(model.TypeString, "new Thread()")),
			fail: "not available in SEL",
		},
		{
			name: "unknown reference fails the step",
			step: params("bad", literal(model.TypeString, "${nobody}")),
			fail: "nobody",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &model.Workflow{ID: "params", Params: tc.wfParams, Steps: []model.Step{
				{Kind: model.KindStep, ID: "only", Type: model.StepNoOp, Params: tc.step},
			}}
			g, err := Compile(wf, newEvaluator(t))
			require.NoError(t, err)
			d, err := Decide(ctx, g, newInstance(g), StartRun{RunParams: tc.runParams}, t0)
			require.NoError(t, err)
			s := d.State.Step("only")
			if tc.fail != "" {
				assert.Equal(t, model.StepFatallyFailed, s.Status)
				assert.Contains(t, s.Message, tc.fail)
				last := d.Timeline[len(d.Timeline)-2] // before the instance's FAILED entry
				assert.Equal(t, string(model.StepFatallyFailed), last.Status)
				assert.Equal(t, s.Message, last.Message)
				assert.Equal(t, model.WorkflowFailed, d.State.Status)
				return
			}
			require.Equal(t, succeeded, s.Status, s.Message)
			for k, v := range tc.want {
				assert.Equal(t, v, s.Params[k], k)
			}
		})
	}
}

// TestGetFromStepRuntimeFields: params.getFromStep(stepId, name) reads
// another step's MAESTRO_STEP_STATUS and MAESTRO_STEP_END_TIME, as Maestro's.
func TestGetFromStepRuntimeFields(t *testing.T) {
	wf := &model.Workflow{ID: "fields", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{
			{StepID: "b", Condition: "params.getFromStep('a', 'MAESTRO_STEP_STATUS') == 'SUCCEEDED'"},
		}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp, Params: params(
			"aStatus", expr(model.TypeString, "params.getFromStep('a', 'MAESTRO_STEP_STATUS')"),
			"aEnd", expr(model.TypeLong, "params.getFromStep('a', 'MAESTRO_STEP_END_TIME')"),
		)},
		{Kind: model.KindStep, ID: "c", Type: model.StepNoOp, Params: params(
			"bEnd", expr(model.TypeLong, "params.getFromStep('late', 'MAESTRO_STEP_END_TIME')"),
		)},
		{Kind: model.KindStep, ID: "late", Type: model.StepNoOp},
	}}
	wf.Steps[1].Transition.Successors = []model.Successor{{StepID: "late", Condition: "true"}}
	_, d := startRun(t, wf)
	b := d.State.Step("b")
	require.Equal(t, succeeded, b.Status, b.Message)
	assert.Equal(t, "SUCCEEDED", b.Params["aStatus"])
	assert.Equal(t, t0.UnixMilli(), b.Params["aEnd"])
	c := d.State.Step("c")
	assert.Equal(t, model.StepFatallyFailed, c.Status)
	assert.Contains(t, c.Message, `step "late"'s MAESTRO_STEP_END_TIME is not set yet (status NOT_CREATED)`)
}

func TestConditionErrorFailsStep(t *testing.T) {
	// c's condition reads b, which runs after c: the evaluation fails.
	wf := &model.Workflow{ID: "cond-error", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{
			{StepID: "c", Condition: "params.getFromStep('b', 'step_id') == 'b'"},
		}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
		{Kind: model.KindStep, ID: "c", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
	}}
	_, d := startRun(t, wf)
	c := d.State.Step("c")
	assert.Equal(t, model.StepFatallyFailed, c.Status)
	assert.Contains(t, c.Message, `evaluating condition "params.getFromStep('b', 'step_id') == 'b'" of edge a -> c`)
	assert.Contains(t, c.Message, `step "b" has not evaluated its params`)
	assert.Equal(t, unsatisfied, d.State.Step("b").Status)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
}

func TestStepKindsRunOnWorkersAndLoopsStartChildren(t *testing.T) {
	loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(1, 4, 1)"))
	wf := &model.Workflow{ID: "kinds", Params: params("x", literal(model.TypeLong, int64(5))), Steps: []model.Step{
		{Kind: model.KindStep, ID: "nb", Type: model.StepNotebook, SubType: "shell", Params: params("path", literal(model.TypeString, "s3://b/${x}"))},
		{Kind: model.KindForeach, ID: "loop", Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true})},
		{Kind: model.KindSubworkflow, ID: "sub", Params: params("subworkflow_id", literal(model.TypeString, "child"))},
		{Kind: model.KindWhile, ID: "again", Condition: "loop_index < 3"},
		{Kind: model.KindStep, ID: "titus", Type: model.StepTitus},
	}}
	_, d := startRun(t, wf)
	got := map[string]RunStep{}
	var children []StartChild
	var created []CreateLoop
	for _, c := range d.Commands {
		switch x := c.(type) {
		case StartChild:
			children = append(children, x)
		case CreateLoop:
			created = append(created, x)
		}
	}
	// A foreach step runs no worker: it starts its iterations as child runs.
	require.Len(t, created, 1)
	require.Len(t, children, 3)
	for n, c := range children {
		assert.Equal(t, "loop", c.StepID)
		assert.Equal(t, created[0].WorkflowID, c.WorkflowID)
		assert.Equal(t, int64(n), c.Index)
		assert.Equal(t, int64(n), c.Params[LoopIndexName])
		assert.Equal(t, int64(n+1), c.Params["i"])
		assert.Equal(t, int64(5), c.Params["x"])
		assert.Equal(t, ParentRef{WorkflowID: "kinds", InstanceID: 1, RunID: 1, StepID: "loop", Attempt: 1, Index: int64(n), Depth: 1, RootWorkflowID: "kinds", RootInstanceID: 1, Owner: "kinds",
			Deadline: d.State.TimeoutAt}, c.Parent)
	}
	assert.Equal(t, &LoopSummary{WorkflowID: created[0].WorkflowID, Total: 3, Launched: 3, Running: 3, RunningIterations: []int64{1, 2, 3}}, d.State.Step("loop").Loop.Summary())
	var runs []RunStep
	for _, c := range d.Commands {
		if rs, ok := c.(RunStep); ok {
			runs = append(runs, rs)
		}
	}
	require.Len(t, runs, 2)
	for _, rs := range runs {
		got[rs.StepID] = rs
		assert.Equal(t, model.StepRunning, d.State.Step(rs.StepID).Status)
		assert.Equal(t, int64(1), rs.Attempt)
		assert.Equal(t, rs.StepID, rs.Params["step_id"])
	}
	assert.Equal(t, model.StepNotebook, got["nb"].StepType)
	assert.Equal(t, "shell", got["nb"].SubType)
	assert.Equal(t, "s3://b/5", got["nb"].Params["path"])
	assert.Equal(t, map[string]any{"i": []int64{1, 2, 3}}, d.State.Step("loop").Params["loop_params"])
	// A subworkflow step asks for its child instead.
	subs := subworkflowStarts(d)
	require.Len(t, subs, 1)
	assert.Equal(t, "child", subs[0].WorkflowID)
	assert.Equal(t, DefaultSubworkflowVersion, subs[0].Version)
	// A while step runs no worker either; this one has no loop_params, so
	// its condition cannot see loop_index: it fails, naming the problem.
	again := d.State.Step("again")
	assert.Equal(t, model.StepFatallyFailed, again.Status)
	assert.Contains(t, again.Message, "while: ")
	assert.Equal(t, model.StepTitus, got["titus"].StepType)
	assert.Equal(t, model.WorkflowInProgress, d.State.Status)
}

func TestWorkflowParamErrorFailsInstance(t *testing.T) {
	// A SEL param that throws, as sample-dag-test-5's does for a run policy
	// it does not know.
	wf := &model.Workflow{ID: "throws", Params: params("mode", expr(model.TypeString,
		"p = params.getFromInstance('RUN_POLICY'); if (p == 'NOPE') return 'run'; else throw 'Unsupported restart mode: ' + p;")),
		Steps: []model.Step{{Kind: model.KindStep, ID: "only", Type: model.StepNoOp}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	assert.Contains(t, d.State.Message, "evaluating workflow params")
	assert.Contains(t, d.State.Message, "Unsupported restart mode: ")
	assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowFailed}}, d.Commands)
	require.Len(t, d.Transitions, 1)
	assert.Equal(t, Transition{Seq: 1, From: "CREATED", To: "FAILED", Time: t0.UnixMilli()}, d.Transitions[0])
}

func TestStepUUIDDeterministic(t *testing.T) {
	a := stepUUID(testUUID, "job1", 1)
	assert.Equal(t, a, stepUUID(testUUID, "job1", 1))
	assert.NotEqual(t, a, stepUUID(testUUID, "job1", 2))
	assert.NotEqual(t, a, stepUUID(testUUID, "job2", 1))
	assert.NotEqual(t, a, stepUUID(strings.Replace(testUUID, "2f", "3f", 1), "job1", 1))
	assert.Len(t, a, 36)
}

func BenchmarkDecideChain100(b *testing.B) {
	g, err := Compile(chain(100, model.StepNoOp), newEvaluator(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st := &Instance{WorkflowID: "chain", InstanceID: 1, RunID: 1, UUID: testUUID, Status: model.WorkflowCreated}
	b.ReportAllocs()
	for b.Loop() {
		d, err := Decide(ctx, g, st, StartRun{}, t0)
		if err != nil {
			b.Fatal(err)
		}
		if d.State.Status != model.WorkflowSucceeded {
			b.Fatalf("status %s", d.State.Status)
		}
	}
}

func TestConcurrentDecideSharesGraph(t *testing.T) {
	g := loadGraph(t, "sample-dag-test-3.json")
	want, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 20 {
				d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
				if err == nil && !assert.ObjectsAreEqual(want, d) {
					err = fmt.Errorf("concurrent decision differs")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// TestMaxStartsSplitsADecision checks that WithMaxStarts bounds the steps one
// decision starts and that Continue events finish the run with the same end
// state as an unbounded decision.
func TestMaxStartsSplitsADecision(t *testing.T) {
	g, err := Compile(chain(100, model.StepNoOp), newEvaluator(t))
	require.NoError(t, err)
	now := t0
	full, err := Decide(context.Background(), g, newInstance(g), StartRun{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if full.Continue {
		t.Fatal("unbounded decision asked to continue")
	}
	st := newInstance(g)
	var ev Event = StartRun{}
	decisions := 0
	for {
		d, err := Decide(context.Background(), g, st, ev, now, WithMaxStarts(30))
		if err != nil {
			t.Fatal(err)
		}
		decisions++
		started := 0
		for _, tr := range d.Transitions {
			if tr.To == string(model.StepCreated) {
				started++
			}
		}
		if started > 30 {
			t.Fatalf("decision %d started %d steps, more than 30", decisions, started)
		}
		st = d.State
		if !d.Continue {
			break
		}
		ev = Continue{}
		if decisions > 10 {
			t.Fatal("no progress")
		}
	}
	if decisions != 4 {
		t.Fatalf("want 4 decisions of at most 30 starts for 100 steps, got %d", decisions)
	}
	if st.Status != full.State.Status || st.Status != model.WorkflowSucceeded {
		t.Fatalf("status %s, unbounded %s", st.Status, full.State.Status)
	}
	// A Continue for a finished instance changes nothing.
	d, err := Decide(context.Background(), g, st, Continue{}, now, WithMaxStarts(30))
	if err != nil || d.Changed() {
		t.Fatalf("late continue: changed=%v err=%v", d != nil && d.Changed(), err)
	}
}

// TestLightStartsStretchTheStartBudget: with WithLightWorkerStarts, the
// starts of steps that run on a worker count a fraction of a start, so one
// decision starts that many more of them; the others still count whole.
func TestLightStartsStretchTheStartBudget(t *testing.T) {
	wf := &model.Workflow{ID: "fan"}
	for i := range 100 {
		typ := model.StepHTTP
		if i%10 == 9 {
			typ = model.StepNoOp
		}
		wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: fmt.Sprintf("s%02d", i), Type: typ, RetryPolicy: noRetries()})
	}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	created := func(d *Decision) (http, noop int) {
		for _, tr := range d.Transitions {
			if tr.To != string(model.StepCreated) {
				continue
			}
			if g.OnWorker(tr.StepID) {
				http++
			} else {
				noop++
			}
		}
		return http, noop
	}
	// Four starts: 4 × 8 Http steps, or their NoOp share counted whole.
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithMaxStarts(4), WithLightWorkerStarts(8))
	require.NoError(t, err)
	http, noop := created(d)
	assert.True(t, d.Continue)
	assert.Equal(t, 4, noop/1+http/8, "starts counted: %d Http, %d NoOp", http, noop)
	assert.Greater(t, http, 4)
	// Without it, four steps.
	d, err = Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithMaxStarts(4))
	require.NoError(t, err)
	http, noop = created(d)
	assert.Equal(t, 4, http+noop)
	// Continue events start them all, in as many decisions as they count.
	st, decisions := newInstance(g), 0
	var ev Event = StartRun{}
	for {
		d, err := Decide(context.Background(), g, st, ev, t0, WithMaxStarts(4), WithLightWorkerStarts(8))
		require.NoError(t, err)
		decisions++
		st, ev = d.State, Continue{}
		if !d.Continue {
			break
		}
		require.Less(t, decisions, 20, "no progress")
	}
	running := 0
	for _, s := range st.Steps {
		if s.Status == model.StepRunning {
			running++
		}
	}
	assert.Equal(t, 90, running)
	assert.LessOrEqual(t, decisions, 6, "90 Http steps at 32 per decision and 10 NoOp at 4")
}

// TestDecisionSaysWhatItSpent: Decision.Spent counts the starts as they
// count against WithMaxStarts (a part of one counted whole) and the light
// worker starts; bounds set to what it spent decide the same again, and
// bounds one smaller decide less.
func TestDecisionSaysWhatItSpent(t *testing.T) {
	wf := &model.Workflow{ID: "spent"}
	for i := range 12 {
		typ := model.StepHTTP
		if i < 2 {
			typ = model.StepNoOp
		}
		wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: fmt.Sprintf("s%02d", i), Type: typ, RetryPolicy: noRetries()})
	}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithMaxStarts(40), WithLightWorkerStarts(8))
	require.NoError(t, err)
	require.False(t, d.Continue)
	// 2 NoOp starts, 10 Http starts at 8 a start: 2 + 1 + a part.
	assert.Equal(t, Spent{Starts: 4, LightStarts: 10}, d.Spent)
	same, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithMaxStarts(4), WithLightWorkerStarts(10))
	require.NoError(t, err)
	assert.False(t, same.Continue)
	assert.Equal(t, len(d.Transitions), len(same.Transitions))
	less, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithMaxStarts(3), WithLightWorkerStarts(9))
	require.NoError(t, err)
	assert.True(t, less.Continue)
	assert.Less(t, len(less.Transitions), len(d.Transitions))
}

func TestTimeTriggerParamsUseTheScheduledTime(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "tt", Steps: []model.Step{{Kind: model.KindStep, ID: "only", Type: model.StepNoOp,
		Params: params("d", expr(model.TypeString, "TARGET_RUN_DATE"), "h", expr(model.TypeString, "TARGET_RUN_HOUR"),
			"ts", expr(model.TypeLong, "RUN_TS"), "tz", expr(model.TypeString, "WORKFLOW_CRON_TIMEZONE"))}},
		TimeTriggers: []model.TimeTrigger{{Type: model.TriggerCron, Cron: "0 * * * *", Timezone: "UTC"}},
	}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	// Scheduled at 23:00 in Tokyo on 2026-11-21 (14:00 UTC); the run starts
	// 20 minutes late.
	scheduled := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	d, err := Decide(ctx, g, newInstance(g), StartRun{Initiator: Initiator{Type: "time", Timezone: "Asia/Tokyo", ScheduledTime: scheduled.UnixMilli()}},
		scheduled.Add(20*time.Minute))
	require.NoError(t, err)
	p := d.State.Step("only").Params
	assert.Equal(t, "20261121", fmt.Sprint(p["d"]))
	assert.Equal(t, "23", fmt.Sprint(p["h"]))
	assert.Equal(t, scheduled.UnixMilli(), p["ts"])
	assert.Equal(t, "Asia/Tokyo", p["tz"])
	assert.Equal(t, "TIME", d.State.Initiator.Type)
}
