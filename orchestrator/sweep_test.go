package orchestrator

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

// The recovery sweeper (sweep.go) over the memstore: it moves what the
// sweep index has due — a run item past its due time gets a Redrive, an
// inbox event whose wake was lost is applied, a signal whose delivery was
// lost is delivered — and nothing else; a store that fails is reported,
// and what failed is found again by the next sweep.

// sweep runs one sweep at the rig's clock and fails the test on an error.
func (r *roundRig) sweep() SweepReport {
	r.t.Helper()
	rep, err := r.o.Sweeper.Sweep(r.ctx)
	if err != nil {
		r.t.Fatalf("sweep: %v", err)
	}
	return rep
}

// advanceTo sets the rig's clock to at (unix ms), which must not be past.
func (r *roundRig) advanceTo(at int64) {
	r.t.Helper()
	d := time.UnixMilli(at).Sub(r.clock.Now())
	if d < 0 {
		r.t.Fatalf("the clock cannot go back %v", -d)
	}
	r.clock.Advance(d)
}

// sweepAtOf is the run item's due time in the sweep index (0: not in it).
func (r *roundRig) sweepAtOf(wf string, inst int64) int64 {
	r.t.Helper()
	rec, _, _ := r.load(wf, inst, 1)
	return rec.SweepAt
}

// sent lists the run_step and timer messages of the commits since the
// last call (see work), as "run_step t0#1" and "timer s#1" ("timer run"
// for the workflow's timeout), in order.
func (r *roundRig) sent() string {
	r.t.Helper()
	cs := r.runs.committed()
	var out []string
	for _, c := range cs[r.taken:] {
		for _, kind := range []WorkKind{WorkRunStep, WorkTimer} {
			for _, m := range rigWorkOf(r.t, c.Outbox, kind) {
				what := fmt.Sprintf("%s#%d", m.StepID, m.Attempt)
				if m.StepID == "" {
					what = "run" // the workflow's timeout
				}
				out = append(out, string(kind)+" "+what)
			}
		}
	}
	r.taken = len(cs)
	return strings.Join(out, ", ")
}

// sweptRun is a rig with one started run of def (workflow "swept").
func sweptRun(t *testing.T, def string, tune ...func(*Config)) *roundRig {
	t.Helper()
	r := newRoundRig(t, tune...)
	r.push(def)
	r.start("swept")
	return r
}

// rigGated is a NoOp step that waits for a signal name.
func rigGated(id, name string) string {
	return fmt.Sprintf(`{"step":{"id":%q,"type":"NoOp","signal_dependencies":[{"name":%q}]}}`, id, name)
}

// announce announces an instance of signal name (its delivery left to
// the test).
func (r *roundRig) announce(name string) *SignalView {
	r.t.Helper()
	v, err := r.o.Signals.AnnounceSignal(r.ctx, signals.Announce{Name: name, Params: map[string]any{"k": int64(1)}}, SignalSource{Kind: "api"})
	if err != nil {
		r.t.Fatalf("announce %s: %v", name, err)
	}
	return v
}

// stopEvent is a user's stop, as the API puts it in a run's inbox.
var stopEvent = engine.Action{Action: string(model.WorkflowActionStop)}

