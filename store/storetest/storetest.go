// Package storetest is the contract the orchestrator's stores keep: one
// suite of tests that runs against any implementation of
// orchestrator.Stores — package store's DynamoDB store on an emulator
// (store/contract_test.go) and store/memstore (memstore's tests) — so that
// the in-memory one cannot drift from the real one. It covers every method
// of the ten interfaces: their results, every sentinel error,
// conditional writes and their races, atomicity, orderings and cursors,
// the sweep index's due times, claims and their leases.
//
// The expectations are the DynamoDB store's behaviour, surprising parts
// included (each says so where it is one).
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
)

// Factory returns a new, empty store whose clock is now (store.Options.Now,
// memstore.Options.Now), with the default EventSweepAfter.
type Factory func(t *testing.T, now func() time.Time) orchestrator.Stores

// Start is the time every test's clock starts at (unix ms): in 2030, so
// that no item's DynamoDB TTL is in the past.
const Start = 1_900_000_000_000

// Clock is a test's clock, moved by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// H is one test's harness: its store, clock and context.
type H struct {
	*testing.T
	S     orchestrator.Stores
	Clock *Clock
	Ctx   context.Context
}

type testCase struct {
	name string
	run  func(h *H)
}

// cases returns the suite's tests, in the order Run runs them.
func cases() []testCase {
	return []testCase{
		{"Definitions/VersionsAndHead", versionsAndHead},
		{"Definitions/SetActive", setActive},
		{"Definitions/UpdateProperties", updateProperties},
		{"Definitions/ListWorkflows", listWorkflows},
		{"Definitions/DeleteAndPurge", deleteAndPurge},
		{"Definitions/DeleteBusy", deleteBusy},
		{"Definitions/PushLimits", pushLimits},
		{"Instances/CreateInstance", createInstance},
		{"Instances/ReserveInstance", reserveInstance},
		{"Instances/ReserveInstances", reserveInstances},
		{"Instances/GetInstances", getInstances},
		{"Instances/ListInstances", listInstances},
		{"Instances/ListInstancesFilteredAcrossPages", listInstancesFiltered},
		{"Instances/RunStrategyQueue", runStrategyQueue},
		{"Instances/ConcurrentStarts", concurrentStarts},
		{"Runs/CommitIsConditional", commitIsConditional},
		{"Runs/ConcurrentCommitsOneWins", concurrentCommits},
		{"Runs/CommitIsAtomic", commitIsAtomic},
		{"Runs/CommitLimits", commitLimits},
		{"Runs/CreatingCommit", creatingCommit},
		{"Runs/RunSlots", runSlots},
		{"Runs/Inbox", inbox},
		{"Runs/LoadQuietRun", loadQuietRun},
		{"Runs/CreateRun", createRun},
		{"Runs/InstanceTimeline", instanceTimeline},
		{"Runs/PagedState", pagedState},
		{"Runs/GetRunsAndLoopParams", getRunsAndLoopParams},
		{"Runs/ChildrenAndReruns", childrenAndReruns},
		{"Runs/CancelledContext", cancelledContext},
		{"Runs/ValuesAreCopies", valuesAreCopies},
		{"Attempts/Claims", claims},
		{"Attempts/StartedAttempts", startedAttempts},
		{"Attempts/DeferredStarts", deferredStarts},
		{"Attempts/WorkerEnds", workerEnds},
		{"Attempts/FinishDeferredAttempt", finishDeferred},
		{"Attempts/Reads", attemptReads},
		{"Signals/Announce", announce},
		{"Signals/FindSignal", findSignal},
		{"Signals/FindSignalScanLimit", findSignalScanLimit},
		{"Signals/Subscriptions", subscriptions},
		{"Signals/WaitersAndLineage", waitersAndLineage},
		{"Gates/Breakpoints", breakpoints},
		{"Gates/TagPermits", tagPermits},
		{"Gates/JobQueues", jobQueues},
		{"Tasks/TaskTokens", taskTokens},
		{"Tasks/WaitForTask", waitForTask},
		{"Sweeps/DueTimes", dueTimes},
		{"Sweeps/RedriveAndUnsweep", redriveAndUnsweep},
		{"Sweeps/Shards", shards},
		{"Templates/JobTemplates", jobTemplates},
		{"Access/NewWorkflowGrant", newWorkflowGrant},
		{"Access/CheckOnRetry", checkOnRetry},
		{"Access/PutAccess", putAccess},
		{"Teams/PutGetListDelete", teams},
		{"Teams/Limit", teamLimit},
		{"Backfills/CreatePutGetList", backfills},
	}
}

