package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// TestIterationsBornRunning: iterations whose body's steps run on workers
// are written by the parent's commit already decided — run item v1 IN_PROGRESS
// in the sweep index, no event in their inbox, the step's start left to
// its worker's claim — and their work is dispatched by the parent's
// committer, one message per iteration, none of them a timer (the parent's
// deadline comes first). An iteration ends as any run and reports to its
// parent, whose next round bears the next one. A Sleep body is born running
// too, its timer left to the router; a body step that takes a tag permit
// has its iterations created the ordinary way.
func TestIterationsBornRunning(t *testing.T) {
	disp := &rigDispatch{}
	r := newRoundRig(t, withDispatcher(disp))
	wf := r.push(rigDef("looper", "", rigForeach("loop", 5, 3, rigStep("x", "Titus"))))
	r.start(wf)
	parent := r.state(wf, 1, 1)
	loop := parent.Step("loop").Loop
	if loop == nil || len(loop.Running) != 3 {
		t.Fatalf("loop %+v, want 3 iterations in flight", loop)
	}
	var children []store.ChildRun
	for _, c := range r.runs.committed() {
		children = append(children, c.Children...)
	}
	if len(children) != 3 {
		t.Fatalf("%d iterations created, want 3", len(children))
	}
	for _, ch := range children {
		if !ch.Born || ch.Status != string(model.WorkflowInProgress) || ch.SweepAt == 0 || len(ch.Attempts) != 0 {
			t.Errorf("iteration %d: born %v status %s sweep %d attempts %d; want born IN_PROGRESS, swept, its start deferred",
				ch.InstanceID, ch.Born, ch.Status, ch.SweepAt, len(ch.Attempts))
		}
		for _, m := range ch.Outbox {
			if m.Queue != store.QueueWork || m.Schedule != "" || !m.Direct {
				t.Errorf("iteration %d: outbox message %s %q schedule %q direct %v; want only its step's work, sent directly",
					ch.InstanceID, m.Queue, m.Body, m.Schedule, m.Direct)
			}
		}
		rec, st, pending := r.load(loop.WorkflowID, ch.InstanceID, 1)
		if rec.V != 1 || len(pending) != 0 || stepStatus(st, "x") != model.StepRunning || st.Parent == nil || st.Parent.Deadline != parent.TimeoutAt {
			t.Errorf("iteration %d: v%d, %d pending, %s, parent %+v", ch.InstanceID, rec.V, len(pending), statuses(st), st.Parent)
		}
		if _, err := r.ms.Attempts.GetAttempt(r.ctx, loop.WorkflowID, ch.InstanceID, 1, "x", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("iteration %d: attempt item %v, want none until its worker claims it", ch.InstanceID, err)
		}
	}
	work := rigWorkOf(t, disp.messages(), WorkRunStep)
	if len(work) != 3 {
		t.Fatalf("%d steps dispatched directly, want 3", len(work))
	}
	for _, w := range work {
		if w.WorkflowID != loop.WorkflowID || w.StepID != "x" || w.StartTime == 0 {
			t.Errorf("dispatched %+v, want step x of an iteration with its start", w)
		}
	}

	// Iteration 1 ends; its report lets the parent launch the fourth.
	if st := r.finish(loop.WorkflowID, 1, 1, "x", 1, engine.OutcomeSucceeded); st.Status != model.WorkflowSucceeded {
		t.Fatalf("iteration 1: %s", st.Status)
	}
	// Its instance timeline: the entry its birth held in the run item, then
	// its end's.
	if rec, _, _ := r.load(loop.WorkflowID, 1, 1); len(rec.Timeline) != 2 ||
		!strings.Contains(string(rec.Timeline[0].Body), string(model.WorkflowInProgress)) ||
		!strings.Contains(string(rec.Timeline[1].Body), string(model.WorkflowSucceeded)) {
		t.Errorf("iteration 1's timeline %+v, want IN_PROGRESS then SUCCEEDED", rec.Timeline)
	}
	if got := r.pending(wf, 1, 1); len(got) != 1 {
		t.Fatalf("parent's inbox %v, want the iteration's end", got)
	}
	parent = r.mustProcess(wf, 1, 1)
	if l := parent.Step("loop").Loop; l.Next != 4 || len(l.Running) != 3 {
		t.Errorf("loop next %d running %v, want the fourth launched", l.Next, l.Running)
	}
	if rec, _, pending := r.load(loop.WorkflowID, 4, 1); rec.V != 1 || len(pending) != 0 || rec.Status != string(model.WorkflowInProgress) {
		t.Errorf("iteration 4: v%d %s, %d pending; want born running", rec.V, rec.Status, len(pending))
	}

	t.Run("a Sleep body", func(t *testing.T) {
		r := newRoundRig(t, withDispatcher(&rigDispatch{}))
		wf := r.push(rigDef("sleepers", "", rigForeach("loop", 2, 2, rigSleep("z", 30))))
		r.start(wf)
		loop := r.state(wf, 1, 1).Step("loop").Loop
		for inst := int64(1); inst <= 2; inst++ {
			rec, st, pending := r.load(loop.WorkflowID, inst, 1)
			if rec.V != 1 || len(pending) != 0 || stepStatus(st, "z") != model.StepRunning {
				t.Errorf("iteration %d: v%d %s, %d pending; want born running", inst, rec.V, statuses(st), len(pending))
			}
		}
		for _, c := range r.runs.committed() {
			for _, ch := range c.Children {
				if w := rigWorkOf(t, ch.Outbox, WorkTimer); len(w) != 1 || ch.Outbox[0].Direct {
					t.Errorf("iteration %d: outbox %+v, want its sleep's timer, left to the router", ch.InstanceID, ch.Outbox)
				}
			}
		}
	})
	t.Run("a tag permit", func(t *testing.T) {
		r := newRoundRig(t, withDispatcher(&rigDispatch{}))
		wf := r.push(rigDef("tagged", "", rigForeach("loop", 2, 2, `{"step":{"id":"x","type":"Titus","tags":[{"name":"db"}]}}`)))
		r.start(wf)
		loop := r.state(wf, 1, 1).Step("loop").Loop
		for inst := int64(1); inst <= 2; inst++ {
			if rec, _, pending := r.load(loop.WorkflowID, inst, 1); rec.Status != string(model.WorkflowCreated) || len(pending) != 1 {
				t.Errorf("iteration %d: %s, %d pending; want created the ordinary way, its start event waiting", inst, rec.Status, len(pending))
			}
		}
	})
}