// TestSweepMovesWhatIsDue: a run is swept only once an entry of its is
// due; a run item due gets a Redrive, which sends the work it awaits again
// (a run_step, a timer) or finds a worker's end whose wake was lost; an
// event due is applied, and a run it moved is left alone (Moved).
func TestSweepMovesWhatIsDue(t *testing.T) {
	titus := rigDef("swept", "", rigStep("t0", "Titus"))
	due := func(r *roundRig) int64 { return r.sweepAtOf("swept", 1) }
	eventDue := func(r *roundRig) int64 {
		return rigStart.Add(store.DefaultEventSweepAfter).UnixMilli()
	}
	early := func(at func(*roundRig) int64) func(*roundRig) int64 {
		return func(r *roundRig) int64 { return at(r) - 1 }
	}
	for _, c := range []struct {
		name, def string
		before    func(t *testing.T, r *roundRig)
		at        func(r *roundRig) int64
		want      SweepReport
		steps     string // the run's steps after the sweep
		sent      string // what the sweep's commits sent
	}{
		{name: "a step running, before its due time", def: titus, at: early(due), steps: "t0=RUNNING"},
		{name: "a step whose work was lost", def: titus, at: due,
			want: SweepReport{Due: 1, Runs: 1, Redriven: 1, Decided: 1}, steps: "t0=RUNNING", sent: "run_step t0#1, timer run"},
		{name: "a Sleep whose timer was lost", def: rigDef("swept", "", rigSleep("s", 600)), at: due,
			want: SweepReport{Due: 1, Runs: 1, Redriven: 1, Decided: 1}, steps: "s=RUNNING", sent: "timer s#1, timer run"},
		{name: "a worker's end whose wake was lost", def: titus, at: due,
			before: func(t *testing.T, r *roundRig) { r.endByWorker(workFor(t, r.work(), "t0")) },
			want:   SweepReport{Due: 1, Runs: 1, Redriven: 1, Decided: 1}, steps: "t0=SUCCEEDED"},
		{name: "an event, before its due time", def: titus, at: early(eventDue),
			before: func(_ *testing.T, r *roundRig) { r.putEvent("swept", 1, 1, actionEventID("u1"), stopEvent) },
			steps:  "t0=RUNNING"},
		{name: "an event whose wake was lost", def: titus, at: eventDue,
			before: func(_ *testing.T, r *roundRig) { r.putEvent("swept", 1, 1, actionEventID("u1"), stopEvent) },
			want:   SweepReport{Due: 1, Runs: 1, Decided: 1}, steps: "t0=STOPPED"},
		{name: "an event that moves a run due", def: titus, at: due,
			before: func(_ *testing.T, r *roundRig) {
				r.putEvent("swept", 1, 1, outcomeEventID("t0", 1), succeeded("t0", 1))
			},
			want: SweepReport{Due: 2, Runs: 1, Decided: 1, Moved: 1}, steps: "t0=SUCCEEDED"},
		{name: "an ended run", def: rigDef("swept", "", rigStep("n", "NoOp")),
			at:    func(r *roundRig) int64 { return rigStart.Add(24 * time.Hour).UnixMilli() },
			steps: "n=SUCCEEDED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sweptRun(t, c.def)
			if c.before != nil {
				c.before(t, r)
			}
			at := c.at(r)
			r.advanceTo(at)
			r.taken = len(r.runs.committed())
			if got := r.sweep(); got != c.want {
				t.Errorf("report %+v, want %+v", got, c.want)
			}
			if got := statuses(r.state("swept", 1, 1)); got != c.steps {
				t.Errorf("steps %s, want %s", got, c.steps)
			}
			if got := r.sent(); got != c.sent {
				t.Errorf("sent %q, want %q", got, c.sent)
			}
			if c.want.Redriven > 0 && r.sweepAtOf("swept", 1) == at {
				t.Error("the run is still due when it was re-driven")
			}
			if got := r.sweep(); got != (SweepReport{}) {
				t.Errorf("swept again at once: %+v", got)
			}
		})
	}
}

// TestSweepDueTimeAndGrace: a started run is due a claim lease and two
// sweep graces after its work was sent (a timer's fire time and two
// graces); a later commit keeps that time while it is not early and at
// most two graces late — no index write — else sets a new one; a run that
// awaits nothing leaves the index.
func TestSweepDueTimeAndGrace(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	for _, c := range []struct {
		name         string
		lease, grace time.Duration
		later        time.Duration // when b's outcome is applied (0: never)
		want         time.Duration // the due time after it, from the start
	}{
		{"defaults", 0, 0, 0, DefaultClaimLease + 2*DefaultSweepGrace},
		{"defaults, kept", 0, 0, sec(30), DefaultClaimLease + 2*DefaultSweepGrace},
		{"defaults, moved", 0, 0, sec(90), sec(90) + DefaultClaimLease + 2*DefaultSweepGrace},
		{"short", sec(10), sec(5), 0, sec(20)},
		{"short, kept", sec(10), sec(5), sec(3), sec(20)},
		{"short, moved", sec(10), sec(5), sec(6), sec(26)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sweptRun(t, rigDef("swept", "", rigStep("a", "Titus"), rigStep("b", "Titus", "c"), rigStep("c", "Titus")),
				func(cfg *Config) { cfg.ClaimLease, cfg.SweepGrace = c.lease, c.grace })
			if c.later > 0 {
				r.clock.Advance(c.later)
				r.finish("swept", 1, 1, "b", 1, engine.OutcomeSucceeded)
			}
			want := rigStart.Add(c.want).UnixMilli()
			if got := r.sweepAtOf("swept", 1); got != want {
				t.Fatalf("due at start+%v, want start+%v", time.UnixMilli(got).Sub(rigStart), c.want)
			}
			r.advanceTo(want - 1)
			if got := r.sweep(); got.Due != 0 {
				t.Errorf("a millisecond early: %+v", got)
			}
			r.advanceTo(want)
			if got := r.sweep(); got.Redriven != 1 {
				t.Errorf("on time: %+v", got)
			}
		})
	}
	t.Run("a timer", func(t *testing.T) {
		r := sweptRun(t, rigDef("swept", "", rigSleep("s", 600)), func(cfg *Config) { cfg.SweepGrace = sec(7) })
		if got, want := r.sweepAtOf("swept", 1), rigStart.Add(sec(614)).UnixMilli(); got != want {
			t.Errorf("due at %d, want %d (the fire time and two graces)", got, want)
		}
	})
	// A run that awaited only a long Sleep (due 300 s + 2 graces) starts a
	// Titus step when a signal comes: due earlier, it keeps its due time
	// while that is at most two graces late, else moves it earlier.
	for _, c := range []struct {
		signal, want time.Duration
	}{{sec(180), sec(420)}, {sec(100), sec(100) + DefaultClaimLease + 2*DefaultSweepGrace}} {
		t.Run(fmt.Sprint("a step started after ", c.signal), func(t *testing.T) {
			r := sweptRun(t, rigDef("swept", "", rigSleep("s", 300), rigThen(rigGated("g", "sweep/go"), "a"), rigStep("a", "Titus")))
			if got, want := r.sweepAtOf("swept", 1), rigStart.Add(sec(420)).UnixMilli(); got != want {
				t.Fatalf("due at %d, want %d", got, want)
			}
			r.clock.Advance(c.signal)
			v := r.announce("sweep/go")
			if err := r.o.Signals.handleSignal(r.ctx, v.Name, v.SeqID); err != nil {
				t.Fatal(err)
			}
			if st := r.mustProcess("swept", 1, 1); stepStatus(st, "a") != model.StepRunning {
				t.Fatalf("after the signal: %s", statuses(st))
			}
			if got, want := r.sweepAtOf("swept", 1), rigStart.Add(c.want).UnixMilli(); got != want {
				t.Errorf("due at start+%v, want start+%v", time.UnixMilli(got).Sub(rigStart), c.want)
			}
		})
	}
	t.Run("nothing awaited", func(t *testing.T) {
		r := sweptRun(t, rigDef("swept", "", rigStep("a", "Titus")))
		r.finish("swept", 1, 1, "a", 1, engine.OutcomeSucceeded)
		if got := r.sweepAtOf("swept", 1); got != 0 {
			t.Errorf("an ended run is due at %d", got)
		}
	})
}

