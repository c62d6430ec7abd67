package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// bigState is a run state of n steps; done of them SUCCEEDED, the next ten
// RUNNING, with a payload that makes each entry ~100 bytes.
func bigState(t *testing.T, n, done int) ([]byte, map[string]bool) {
	t.Helper()
	steps := make([]engine.StepState, n)
	unsettled := map[string]bool{}
	for i := range steps {
		st := model.StepNotCreated
		switch {
		case i < done:
			st = model.StepSucceeded
		case i < done+10:
			st = model.StepRunning
		}
		id := fmt.Sprintf("chain%d_step%d", i%10, i/10)
		if st != model.StepSucceeded {
			unsettled[id] = true
		}
		steps[i] = engine.StepState{StepID: id, Status: st, StartTime: 1_795_000_000_000 + int64(i)*137, Attempt: 1}
	}
	b, err := json.Marshal(engine.Instance{WorkflowID: "wf", Seq: int64(done), Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	return b, unsettled
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// partition returns the sizes of a run's item and its page items.
func partition(t *testing.T, db *dynamodb.Client, table, wf string, inst int64) (runBytes int, pages int) {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{
		TableName:              aws.String(table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("R#%s#%d", wf, inst)},
			":p":  &ddbtypes.AttributeValueMemberS{Value: "RUN#000001"},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if it["sk"].(*ddbtypes.AttributeValueMemberS).Value == "RUN#000001" {
			runBytes = store.ItemSize(it)
		} else {
			pages++
		}
	}
	return runBytes, pages
}

// TestPagedRunStateReadsBackWholeAndKeepsTheRunItemSmall commits the
// decisions of a 300-step run through the store and reads each back with
// every reader: the state is whole, the run item stays as small at the
// end as at the start, and a commit that lost its race leaves no page.
func TestPagedRunStateReadsBackWholeAndKeepsTheRunItemSmall(t *testing.T) {
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t)
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	now := time.Now()
	pushVersion(t, s, "wf", now)
	rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state,
		FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	inst := rec.InstanceID
	const n = 300
	var early, late int // the largest run item in the first and second half of the run
	for done := 0; done <= n; done += 10 {
		run, events, err := s.Runs.LoadRun(ctx, "wf", inst, 1)
		if err != nil {
			t.Fatal(err)
		}
		st, unsettled := bigState(t, n, done)
		c := store.Commit{WorkflowID: "wf", InstanceID: inst, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS",
			State: st, Pages: run.Pages, Unsettled: unsettled}
		for _, e := range events {
			c.Consumed = append(c.Consumed, e.ID)
		}
		if done == 150 {
			// A racing commit decided on the same version loses; the
			// pages it put are deleted.
			_, pagesBefore := partition(t, db, s.Table(), "wf", inst)
			stale := c
			stale.ExpectV--
			stale.State, stale.Unsettled = bigState(t, n, n)
			if err := s.Runs.CommitRun(ctx, stale); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("stale commit: %v", err)
			}
			if _, pagesAfter := partition(t, db, s.Table(), "wf", inst); pagesAfter != pagesBefore {
				t.Fatalf("a commit that lost left pages: %d, then %d", pagesBefore, pagesAfter)
			}
			// A commit past the transaction limit is refused before it
			// sends anything, not even the pages its state would take:
			// refused on a context already canceled, with no page left.
			refused, cancel := context.WithCancel(ctx)
			cancel()
			tooMany := c
			tooMany.State, tooMany.Unsettled = bigState(t, n, n)
			for i := range store.MaxTransactItems {
				tooMany.Attempts = append(tooMany.Attempts, store.Attempt{StepID: fmt.Sprintf("x%03d", i), Attempt: 1, Status: "STOPPED"})
			}
			if err := s.Runs.CommitRun(refused, tooMany); !errors.Is(err, store.ErrTooManyItems) {
				t.Fatalf("a commit of %d attempts: %v, want ErrTooManyItems", len(tooMany.Attempts), err)
			}
			if _, pagesAfter := partition(t, db, s.Table(), "wf", inst); pagesAfter != pagesBefore {
				t.Fatalf("a refused commit wrote pages: %d, then %d", pagesBefore, pagesAfter)
			}
		}
		if err := s.Runs.CommitRun(ctx, c); err != nil {
			t.Fatal(err)
		}
		size, pages := partition(t, db, s.Table(), "wf", inst)
		if pages == 0 {
			t.Fatalf("a %d-step run is not paged", n)
		}
		if done < n/2 {
			early = max(early, size)
		} else {
			late = max(late, size)
		}
		// Every reader reads the whole state.
		got, _, err := s.Runs.LoadRun(ctx, "wf", inst, 1)
		if err != nil || !sameJSON(t, got.State, st) {
			t.Fatalf("after %d steps: LoadRun: same %v, %v", done, err == nil && sameJSON(t, got.State, st), err)
		}
		quiet, ok, err := s.Runs.LoadQuietRun(ctx, "wf", inst, 1)
		if err != nil || !ok || !sameJSON(t, quiet.State, st) {
			t.Fatalf("after %d steps: LoadQuietRun: quiet %v, %v", done, ok, err)
		}
		runs, err := s.Runs.GetRuns(ctx, []store.RunKey{{WorkflowID: "wf", InstanceID: inst, RunID: 1}})
		if err != nil || !sameJSON(t, runs[store.RunKey{WorkflowID: "wf", InstanceID: inst, RunID: 1}].State, st) {
			t.Fatalf("after %d steps: GetRuns: %v", done, err)
		}
	}
	// An event makes the run not quiet, as for a run kept whole.
	if err := s.Runs.PutEvent(ctx, "wf", inst, 1, store.Event{ID: "x", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Runs.LoadQuietRun(ctx, "wf", inst, 1); err != nil || ok {
		t.Fatalf("a paged run with an event: quiet %v, %v", ok, err)
	}
	whole, _ := bigState(t, n, n)
	t.Logf("run item: at most %d bytes in the run's first half, %d in its second; the whole state is %d bytes of JSON", early, late, len(whole))
	if late > early+256 {
		t.Fatalf("the run item grew from %d to %d bytes as the run's steps settled", early, late)
	}
}
