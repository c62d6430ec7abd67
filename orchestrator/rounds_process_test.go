package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// failNext fails the next n CommitRun calls with err (as the store wraps
// it), writing nothing; the calls after them go through.
func (r *roundRig) failNext(n int, err error) {
	from := r.runs.calls()
	r.runs.mu.Lock()
	r.runs.failCommit = func(k int, c store.Commit) error {
		if k-from <= n {
			return fmt.Errorf("rig: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, err)
		}
		return nil
	}
	r.runs.mu.Unlock()
}

// chainRig is a rig with a started run of a two-step Titus chain (a → b):
// a runs, and its success waits in the run's inbox.
func chainRig(t *testing.T) (*roundRig, string) {
	t.Helper()
	r := newRoundRig(t)
	wf := r.push(rigDef("chain", "", rigStep("a", "Titus", "b"), rigStep("b", "Titus")))
	r.start(wf)
	r.putEvent(wf, 1, 1, outcomeEventID("a", 1), engine.StepFinished{StepID: "a", Attempt: 1, Outcome: engine.OutcomeSucceeded})
	return r, wf
}

// TestProcessRetriesConflicts: a commit that lost a race (ErrConflict) is
// decided again from a fresh read, up to the retry limit
// (MaxConflictRetries, 4 in the rig); at the limit Process gives up with
// the conflict, having written nothing, and the event stays pending.
func TestProcessRetriesConflicts(t *testing.T) {
	for _, tc := range []struct {
		conflicts int
		wantCalls int
		wantErr   bool
	}{
		{conflicts: 0, wantCalls: 1},
		{conflicts: 1, wantCalls: 2},
		{conflicts: 3, wantCalls: 4},
		{conflicts: 4, wantCalls: 4, wantErr: true},
		{conflicts: 50, wantCalls: 4, wantErr: true},
	} {
		t.Run(fmt.Sprint(tc.conflicts, " conflicts"), func(t *testing.T) {
			r, wf := chainRig(t)
			before := r.runs.calls()
			r.failNext(tc.conflicts, store.ErrConflict)
			st, err := r.process(wf, 1, 1)
			if calls := r.runs.calls() - before; calls != tc.wantCalls {
				t.Errorf("%d commits tried, want %d", calls, tc.wantCalls)
			}
			rec, stored, pending := r.load(wf, 1, 1)
			if tc.wantErr {
				if !errors.Is(err, store.ErrConflict) || st != nil {
					t.Fatalf("Process = %v, %v; want the conflict", st, err)
				}
				if rec.V != 1 || stepStatus(stored, "a") != model.StepRunning || len(pending) != 1 {
					t.Errorf("after giving up: v%d %s, pending %v; want v1 untouched, the outcome pending", rec.V, statuses(stored), pending)
				}
				return
			}
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			if st.Step("a").Status != model.StepSucceeded || st.Step("b").Status != model.StepRunning {
				t.Errorf("returned state %s", statuses(st))
			}
			if rec.V != 2 || statuses(stored) != "a=SUCCEEDED b=RUNNING" || len(pending) != 0 {
				t.Errorf("stored v%d %s, pending %v", rec.V, statuses(stored), pending)
			}
		})
	}
}

// TestProcessReturnsOtherCommitErrorsAtOnce: a commit error that is
// neither a conflict, a size nor a slot is not retried.
func TestProcessReturnsOtherCommitErrorsAtOnce(t *testing.T) {
	r, wf := chainRig(t)
	boom := errors.New("throttled")
	before := r.runs.calls()
	r.failNext(100, boom)
	if _, err := r.process(wf, 1, 1); !errors.Is(err, boom) {
		t.Fatalf("Process = %v, want the store's error", err)
	}
	if calls := r.runs.calls() - before; calls != 1 {
		t.Errorf("%d commits tried, want 1", calls)
	}
	if ids := r.pending(wf, 1, 1); len(ids) != 1 {
		t.Errorf("pending %v, want the outcome still there", ids)
	}
}

// TestProcessWithNothingPendingCommitsNothing: a duplicate wake finds no
// event and commits nothing; it returns the run's state.
func TestProcessWithNothingPendingCommitsNothing(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("idle", "", rigStep("a", "Titus")))
	r.start(wf)
	before := r.runs.calls()
	st := r.mustProcess(wf, 1, 1)
	if st == nil || st.Status != model.WorkflowInProgress || stepStatus(st, "a") != model.StepRunning {
		t.Fatalf("state %+v", st)
	}
	if n := r.runs.calls() - before; n != 0 {
		t.Errorf("%d commits for a wake with nothing pending", n)
	}
}