// TestSweepStoreFailures: a sweep whose index cannot be read fails; a run
// or a signal whose re-drive fails is counted and left due, and the next
// sweep, the store healed, moves it.
func TestSweepStoreFailures(t *testing.T) {
	redrive := func(err error) func(*roundRig) {
		return func(r *roundRig) { r.sweeps.beforeRedrive = func(store.Due) error { return err } }
	}
	redone := SweepReport{Due: 1, Runs: 1, Redriven: 1, Decided: 1}
	for _, c := range []struct {
		name        string
		event       bool // a stop waits in the run's inbox, due with the run
		fail        func(r *roundRig)
		want, after SweepReport
		err         bool
	}{
		{name: "the index cannot be read", fail: func(r *roundRig) { r.sweeps.failDue = errRigThrottled },
			err: true, after: redone},
		{name: "a redrive fails", fail: redrive(errRigThrottled),
			want: SweepReport{Due: 1, Runs: 1, Failed: 1}, after: redone},
		{name: "a redrive finds the run moved", fail: redrive(store.ErrConflict),
			want: SweepReport{Due: 1, Runs: 1, Moved: 1}, after: redone},
		{name: "the run cannot be decided", event: true,
			fail: func(r *roundRig) { r.runs.failLoad = func(string, int64, int64) error { return errRigThrottled } },
			want: SweepReport{Due: 2, Runs: 1, Failed: 1}, after: SweepReport{Due: 2, Runs: 1, Decided: 1, Moved: 1}},
		{name: "the run is gone", event: true,
			fail: func(r *roundRig) { r.runs.failLoad = func(string, int64, int64) error { return store.ErrNotFound } },
			// Neither deciding the event nor the redrive that went in
			// finds the run: a deleted workflow's, nothing to do.
			want:  SweepReport{Due: 2, Runs: 1, Decided: 2, Redriven: 1},
			after: SweepReport{Due: 2, Runs: 1, Decided: 1, Moved: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sweptRun(t, rigDef("swept", "", rigStep("t0", "Titus")))
			if c.event {
				r.putEvent("swept", 1, 1, actionEventID("u1"), stopEvent)
			}
			r.advanceTo(r.sweepAtOf("swept", 1))
			c.fail(r)
			rep, err := r.o.Sweeper.Sweep(r.ctx)
			if c.err != (err != nil) || c.err && !errors.Is(err, errRigThrottled) {
				t.Errorf("sweep: %v", err)
			}
			if rep != c.want {
				t.Errorf("report %+v, want %+v", rep, c.want)
			}
			r.sweeps.failDue, r.sweeps.beforeRedrive, r.runs.failLoad = nil, nil, nil
			if got := r.sweep(); got != c.after {
				t.Errorf("healed: %+v, want %+v", got, c.after)
			}
		})
	}
}