// countingGates counts the breakpoint reads of a run's rounds, failing them
// on demand, and records its tag permit reads.
type countingGates struct {
	GateStore
	mu    sync.Mutex
	reads int
	fail  error
	// permitReads are the tags of each GetTagPermits call.
	permitReads [][]string
}

func (g *countingGates) ListBreakpoints(ctx context.Context, wf, step string, consistent bool) ([]store.Breakpoint, error) {
	g.mu.Lock()
	g.reads++
	fail := g.fail
	g.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return g.GateStore.ListBreakpoints(ctx, wf, step, consistent)
}

func (g *countingGates) GetTagPermits(ctx context.Context, tags []string) (map[string]*store.TagPermit, error) {
	g.mu.Lock()
	g.permitReads = append(g.permitReads, tags)
	g.mu.Unlock()
	return g.GateStore.GetTagPermits(ctx, tags)
}

// newGatesRig is a round rig whose gates store counts its reads.
func newGatesRig(t *testing.T) (*roundRig, *countingGates) {
	var gates *countingGates
	r := newRoundRig(t, func(c *Config) {
		st := *c.Stores
		gates = &countingGates{GateStore: st.Gates}
		st.Gates = gates
		c.Stores = &st
	})
	return r, gates
}

func (g *countingGates) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads
}

