package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

// stageSeq numbers the stages of this test process: each store gets
// tables of its own (a stage named from the clock collided in a CI run).
var stageSeq atomic.Int64

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return newStoreWith(t, store.Options{})
}

func newStoreWith(t *testing.T, opts store.Options) *store.Store {
	t.Helper()
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stage := fmt.Sprintf("st%d-%d", os.Getpid()%10000, stageSeq.Add(1))
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(stage))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	return store.New(db, res.Table.Name, opts)
}

func state(id int64) ([]byte, error) { return []byte(fmt.Sprintf(`{"instance":%d}`, id)), nil }

func TestVersionsAndHead(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	if _, err := s.Definitions.GetHead(ctx, "wf"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("head of a new workflow: %v", err)
	}
	for i := 1; i <= 3; i++ {
		v, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(fmt.Sprintf(`{"v":%d}`, i)), Activate: i != 3, Now: now})
		if err != nil || v != int64(i) {
			t.Fatalf("version %d: got %d, %v", i, v, err)
		}
	}
	h, err := s.Definitions.GetHead(ctx, "wf")
	if err != nil || h.Latest != 3 || h.Active != 2 || h.NextInstance != 1 {
		t.Fatalf("head %+v, %v", h, err)
	}
	rec, err := s.Definitions.GetVersion(ctx, "wf", 2)
	if err != nil || string(rec.Definition) != `{"v":2}` {
		t.Fatalf("version 2: %+v %v", rec, err)
	}
	// A large definition is compressed and read back intact.
	big := make([]byte, 50_000)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: big, Now: now}); err != nil {
		t.Fatal(err)
	}
	rec, err = s.Definitions.GetVersion(ctx, "wf", 4)
	if err != nil || string(rec.Definition) != string(big) {
		t.Fatalf("large version did not round-trip: %v", err)
	}
}

func TestConcurrentStartsGetDistinctIDsAndPushesKeepTheCounter(t *testing.T) {
	s, now := newStoreWithWorkflow(t)
	ctx := context.Background()
	const n = 16
	ids := make(chan int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, created, err := s.Instances.CreateInstance(ctx, store.NewInstance{
				WorkflowID: "wf", Version: 1, UUID: fmt.Sprint(i), Status: "CREATED", State: state,
				FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: now,
			})
			if err != nil || !created {
				t.Errorf("start %d: created=%v err=%v", i, created, err)
				return
			}
			ids <- rec.InstanceID
		}()
		if i == n/2 {
			// A push in the middle must not reset the instance counter.
			if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Now: now}); err != nil {
				t.Error(err)
			}
		}
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("instance id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct ids, want %d", len(seen), n)
	}
}

func TestRequestIDDedupes(t *testing.T) {
	s, now := newStoreWithWorkflow(t)
	ctx := context.Background()
	ni := store.NewInstance{WorkflowID: "wf", Version: 1, UUID: "u", RequestID: "req-1", Status: "CREATED", State: state,
		FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: now}
	a, created, err := s.Instances.CreateInstance(ctx, ni)
	if err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	b, created, err := s.Instances.CreateInstance(ctx, ni)
	if err != nil || created || b.InstanceID != a.InstanceID {
		t.Fatalf("second with the same request id: %+v created=%v err=%v", b, created, err)
	}
}