// wideLoop is a workflow whose foreach launches n iterations born
// finished (NoOp bodies): about 48 a round, so a few hundred take more
// rounds than one Process call makes.
func wideLoop(id string, n int) string {
	return rigDef(id, "", rigForeach("loop", n, 100, rigStep("x", "NoOp")))
}

// TestProcessHandsOffAfterMaxRounds: a run with more rounds to make than
// one Process call commits (maxRoundsPerCall) is handed to the decider:
// woken at once through the dispatcher, or, without one or when its send
// fails, by a hand-off event (handOffEventID) in its inbox. The last
// round's Continue waits in the inbox either way, and the decider's wakes
// finish the loop.
func TestProcessHandsOffAfterMaxRounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dispatcher bool
		sendFails  bool
		wantWake   bool
	}{
		{name: "dispatcher", dispatcher: true, wantWake: true},
		{name: "dispatcher fails", dispatcher: true, sendFails: true},
		{name: "no dispatcher"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &rigDispatch{}
			var tune []func(*Config)
			if tc.dispatcher {
				tune = append(tune, withDispatcher(d))
			}
			if tc.sendFails {
				d.fail = errors.New("sqs down")
			}
			r := newRoundRig(t, tune...)
			wf := r.push(wideLoop("wide", 1000))
			resp := r.start(wf)
			if resp.Status != string(model.WorkflowInProgress) {
				t.Fatalf("start: %+v", resp)
			}
			// The start's own round, then maxRoundsPerCall rounds of Process.
			if n := len(r.runs.committed()); n != 1+maxRoundsPerCall {
				t.Errorf("%d commits before the hand-off, want %d", n, 1+maxRoundsPerCall)
			}
			pending := r.pending(wf, 1, 1)
			var cont, handOff int
			for _, id := range pending {
				switch {
				case strings.HasPrefix(id, "c-"):
					cont++
				case strings.HasPrefix(id, "j-"):
					handOff++
				}
			}
			if cont != 1 {
				t.Errorf("pending %v: want the last round's Continue", pending)
			}
			var wakes int
			for _, m := range d.messages() {
				if m.Queue == store.QueueDecision && m.Body == store.WakeMessageOf(rigWake(wf, 1, 1)).Body {
					wakes++
				}
			}
			if tc.wantWake {
				if wakes != 1 || handOff != 0 {
					t.Errorf("%d wakes dispatched, hand-off events %d; want the wake only (pending %v)", wakes, handOff, pending)
				}
			} else if wakes != 0 || handOff != 1 {
				t.Errorf("%d wakes dispatched, pending %v; want one hand-off event j-<uuid>", wakes, pending)
			}
			// The decider takes it from here.
			for i := 0; len(r.pending(wf, 1, 1)) > 0; i++ {
				if i > 10 {
					t.Fatal("the decider's wakes do not finish the loop")
				}
				if err := r.o.Rounds.HandleWake(r.ctx, []byte(store.WakeBody(wf, 1, 1))); err != nil {
					t.Fatal(err)
				}
			}
			if st := r.state(wf, 1, 1); st.Status != model.WorkflowSucceeded || st.Step("loop").Loop.Counts["SUCCEEDED"] != 1000 {
				t.Errorf("after the decider: %s, loop %+v", st.Status, st.Step("loop").Loop)
			}
		})
	}
}