// TestBreakpointsAreReadWhenAStepStarts: while a step of the run has not
// started, a round reads the run's breakpoints at once; once every step
// has, only when a decision starts one — the last step's end reads none. A
// failed read leaves the round uncommitted, its event waiting.
func TestBreakpointsAreReadWhenAStepStarts(t *testing.T) {
	r, gates := newGatesRig(t)
	wf := r.push(rigDef("pair", "", rigStep("a", "Titus", "b"), rigStep("b", "Titus")))
	r.start(wf)
	if n := gates.count(); n != 1 {
		t.Errorf("the start read breakpoints %d times, want once (step a starts)", n)
	}
	gates.mu.Lock()
	gates.fail = errors.New("throttled")
	gates.mu.Unlock()
	r.putEvent(wf, 1, 1, outcomeEventID("a", 1), engine.StepFinished{StepID: "a", Attempt: 1, Outcome: engine.OutcomeSucceeded})
	v := r.runs.calls()
	if _, err := r.process(wf, 1, 1); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("process with a failing breakpoint read = %v, want its error", err)
	}
	if r.runs.calls() != v || len(r.pending(wf, 1, 1)) != 1 {
		t.Errorf("%d commits sent, %d events pending; want none sent and the event kept", r.runs.calls()-v, len(r.pending(wf, 1, 1)))
	}
	gates.mu.Lock()
	gates.fail, gates.reads = nil, 0
	gates.mu.Unlock()
	if st := r.mustProcess(wf, 1, 1); stepStatus(st, "b") != model.StepRunning {
		t.Fatalf("after a's end: %s", statuses(st))
	}
	if n := gates.count(); n != 1 {
		t.Errorf("a's end (b starts) read breakpoints %d times, want once", n)
	}
	if st := r.finish(wf, 1, 1, "b", 1, engine.OutcomeSucceeded); st.Status != model.WorkflowSucceeded {
		t.Fatalf("after b's end: %s", st.Status)
	}
	if n := gates.count(); n != 1 {
		t.Errorf("b's end (nothing starts) read breakpoints %d more times, want none", n-1)
	}
}

// TestIterationRoundsReadNoTagPermits: a round of an iteration whose body's
// steps have no tags reads no tag permit (an inline workflow has no
// step_concurrency of its own); a pushed workflow's round reads its internal
// tag, and a tagged body's iteration reads its tags.
func TestIterationRoundsReadNoTagPermits(t *testing.T) {
	r, gates := newGatesRig(t)
	reads := func() [][]string {
		gates.mu.Lock()
		defer gates.mu.Unlock()
		out := gates.permitReads
		gates.permitReads = nil
		return out
	}
	wf := r.push(rigDef("plain", "", rigStep("a", "Titus")))
	r.start(wf)
	if got := reads(); len(got) != 1 || len(got[0]) != 1 || got[0][0] != workflowTag(wf) {
		t.Errorf("a pushed workflow's start read tag permits %v, want its internal tag once", got)
	}
	wf = r.push(rigDef("looper", "", rigForeach("loop", 2, 2, rigStep("x", "Titus"))))
	r.start(wf)
	loop := r.state(wf, 1, 1).Step("loop").Loop
	reads()
	r.finish(loop.WorkflowID, 1, 1, "x", 1, engine.OutcomeSucceeded)
	if got := reads(); len(got) != 0 {
		t.Errorf("an iteration's round read tag permits %v, want none", got)
	}
	wf = r.push(rigDef("tagged", "", rigForeach("loop", 1, 1, `{"step":{"id":"x","type":"Titus","tags":[{"name":"db"}]}}`)))
	r.start(wf)
	loop = r.state(wf, 1, 1).Step("loop").Loop
	reads()
	r.mustProcess(loop.WorkflowID, 1, 1) // its start event, the ordinary way
	if got := reads(); len(got) != 1 || len(got[0]) != 1 || got[0][0] != "db" {
		t.Errorf("a tagged iteration's round read tag permits %v, want its tag", got)
	}
}
