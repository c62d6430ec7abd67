package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// t0 is the fixed clock of the tests: 2026-11-22T10:30:00Z.
var t0 = time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)

const testUUID = "2f1c7a52-3a40-4d4b-9a8e-8a9a4f3b2c10"

func newEvaluator(t testing.TB) Evaluator {
	t.Helper()
	return NewEvaluator(expression.New(expression.DefaultLimits()))
}

func loadWorkflow(t testing.TB, name string) *model.Workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	def, err := model.ParseDefinition(data)
	require.NoError(t, err, "parse %s", name)
	require.NotNil(t, def.Workflow)
	return def.Workflow
}

func loadGraph(t testing.TB, name string) *Graph {
	t.Helper()
	g, err := Compile(loadWorkflow(t, name), newEvaluator(t))
	require.NoError(t, err, "compile %s", name)
	return g
}

func newInstance(g *Graph) *Instance {
	return &Instance{
		WorkflowID:      g.Workflow().ID,
		WorkflowVersion: 1,
		InstanceID:      1,
		RunID:           1,
		UUID:            testUUID,
		Owner:           "tester",
		Status:          model.WorkflowCreated,
		CreateTime:      t0.UnixMilli(),
	}
}

// restartRun restarts ended run st by policy at t0 and decides the new
// run's StartRun, failing t on an error from either.
func restartRun(t *testing.T, g *Graph, st *Instance, policy string) *Decision {
	t.Helper()
	next, err := RestartState(st, policy, t0)
	require.NoError(t, err)
	d, err := Decide(context.Background(), g, next, StartRun{}, t0)
	require.NoError(t, err)
	return d
}

// startRun compiles wf and decides its StartRun at t0 with opts, failing t
// on an error from either.
func startRun(t *testing.T, wf *model.Workflow, opts ...Option) (*Graph, *Decision) {
	t.Helper()
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, opts...)
	require.NoError(t, err)
	return g, d
}

// assertUnchanged decides ev on st at now and asserts that the decision
// changes nothing.
func assertUnchanged(t *testing.T, ctx context.Context, g *Graph, st *Instance, ev Event, now time.Time, msgAndArgs ...any) {
	t.Helper()
	d, err := Decide(ctx, g, st, ev, now)
	require.NoError(t, err)
	assert.False(t, d.Changed(), msgAndArgs...)
}

// commandsOf lists the commands of type T among cmds, in their order.
func commandsOf[T Command](cmds []Command) []T {
	var out []T
	for _, c := range cmds {
		if x, ok := c.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// literal returns a literal param definition.
func literal(t model.ParamType, v any) *model.ParamDefinition {
	return &model.ParamDefinition{Type: t, Value: v, HasValue: true}
}

// expr returns an expression param definition.
func expr(t model.ParamType, src string) *model.ParamDefinition {
	return &model.ParamDefinition{Type: t, Expression: src}
}

// params builds ordered params from name/definition pairs.
func params(kv ...any) model.Params {
	p := model.Params{Defs: map[string]*model.ParamDefinition{}}
	for i := 0; i < len(kv); i += 2 {
		n := kv[i].(string)
		p.Names = append(p.Names, n)
		p.Defs[n] = kv[i+1].(*model.ParamDefinition)
	}
	return p
}

// run is the record of driving an instance to its end.
type run struct {
	state *Instance
	// inputs, events, times and decisions record every Decide call in order.
	inputs    []*Instance
	events    []Event
	times     []time.Time
	decisions []*Decision
	// ended lists step ids in the order they reached a terminal status.
	ended []string
	// seqOf maps "<step>:<status>" to the transition seq that entered it.
	seqOf map[string]int64
}

// worker answers a RunStep command; nil means "succeed without outputs".
type worker func(c RunStep) StepFinished

// drive starts st and plays the runtime's part until the instance ends:
// RunStep commands are answered by w (in command order), timers fire in FireAt
// order with the clock advanced to FireAt. Every decision is checked for
// purity (the input state is not modified) and determinism (deciding again
// gives an equal decision).
func drive(t *testing.T, g *Graph, st *Instance, start StartRun, w worker) *run {
	t.Helper()
	ctx := context.Background()
	r := &run{seqOf: map[string]int64{}}
	type pending struct {
		ev Event
		at time.Time
	}
	queue := []pending{{ev: start, at: t0}}
	now := t0
	for steps := 0; len(queue) > 0; steps++ {
		require.Less(t, steps, 10000, "instance does not end")
		// Events due earliest first; ties in arrival order.
		sort.SliceStable(queue, func(i, j int) bool { return queue[i].at.Before(queue[j].at) })
		p := queue[0]
		queue = queue[1:]
		if p.at.After(now) {
			now = p.at
		}
		d := decideChecked(t, ctx, g, st, p.ev, now)
		r.inputs = append(r.inputs, st)
		r.events = append(r.events, p.ev)
		r.times = append(r.times, now)
		r.decisions = append(r.decisions, d)
		for _, tr := range d.Transitions {
			if tr.StepID != "" {
				r.seqOf[tr.StepID+":"+tr.To] = tr.Seq
				if isStepTerminal(model.StepStatus(tr.To)) {
					r.ended = append(r.ended, tr.StepID)
				}
			}
		}
		for _, c := range d.Commands {
			switch c := c.(type) {
			case RunStep:
				fin := StepFinished{StepID: c.StepID, Attempt: c.Attempt, Outcome: OutcomeSucceeded}
				if w != nil {
					fin = w(c)
				}
				queue = append(queue, pending{ev: fin, at: now})
			case StartTimer:
				queue = append(queue, pending{ev: TimerFired{StepID: c.StepID, Attempt: c.Attempt, Purpose: c.Purpose}, at: c.FireAt})
			case InstanceDone:
				require.Equal(t, d.State.Status, c.Status)
			}
		}
		st = d.State
	}
	r.state = st
	return r
}

// decideChecked decides and checks purity and determinism.
func decideChecked(t *testing.T, ctx context.Context, g *Graph, st *Instance, ev Event, now time.Time) *Decision {
	t.Helper()
	before := st.Clone()
	d, err := Decide(ctx, g, st, ev, now)
	require.NoError(t, err)
	require.Equal(t, before, st, "Decide modified its input state")
	again, err := Decide(ctx, g, st, ev, now)
	require.NoError(t, err)
	require.Equal(t, d, again, "Decide is not deterministic")
	return d
}

func (r *run) statuses() map[string]model.StepStatus {
	out := map[string]model.StepStatus{}
	for _, s := range r.state.Steps {
		out[s.StepID] = s.Status
	}
	return out
}

// checkEdgeOrder asserts that for every edge whose target ran, the source
// ended before the target was created.
func checkEdgeOrder(t *testing.T, g *Graph, r *run) {
	t.Helper()
	for _, id := range g.StepIDs() {
		created, ok := r.seqOf[id+":"+string(model.StepCreated)]
		if !ok {
			continue
		}
		for _, e := range g.Predecessors(id) {
			src := r.state.Step(e.From)
			ended, ok := r.seqOf[e.From+":"+string(src.Status)]
			require.True(t, ok, "predecessor %s of %s never ended", e.From, id)
			require.Less(t, ended, created, fmt.Sprintf("%s ended after %s was created", e.From, id))
		}
	}
}

// stepCommands drops the run's workflow-timeout timer, which every
// decision starting a run that keeps going carries.
func stepCommands(cmds []Command) []Command {
	var out []Command
	for _, c := range cmds {
		if t, ok := c.(StartTimer); ok && t.Purpose == PurposeWorkflowTimeout {
			continue
		}
		out = append(out, c)
	}
	return out
}