func TestCommitIsConditionalAndConsumesEvents(t *testing.T) {
	s, now := newStoreWithWorkflow(t)
	ctx := context.Background()
	rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, UUID: "u", Status: "CREATED", State: state,
		FirstEvent: store.Event{ID: "0-start", Body: []byte(`{"kind":"start"}`)}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// Two more events, one of them put twice: stored once.
	for _, id := range []string{"f-b", "f-a", "f-a"} {
		if err := s.Runs.PutEvent(ctx, "wf", rec.InstanceID, 1, store.Event{ID: id, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	run, events, err := s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[0-start f-a f-b]" || run.V != 1 {
		t.Fatalf("events %v at v%d", ids, run.V)
	}
	commit := store.Commit{
		WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS",
		State: []byte(`{"n":2}`), Consumed: ids,
		Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "RUNNING", Body: []byte(`{}`), Timeline: [][]byte{[]byte(`{"t":1}`)}}},
		Outbox:   []store.Message{{Queue: store.QueueWork, Body: "w"}},
	}
	if err := s.Runs.CommitRun(ctx, commit); err != nil {
		t.Fatal(err)
	}
	// The same commit again was decided on a stale version: a conflict.
	if err := s.Runs.CommitRun(ctx, commit); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit: %v, want ErrConflict", err)
	}
	run, events, err = s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
	if err != nil || run.V != 2 || len(events) != 0 || string(run.State) != `{"n":2}` {
		t.Fatalf("after commit: v%d events %d state %s err %v", run.V, len(events), run.State, err)
	}
	// A second commit appends to the attempt's timeline.
	commit2 := store.Commit{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: 2, Status: "IN_PROGRESS", State: []byte(`{}`),
		Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "SUCCEEDED", Body: []byte(`{"done":true}`), Timeline: [][]byte{[]byte(`{"t":2}`)}}}}
	if err := s.Runs.CommitRun(ctx, commit2); err != nil {
		t.Fatal(err)
	}
	a, err := s.Attempts.GetAttempt(ctx, "wf", rec.InstanceID, 1, "a", 0)
	if err != nil || a.Status != "SUCCEEDED" || len(a.Timeline) != 2 || string(a.Body) != `{"done":true}` {
		t.Fatalf("attempt %+v %v", a, err)
	}
	// Applied events deleted outside a commit (DiscardEvents): gone, the
	// others kept; discarding one that is gone already is no error.
	for _, id := range []string{"f-c", "f-d", "f-e"} {
		if err := s.Runs.PutEvent(ctx, "wf", rec.InstanceID, 1, store.Event{ID: id, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Runs.DiscardEvents(ctx, "wf", rec.InstanceID, 1, []string{"f-c", "f-e", "f-gone"}); err != nil {
		t.Fatal(err)
	}
	if _, events, err = s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1); err != nil || len(events) != 1 || events[0].ID != "f-d" {
		t.Fatalf("after discarding f-c and f-e: %+v, %v; want f-d alone", events, err)
	}
	// LoadQuietRun: not quiet while f-d waits (nor while a later run's
	// event does); quiet, with the run, once none waits.
	if rec, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 1); err != nil || quiet || rec != nil {
		t.Fatalf("with an event waiting: %+v quiet=%v %v", rec, quiet, err)
	}
	if err := s.Runs.DiscardEvents(ctx, "wf", rec.InstanceID, 1, []string{"f-d"}); err != nil {
		t.Fatal(err)
	}
	if run, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 1); err != nil || !quiet || run.V != 3 || string(run.State) != `{}` {
		t.Fatalf("with no event waiting: %+v quiet=%v %v", run, quiet, err)
	}
	if err := s.Runs.PutEvent(ctx, "wf", rec.InstanceID, 2, store.Event{ID: "f-x", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 1); err != nil || quiet {
		t.Fatalf("with a later run's event waiting: quiet=%v %v", quiet, err)
	}
	if _, _, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 9); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a run that does not exist: %v", err)
	}
	// A second run (a restart's), whose key range holds the first run's
	// item before its own events.
	if err := s.Runs.CreateRun(ctx, store.NewRun{WorkflowID: "wf", InstanceID: rec.InstanceID, PrevRun: 1, Status: "CREATED", State: []byte(`{}`), FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if run, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 2); err != nil || quiet || run != nil {
		t.Fatalf("second run, its events waiting: %+v quiet=%v %v", run, quiet, err)
	}
	if err := s.Runs.DiscardEvents(ctx, "wf", rec.InstanceID, 2, []string{"f-x", "start"}); err != nil {
		t.Fatal(err)
	}
	if run, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 2); err != nil || !quiet || run.RunID != 2 {
		t.Fatalf("second run, nothing waiting: %+v quiet=%v %v", run, quiet, err)
	}
}