// TestSweepRedriveNotDecided: a run whose Redrive went in but whose
// decision failed keeps its due time; the next sweep's Redrive finds the
// same event there (Moved), and the event, due in its turn, is applied.
func TestSweepRedriveNotDecided(t *testing.T) {
	r := sweptRun(t, rigDef("swept", "", rigStep("t0", "Titus")))
	due := r.sweepAtOf("swept", 1)
	r.advanceTo(due)
	r.sweeps.beforeRedrive = func(store.Due) error {
		r.runs.failLoad = func(string, int64, int64) error { return errRigThrottled }
		return nil
	}
	if got, want := r.sweep(), (SweepReport{Due: 1, Runs: 1, Redriven: 1, Failed: 1}); got != want {
		t.Fatalf("report %+v, want %+v", got, want)
	}
	r.sweeps.beforeRedrive, r.runs.failLoad = nil, nil
	if got := r.pending("swept", 1, 1); len(got) != 1 || got[0] != redriveEventID(due) {
		t.Fatalf("pending %v, want the redrive", got)
	}
	if got, want := r.sweep(), (SweepReport{Due: 1, Runs: 1, Moved: 1}); got != want {
		t.Errorf("again: %+v, want %+v", got, want)
	}
	r.clock.Advance(store.DefaultEventSweepAfter)
	r.sent()
	if got, want := r.sweep(), (SweepReport{Due: 2, Runs: 1, Decided: 1, Moved: 1}); got != want {
		t.Errorf("the redrive due: %+v, want %+v", got, want)
	}
	if got := r.sent(); got != "run_step t0#1, timer run" {
		t.Errorf("sent %q", got)
	}
}

// TestSweepDeliversLostSignals: a signal whose delivery was lost is
// delivered by the sweep past EventSweepAfter — its waiting step's run gets
// its event, applied by a later sweep when its own wake was lost too — and
// then leaves the index; a delivery that fails is counted and done again.
func TestSweepDeliversLostSignals(t *testing.T) {
	r := sweptRun(t, rigDef("swept", "", rigGated("g", "sweep/go")))
	if got := statuses(r.state("swept", 1, 1)); got != "g=WAITING_FOR_SIGNALS" {
		t.Fatalf("started %s", got)
	}
	r.announce("sweep/go")
	r.clock.Advance(store.DefaultEventSweepAfter - time.Millisecond)
	if got := r.sweep(); got.Due != 0 {
		t.Errorf("before its due time: %+v", got)
	}
	r.clock.Advance(time.Millisecond)
	r.sigs.failDeliver = errRigThrottled
	if got, want := r.sweep(), (SweepReport{Due: 1, Failed: 1}); got != want {
		t.Errorf("its delivery failing: %+v, want %+v", got, want)
	}
	r.sigs.failDeliver = nil
	if got, want := r.sweep(), (SweepReport{Due: 1, Signals: 1}); got != want {
		t.Errorf("delivered: %+v, want %+v", got, want)
	}
	if got := r.pending("swept", 1, 1); len(got) != 1 || got[0] != signalEventID("sweep/go", 1) {
		t.Fatalf("pending %v, want the signal's event", got)
	}
	if got := r.sweep(); got.Due != 0 {
		t.Errorf("delivered twice: %+v", got)
	}
	r.clock.Advance(store.DefaultEventSweepAfter)
	if got, want := r.sweep(), (SweepReport{Due: 1, Runs: 1, Decided: 1}); got != want {
		t.Errorf("the signal's event: %+v, want %+v", got, want)
	}
	if st := r.state("swept", 1, 1); st.Status != model.WorkflowSucceeded {
		t.Errorf("after the sweeps: %s %s", st.Status, statuses(st))
	}
}

// TestSweepManyRuns: a sweep re-drives every run due, several at once, and
// each once.
func TestSweepManyRuns(t *testing.T) {
	const n = defaultParallelism // more than sweepDeciders, all started
	r := sweptRun(t, rigDef("swept", `"parallel"`, rigStep("t0", "Titus")))
	for range n - 1 {
		r.start("swept")
	}
	r.sent()
	r.advanceTo(r.sweepAtOf("swept", n))
	if got, want := r.sweep(), (SweepReport{Due: n, Runs: n, Redriven: n, Decided: n}); got != want {
		t.Fatalf("report %+v, want %+v", got, want)
	}
	if got := strings.Count(r.sent(), "run_step t0#1"); got != n {
		t.Errorf("%d steps sent again, want %d", got, n)
	}
	seen := map[int64]bool{}
	for _, d := range r.sweeps.redriven() {
		if seen[d.InstanceID] {
			t.Errorf("instance %d re-driven twice", d.InstanceID)
		}
		seen[d.InstanceID] = true
	}
}