// sleepThenLoop is a run that sleeps, then launches a foreach of n Titus
// iterations: the start's commit is small, the timer's large.
func sleepThenLoop(t *testing.T, n int) (*roundRig, string) {
	t.Helper()
	r := newRoundRig(t)
	wf := r.push(rigDef("sleepy", "", rigSleep("s", 5, "loop"), rigForeach("loop", n, 100, rigStep("x", "Titus"))))
	r.start(wf)
	r.putEvent(wf, 1, 1, timerEventID("s", 1, engine.PurposeSleep), engine.TimerFired{StepID: "s", Attempt: 1, Purpose: engine.PurposeSleep})
	return r, wf
}

// TestProcessFitsRoundsToTheStoresCount: a commit the store refuses as
// holding more items than one transaction (here it counts each iteration
// created three items heavier), of a round with one decision, is decided
// again in place with the budget scaled by the share the store's count
// admits, counted again before it is sent, and taken at once: close to the
// limit, not half of it. The rest follows in later rounds, each fitted
// alike.
func TestProcessFitsRoundsToTheStoresCount(t *testing.T) {
	r, wf := sleepThenLoop(t, 60)
	heavy := func(c store.Commit, n int) (int, error) { return n + 3*len(c.Children), nil }
	r.runs.items = heavy
	sent, taken := r.runs.calls(), len(r.runs.committed())
	st := r.mustProcess(wf, 1, 1)
	cs := r.runs.committed()[taken:]
	if refused := r.runs.calls() - sent - len(cs); refused < 1 || refused > len(cs) {
		t.Errorf("%d commits refused, %d taken: want each round refused at most once", refused, len(cs))
	}
	total := 0
	for i, c := range cs {
		total += len(c.Children)
		n, err := r.runs.CommitItems(r.ctx, c)
		if err != nil || n > store.MaxTransactItems || (i < len(cs)-1 && n < store.MaxTransactItems*3/4) {
			t.Errorf("commit %d of %d: %d items as the store counts them (%v), want at most %d and close to it", i+1, len(cs), n, err, store.MaxTransactItems)
		}
	}
	if total != 60 || st.Step("loop").Loop.Next != 60 {
		t.Errorf("%d iterations created in the commits taken, loop next %d; want 60", total, st.Step("loop").Loop.Next)
	}
}

// TestProcessGivesUpWhenOneStepDoesNotFit: a decision the store counts too
// large at every budget down to one event deciding one step ends Process
// with an error. Only the first commit is sent; the smaller ones are
// counted, not sent. Nothing is written and the event stays pending.
func TestProcessGivesUpWhenOneStepDoesNotFit(t *testing.T) {
	r, wf := sleepThenLoop(t, 10)
	before := r.runs.calls()
	r.runs.items = func(c store.Commit, n int) (int, error) {
		if len(c.Attempts) > 0 || len(c.Children) > 0 {
			return 1000, nil // the timer's decision, at any budget
		}
		return n, nil
	}
	_, err := r.process(wf, 1, 1)
	if !errors.Is(err, store.ErrTooManyItems) || !strings.Contains(err.Error(), "does not fit one transaction") {
		t.Fatalf("Process = %v", err)
	}
	if n := r.runs.calls() - before; n != 1 {
		t.Errorf("%d commits sent, want 1", n)
	}
	// What the decision spent (the loop's start and ten iterations: 21
	// starts) scaled by 100/1000: (2,1,1) starts, ends and worker starts'
	// weight; that decision spent one start (the loop's; an iteration
	// costs two), and one start is as small as a budget goes. The other
	// count is the round's before it bears iterations (round.bear), which
	// finds no room and bears none.
	if r.runs.counted != 2 {
		t.Errorf("%d commits counted, want 2", r.runs.counted)
	}
	if rec, st, pending := r.load(wf, 1, 1); rec.V != 1 || stepStatus(st, "s") != model.StepRunning || len(pending) != 1 {
		t.Errorf("v%d %s pending %d; want the run untouched", rec.V, statuses(st), len(pending))
	}
}