// Run runs the contract suite against the stores newStores makes, one new
// store per test, the tests in parallel.
func Run(t *testing.T, newStores Factory) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A result the test did not expect may make it index past a
			// slice's end: that fails this test, not the whole suite.
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			clock := &Clock{now: time.UnixMilli(Start)}
			c.run(&H{T: t, S: newStores(t, clock.Now), Clock: clock, Ctx: context.Background()})
		})
	}
}

// Now is the clock's time.
func (h *H) Now() time.Time { return h.Clock.Now() }

// Ms is the clock's time in unix ms.
func (h *H) Ms() int64 { return h.Clock.Now().UnixMilli() }

// OK fails the test now on an unexpected error.
func (h *H) OK(err error, what string, args ...any) {
	h.Helper()
	if err != nil {
		h.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// Is fails the test when err is not target.
func (h *H) Is(err, target error, what string, args ...any) {
	h.Helper()
	if !errors.Is(err, target) {
		h.Errorf("%s: got error %v, want %v", fmt.Sprintf(what, args...), err, target)
	}
}

// sentinels are the store's sentinel errors.
var sentinels = []error{store.ErrNotFound, store.ErrBadCursor, store.ErrNoSlot, store.ErrRequestTaken, store.ErrConflict,
	store.ErrTooManyItems, store.ErrItemTooLarge, store.ErrClaimLost, store.ErrDeleting, store.ErrBusy, store.ErrNotHolding,
	store.ErrTaskTokenUsed, store.ErrSignalScanLimit, store.ErrLimit}

// Plain fails the test unless err is an error that is none of the store's
// sentinels (DynamoDB refusing a malformed request, a failed condition
// package store does not name).
func (h *H) Plain(err error, what string, args ...any) {
	h.Helper()
	if err == nil {
		h.Errorf("%s: no error, want one", fmt.Sprintf(what, args...))
		return
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			h.Errorf("%s: got %v, want an error that is no sentinel", fmt.Sprintf(what, args...), err)
		}
	}
}

// TooLarge fails the test unless err is a *store.ItemTooLargeError for item.
func (h *H) TooLarge(err error, item string, what string) {
	h.Helper()
	var tl *store.ItemTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, store.ErrItemTooLarge) {
		h.Errorf("%s: got %v, want an ItemTooLargeError", what, err)
		return
	}
	if tl.Item != item || tl.Bytes <= store.MaxItemBytes {
		h.Errorf("%s: too large: item %q of %d bytes, want %q over %d", what, tl.Item, tl.Bytes, item, store.MaxItemBytes)
	}
}

// Eq fails the test when got and want differ (compared as %#v).
func (h *H) Eq(got, want any, what string, args ...any) {
	h.Helper()
	if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
		h.Errorf("%s:\n got  %s\n want %s", fmt.Sprintf(what, args...), g, w)
	}
}

// Bytes fails the test when got is not want.
func (h *H) Bytes(got []byte, want string, what string, args ...any) {
	h.Helper()
	if !bytes.Equal(got, []byte(want)) {
		h.Errorf("%s: got %q, want %q", fmt.Sprintf(what, args...), got, want)
	}
}

// B is s as bytes.
func B(s string) []byte { return []byte(s) }

// Random returns n random bytes: a body no compression shrinks.
func Random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// RandomJSON returns a JSON object holding n random bytes in base64.
func RandomJSON(n int) []byte {
	return []byte(`{"x":"` + base64.StdEncoding.EncodeToString(Random(n)) + `"}`)
}

// Compressible returns a JSON object of about n bytes that compresses to
// almost nothing.
func Compressible(n int) []byte {
	return []byte(`{"x":"` + strings.Repeat("abcdefgh", n/8) + `"}`)
}