// TestCommitPastTheItemLimitIsRefusedBeforeSending: a run state or an
// attempt body past DynamoDB's 400 KB is an *ItemTooLargeError naming it,
// and nothing is written (the caller can still fail the run cleanly).
func TestCommitPastTheItemLimitIsRefusedBeforeSending(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	rec, run := createRun(t, s, "big")
	// Random bytes do not compress: the gzipped body stays over the limit.
	random := make([]byte, 450_000)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	blob, _ := json.Marshal(map[string]string{"b": base64.StdEncoding.EncodeToString(random)})
	for _, tc := range []struct {
		name, item string
		commit     store.Commit
	}{
		{"state", "run state", store.Commit{WorkflowID: "big", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS", State: blob}},
		{"attempt", "step attempt a/1", store.Commit{WorkflowID: "big", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS",
			State: []byte(`{}`), Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "SUCCEEDED", Body: blob}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Runs.CommitRun(ctx, tc.commit)
			var tooLarge *store.ItemTooLargeError
			if !errors.As(err, &tooLarge) || !errors.Is(err, store.ErrItemTooLarge) || tooLarge.Item != tc.item || tooLarge.Bytes <= store.MaxItemBytes {
				t.Fatalf("commit: %v, want an ItemTooLargeError for the %s", err, tc.item)
			}
			if !strings.Contains(err.Error(), "more than DynamoDB's item size limit of 409600 bytes") {
				t.Errorf("message %q", err)
			}
			after, _, err := s.Runs.LoadRun(ctx, "big", rec.InstanceID, 1)
			if err != nil || after.V != run.V {
				t.Fatalf("after the refused commit: v%d, %v (want v%d: nothing written)", after.V, err, run.V)
			}
		})
	}
}

// TestCommitPastTheTransactionLimitIsRefused: more writes than one
// transaction holds is ErrTooManyItems, before anything is sent.
func TestCommitPastTheTransactionLimitIsRefused(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	rec, run := createRun(t, s, "many")
	c := store.Commit{WorkflowID: "many", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS", State: []byte(`{}`)}
	for i := 0; i < store.MaxTransactItems; i++ {
		c.Attempts = append(c.Attempts, store.Attempt{StepID: fmt.Sprintf("s%03d", i), Attempt: 1, Status: "STOPPED"})
	}
	if err := s.Runs.CommitRun(ctx, c); !errors.Is(err, store.ErrTooManyItems) {
		t.Fatalf("commit of %d attempts: %v, want ErrTooManyItems", len(c.Attempts), err)
	}
	c.Attempts = c.Attempts[:store.MaxTransactItems-1]
	if err := s.Runs.CommitRun(ctx, c); err != nil {
		t.Fatalf("commit of %d attempts and the run item: %v", len(c.Attempts), err)
	}
}

// createRun pushes workflow wf and creates its instance 1 with a start
// event, returning the instance and its run as stored.
// firstAttempt is attempt 1 of step in the first run of the first
// instance of workflow "wf" (createRun's).
func firstAttempt(step string) store.AttemptRef {
	return store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: step, Attempt: 1}
}

// newStoreWithWorkflow is a store with an active version of workflow
// "wf" pushed at the time it returns.
func newStoreWithWorkflow(t *testing.T) (*store.Store, time.Time) {
	t.Helper()
	s := newStore(t)
	now := time.Now()
	pushVersion(t, s, "wf", now)
	return s, now
}

// pushVersion pushes an active version of workflow wf, with an empty
// definition, at now.
func pushVersion(t *testing.T, s *store.Store, wf string, now time.Time) {
	t.Helper()
	if _, err := s.Definitions.CreateVersion(context.Background(), store.NewVersion{WorkflowID: wf, Definition: []byte(`{}`), Activate: true, Now: now}); err != nil {
		t.Fatal(err)
	}
}

func createRun(t *testing.T, s *store.Store, wf string) (*store.InstanceRecord, *store.RunRecord) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	pushVersion(t, s, wf, now)
	rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: wf, Version: 1, UUID: "u", Status: "CREATED", State: state,
		FirstEvent: store.Event{ID: "0-start", Body: []byte(`{"kind":"start"}`)}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := s.Runs.LoadRun(ctx, wf, rec.InstanceID, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rec, run
}

// TestBatchReads: GetRuns and GetAttempts read many runs and attempts at
// once, across instances and runs, more than one request's 100 keys; what
// does not exist is absent.
func TestBatchReads(t *testing.T) {
	s, now := newStoreWithWorkflow(t)
	ctx := context.Background()
	const n = 120
	var keys []store.RunKey
	var refs []store.AttemptRef
	for i := 1; i <= n; i++ {
		rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state,
			FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: 1, Status: "IN_PROGRESS",
			State: []byte(fmt.Sprintf(`{"i":%d}`, i)), Attempts: []store.Attempt{{StepID: "s", Attempt: 2, Status: "SUCCEEDED",
				Body: []byte(fmt.Sprintf(`{"params":{"v":%d}}`, i)), Timeline: [][]byte{[]byte(`{"t":1}`)}}}}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, store.RunKey{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1})
		refs = append(refs, store.AttemptRef{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, StepID: "s", Attempt: 2})
	}
	keys = append(keys, store.RunKey{WorkflowID: "wf", InstanceID: 1, RunID: 2}, store.RunKey{WorkflowID: "nope", InstanceID: 1, RunID: 1})
	refs = append(refs, store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1})
	sums, err := s.Instances.GetInstances(ctx, "wf", []int64{1, 2, n, n + 1})
	if err != nil || len(sums) != 3 || sums[n].InstanceID != n || sums[n].RunID != 1 {
		t.Fatalf("instances: %+v %v; want 1, 2 and %d", sums, err, n)
	}
	runs, err := s.Runs.GetRuns(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := s.Attempts.GetAttempts(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n || len(attempts) != n {
		t.Fatalf("%d runs and %d attempts, want %d of each", len(runs), len(attempts), n)
	}
	for i, k := range keys[:n] {
		r := runs[k]
		if r == nil || r.V != 2 || r.Status != "IN_PROGRESS" || string(r.State) != fmt.Sprintf(`{"i":%d}`, i+1) {
			t.Fatalf("run %+v: %+v", k, r)
		}
		a := attempts[refs[i]]
		if a == nil || a.StepID != "s" || a.Attempt != 2 || a.Status != "SUCCEEDED" || string(a.Body) != fmt.Sprintf(`{"params":{"v":%d}}`, i+1) || len(a.Timeline) != 1 {
			t.Fatalf("attempt %+v: %+v", refs[i], a)
		}
	}
}

// TestListWorkflows pages through the workflow directory in id order; a
// workflow's later versions do not list it twice.
func TestListWorkflows(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	for _, id := range []string{"wf-c", "wf-a", "wf-b", "wf-a"} {
		if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: id, Definition: []byte(`{}`), Properties: []byte(`{"owner":"o"}`), Activate: true, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	heads, next, err := s.Definitions.ListWorkflows(ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 || heads[0].WorkflowID != "wf-a" || heads[0].Latest != 2 || heads[1].WorkflowID != "wf-b" || next != "wf-b" {
		t.Fatalf("page 1: %+v next %q", heads, next)
	}
	if string(heads[0].Properties) != `{"owner":"o"}` {
		t.Errorf("properties %s", heads[0].Properties)
	}
	heads, next, err = s.Definitions.ListWorkflows(ctx, next, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 1 || heads[0].WorkflowID != "wf-c" || next != "" {
		t.Fatalf("page 2: %+v next %q", heads, next)
	}
}