// TestProcessAbortsARunTooLargeToStore: a commit with an item past
// DynamoDB's size limit is planned again in place with the budget scaled
// by the limit's share of that item's bytes; once one event deciding one
// step is still too large the run is failed (abortRun), naming the limit,
// its steps in flight ended and its pending events consumed. A smaller
// round that fits commits as usual.
func TestProcessAbortsARunTooLargeToStore(t *testing.T) {
	tooLarge := &store.ItemTooLargeError{Item: "run state", Bytes: 512_000}
	for _, tc := range []struct {
		name     string
		failures int // 0: every commit but the abort's
		want     model.WorkflowStatus
		sent     int
	}{
		// Refused once, then the fitted round: what the decision spent
		// (ten iterations at two starts each) scaled by 400 KB / 512,000
		// bytes launches eight iterations, and the round it continues
		// in the other two.
		// (The first count is the round's before it bears iterations
		// (round.bear), which, refused, bears none.)
		{name: "one smaller round fits", failures: 2, want: model.WorkflowInProgress, sent: 3},
		// Refused, then the abort.
		{name: "nothing fits", want: model.WorkflowFailed, sent: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, wf := sleepThenLoop(t, 10)
			before := r.runs.calls()
			refused := 0
			r.runs.items = func(c store.Commit, n int) (int, error) {
				if c.Status == string(model.WorkflowFailed) || (tc.failures > 0 && refused >= tc.failures) {
					return n, nil
				}
				refused++
				return 0, tooLarge
			}
			st := r.mustProcess(wf, 1, 1)
			if n := r.runs.calls() - before; n != tc.sent {
				t.Errorf("%d commits sent, want %d", n, tc.sent)
			}
			rec, stored, pending := r.load(wf, 1, 1)
			if st.Status != tc.want || stored.Status != tc.want {
				t.Fatalf("returned %s, stored %s; want %s", st.Status, stored.Status, tc.want)
			}
			if tc.want != model.WorkflowFailed {
				return
			}
			if !strings.Contains(stored.Message, tooLarge.Error()) && !strings.Contains(rawJSON(stored), "512000 bytes") {
				t.Errorf("run message %q does not name the limit", stored.Message)
			}
			if got := r.instanceStatus(wf, 1); got != string(model.WorkflowFailed) {
				t.Errorf("instance summary %s", got)
			}
			if len(pending) != 0 || rec.SweepAt != 0 {
				t.Errorf("pending %v, sweep at %d; want everything consumed, nothing awaited", pending, rec.SweepAt)
			}
			if s := stored.Step("s"); s.Status.IsTerminal() == false {
				t.Errorf("the sleeping step is %s after the abort", s.Status)
			}
		})
	}
}

// TestAbortRunConsumesOnlyInboxEvents: abortRun deletes the run's inbox
// events with its commit, not the outcomes workers recorded on their
// attempts (nothing to delete there).
func TestAbortRunConsumesOnlyInboxEvents(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("abort", "", rigStep("a", "Titus")))
	r.start(wf)
	rec, st, _ := r.load(wf, 1, 1)
	g, _, err := r.o.Rounds.graph(r.ctx, wf, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.putEvent(wf, 1, 1, "a-x", engine.Action{Action: "STOP"})
	pending := []store.Event{{ID: "a-x"}, {ID: outcomeEventID("a", 1), Recorded: true}}
	after, more, err := r.o.Rounds.abortRun(r.ctx, g, rec, st, pending, &store.ItemTooLargeError{Item: "step attempt a/1", Bytes: 400_001}, r.clock.Now())
	if err != nil || more {
		t.Fatalf("abortRun = %v, %v", more, err)
	}
	if after.Status != model.WorkflowFailed || stepStatus(after, "a") == model.StepRunning {
		t.Errorf("after the abort: %s %s", after.Status, statuses(after))
	}
	c := r.lastCommit(wf, 1, 1)
	if fmt.Sprint(c.Consumed) != "[a-x]" {
		t.Errorf("consumed %v, want the inbox event only", c.Consumed)
	}
	if !strings.Contains(after.Message, "step attempt a/1") {
		t.Errorf("message %q does not name the item", after.Message)
	}
}