// Push stores a version of workflow wf, active, and returns its number.
func (h *H) Push(wf string) int64 {
	h.Helper()
	v, err := h.S.Definitions.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: wf, Definition: B(`{}`), Activate: true, Now: h.Now()})
	h.OK(err, "push %s", wf)
	return v
}

// StateOf is the initial run state of instance id.
func StateOf(id int64) ([]byte, error) { return []byte(fmt.Sprintf(`{"instance":%d}`, id)), nil }

// Start creates an instance of wf (which must have a head) with its run's
// first event "0-start", and returns it.
func (h *H) Start(wf string) *store.InstanceRecord {
	h.Helper()
	rec, created, err := h.S.Instances.CreateInstance(h.Ctx, store.NewInstance{WorkflowID: wf, Version: 1, UUID: "u", Status: "CREATED",
		State: StateOf, FirstEvent: store.Event{ID: "0-start", Body: B(`{"kind":"start"}`)}, Now: h.Now()})
	h.OK(err, "start %s", wf)
	if !created {
		h.Fatalf("start %s: not created", wf)
	}
	return rec
}

// Create commits the creation of instance inst of wf (run 1, IN_PROGRESS)
// with its slot changes as c says, and returns the commit's error.
func (h *H) Create(wf string, inst int64, c store.Commit) error {
	h.Helper()
	c.WorkflowID, c.InstanceID, c.RunID, c.Status = wf, inst, 1, "IN_PROGRESS"
	if c.State == nil {
		c.State = B(`{"created":true}`)
	}
	c.Create = &store.InstanceRecord{WorkflowID: wf, InstanceID: inst, Version: 1, RunID: 1, UUID: fmt.Sprint("u", inst), Status: "IN_PROGRESS",
		CreateTime: h.Ms(), ModifyTime: h.Ms()}
	return h.S.Runs.CommitRun(h.Ctx, c)
}

// Load reads a run and its events, failing on an error.
func (h *H) Load(wf string, inst, run int64) (*store.RunRecord, []store.Event) {
	h.Helper()
	rec, evs, err := h.S.Runs.LoadRun(h.Ctx, wf, inst, run)
	h.OK(err, "load %s/%d/%d", wf, inst, run)
	return rec, evs
}

// EventIDs returns the ids of evs.
func EventIDs(evs []store.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// Events returns the inbox of a run as "id=body" strings.
func (h *H) Events(wf string, inst, run int64) []string {
	h.Helper()
	_, evs := h.Load(wf, inst, run)
	out := []string{}
	for _, e := range evs {
		out = append(out, e.ID+"="+string(e.Body))
	}
	return out
}

// Commit commits c on run run of instance inst of wf at version v.
func (h *H) Commit(wf string, inst, run, v int64, c store.Commit) error {
	h.Helper()
	return h.S.Runs.CommitRun(h.Ctx, commitOf(wf, inst, run, v, c))
}

// commitOf is c for run run of instance inst of wf at version v, IN_PROGRESS
// with an empty state unless c says otherwise.
func commitOf(wf string, inst, run, v int64, c store.Commit) store.Commit {
	c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV = wf, inst, run, v
	if c.Status == "" {
		c.Status = "IN_PROGRESS"
	}
	if c.State == nil {
		c.State = B(`{}`)
	}
	return c
}

// Ref is the reference of attempt n of step of run 1 of instance 1 of wf.
func Ref(wf, step string, n int64) store.AttemptRef {
	return store.AttemptRef{WorkflowID: wf, InstanceID: 1, RunID: 1, StepID: step, Attempt: n}
}

// Timeline is an attempt's timeline as strings.
func Timeline(a *store.Attempt) string {
	var out []string
	for _, e := range a.Timeline {
		out = append(out, string(e))
	}
	return strings.Join(out, ",")
}

// Entries returns timeline entries as [][]byte.
func Entries(es ...string) [][]byte {
	out := make([][]byte, len(es))
	for i, e := range es {
		out[i] = []byte(e)
	}
	return out
}

// Parallel runs f(i) for i in [0, n) on 8 goroutines and fails the test on
// the first error.
func (h *H) Parallel(n int, f func(i int) error) {
	h.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		h.Fatal(err)
	}
}