// TestProcessShrinksARefusedRoundInPlace: a round of many decisions whose
// commit the store refuses for a limit (it wrote nothing) commits half of
// them at once, planned from where its decisions stood (no load between
// the refused commit and the smaller one), and the rest follow in the next
// round.
func TestProcessShrinksARefusedRoundInPlace(t *testing.T) {
	r := newRoundRig(t)
	r.push(rigFanDef(20, false))
	r.start("fan")
	for i := range 20 {
		step := fmt.Sprintf("f%d", i)
		r.putEvent("fan", 1, 1, outcomeEventID(step, 1), succeeded(step, 1))
	}
	var mu sync.Mutex
	var log []string // "load", or "commit N" with the attempts it ends
	r.runs.failLoad = func(string, int64, int64) error {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, "load")
		return nil
	}
	first := r.runs.calls() + 1
	r.runs.failCommit = func(n int, c store.Commit) error {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, fmt.Sprintf("commit %d", len(c.Attempts)))
		if n == first {
			return store.ErrTooManyItems
		}
		return nil
	}
	st := r.mustProcess("fan", 1, 1)
	if st.Status != model.WorkflowSucceeded {
		t.Fatalf("run %s %s, want SUCCEEDED", st.Status, statuses(st))
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"load", "commit 20", "commit 10", "load", "commit 10"}
	if !slices.Equal(log, want) {
		t.Errorf("the round went %v, want %v", log, want)
	}
}

// TestBornIterationsFillTheStoresCount: iterations born finished are
// borne in the room the store's count of the round's commit leaves, so a
// wide loop's rounds fill their transactions close to the limit without
// one refused; and when the store counts more than that room foresaw (here
// each born iteration ten items heavier), the round bears none and creates
// them the ordinary way, at its next try.
func TestBornIterationsFillTheStoresCount(t *testing.T) {
	born := func(c store.Commit) (n int) {
		for _, ch := range c.Children {
			if ch.Born {
				n++
			}
		}
		return n
	}
	t.Run("fill", func(t *testing.T) {
		r := newRoundRig(t)
		wf := r.push(wideLoop("wide", 300))
		r.start(wf)
		r.mustProcess(wf, 1, 1)
		cs := r.runs.committed()
		if r.runs.calls() != len(cs) {
			t.Errorf("%d commits sent, %d taken: want none refused", r.runs.calls(), len(cs))
		}
		full := 0
		for i, c := range cs {
			n, err := r.runs.CommitItems(r.ctx, c)
			if err != nil || n > store.MaxTransactItems {
				t.Errorf("commit %d: %d items (%v)", i, n, err)
			}
			t.Logf("commit %d: %d items, %d iterations born, %d created", i, n, born(c), len(c.Children))
			if born(c) > 0 && n >= store.MaxTransactItems*9/10 {
				full++
			}
		}
		if full < 2 {
			t.Errorf("%d of %d commits bore iterations and filled 90%% of a transaction, want most", full, len(cs))
		}
	})
	t.Run("heavier than foreseen", func(t *testing.T) {
		r := newRoundRig(t)
		r.runs.items = func(c store.Commit, n int) (int, error) { return n + 10*born(c), nil }
		wf := r.push(wideLoop("wide", 300))
		sent, taken := r.runs.calls(), len(r.runs.committed())
		r.start(wf)
		r.mustProcess(wf, 1, 1)
		cs := r.runs.committed()[taken:]
		ordinary := 0
		for _, c := range cs {
			ordinary += len(c.Children) - born(c)
		}
		if ordinary == 0 {
			t.Errorf("no iteration created the ordinary way in %d commits", len(cs))
		}
		for i, c := range cs {
			if b := born(c); b > 0 {
				n, _ := r.runs.CommitItems(r.ctx, c)
				if n > store.MaxTransactItems {
					t.Errorf("commit %d bore %d iterations in %d items", i, b, n)
				}
			}
		}
		if refused := r.runs.calls() - sent - len(cs); refused < 1 {
			t.Errorf("no commit refused: the rig's heavier count was not met")
		}
		created := 0
		for _, c := range cs {
			created += len(c.Children)
		}
		if next := r.state(wf, 1, 1).Step("loop").Loop.Next; next == 0 || next != int64(created) {
			t.Errorf("loop next %d, %d iterations created", next, created)
		}
	})
}
