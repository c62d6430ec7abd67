package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/metering/awsmeter"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

// newMeteredStore is newStore whose client bills its calls to the
// context's ledger (awsmeter), as the handlers' clients do.
func newMeteredStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx, config.WithAPIOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.APIOptions = append(cfg.APIOptions, awsmeter.Middleware())
	stage := fmt.Sprintf("ops%d-%d", os.Getpid()%10000, stageSeq.Add(1))
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(stage))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	return store.New(db, res.Table.Name, store.Options{})
}

// TestCommitsRecordWhatTheyCost: a commit moves what the context's ledger
// holds into the run item with its own write units, which are what
// DynamoDB reported it consumed (the ledger keeps no correction); an
// event carries the ledger to the run; a commit that fails gives the
// ledger back with what the failed write cost.
func TestCommitsRecordWhatTheyCost(t *testing.T) {
	s := newMeteredStore(t)
	now := time.UnixMilli(1_700_000_000_000)
	pushVersion(t, s, "wf", now)
	l := metering.New()
	ctx := metering.With(context.Background(), l)
	l.Add(pricing.APIRequests, 1)
	l.Add(pricing.DynamoDBReadUnits, 2.5)
	// A state that does not compress: a run item of a few KB.
	rng := rand.New(rand.NewPCG(1, 2))
	pad := make([]byte, 3000)
	for i := range pad {
		pad[i] = "0123456789abcdef"[rng.IntN(16)]
	}
	big := `{"status":"IN_PROGRESS","pad":"` + string(pad) + `"}`
	err := s.Runs.CommitRun(ctx, store.Commit{
		WorkflowID: "wf", InstanceID: 1, RunID: 1, Status: "IN_PROGRESS", State: []byte(big),
		Instance: &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS", StartTime: now.UnixMilli(), ModifyTime: now.UnixMilli()},
		Create: &store.InstanceRecord{WorkflowID: "wf", InstanceID: 1, Version: 1, RunID: 1, UUID: "u", Status: "CREATED",
			CreateTime: now.UnixMilli(), ModifyTime: now.UnixMilli()},
		Outbox: []store.Message{{Queue: store.QueueWork, Body: "w", Direct: true}, {Queue: store.QueueEvents, Body: "e", Events: 5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if left := l.Take(); left[pricing.DynamoDBWriteUnits] != 0 {
		t.Errorf("the ledger holds %v after the commit: its estimate was not what DynamoDB reported", left)
	}
	rec, _, err := s.Runs.LoadRun(context.Background(), "wf", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The run item (KBs) and the summary (1), in a transaction (doubled);
	// the router's check of the direct message (half a read unit; its send
	// the message carries), a tenth of a publish per event.
	runUnits := float64(store.WriteUnits(rec.Bytes))
	if runUnits < 2 {
		t.Fatalf("run item read as %d bytes", rec.Bytes)
	}
	want := pricing.Usage{pricing.APIRequests: 1, pricing.DynamoDBReadUnits: 3, pricing.DynamoDBWriteUnits: 2 * (runUnits + 1),
		pricing.SNSRequests: 0.5}
	assertUsage(t, "created run", rec.Ops, want)

	// An event carries what its writer's ledger holds and its own unit.
	wl := metering.New()
	wl.Add(pricing.LambdaRequests, 0.5)
	if err := s.Runs.PutEvent(metering.With(context.Background(), wl), "wf", 1, 1, store.Event{ID: "e1", Body: []byte(`{}`), Covered: true}); err != nil {
		t.Fatal(err)
	}
	if left := wl.Take(); left != nil {
		t.Errorf("the writer's ledger holds %v after the put", left)
	}
	rec, evs, err := s.Runs.LoadRun(context.Background(), "wf", 1, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("load: %d events, %v", len(evs), err)
	}
	assertUsage(t, "event", evs[0].Ops, pricing.Usage{pricing.LambdaRequests: 0.5, pricing.DynamoDBWriteUnits: 1})

	// The commit that applies it adds it: the run item replaced is billed
	// at the larger of the two (the KBs before), the event's delete one.
	l.Add(pricing.DynamoDBReadUnits, 1)
	next := store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: rec.V, Status: "IN_PROGRESS", State: []byte(`{"status":"IN_PROGRESS"}`),
		Consumed: []string{"e1"}, Ops: metering.Sum(rec.Ops, evs[0].Ops), PriorBytes: rec.Bytes, PriorSweepAt: rec.SweepAt}
	if err := s.Runs.CommitRun(ctx, next); err != nil {
		t.Fatal(err)
	}
	if left := l.Take(); left[pricing.DynamoDBWriteUnits] != 0 {
		t.Errorf("the ledger holds %v after the second commit", left)
	}
	rec2, _, err := s.Runs.LoadRun(context.Background(), "wf", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	want = metering.Sum(want, pricing.Usage{pricing.LambdaRequests: 0.5, pricing.DynamoDBWriteUnits: 1 + 2*(runUnits+1), pricing.DynamoDBReadUnits: 1})
	assertUsage(t, "second commit", rec2.Ops, want)

	// A commit on a stale version writes nothing and records nothing: the
	// ledger gets back what it held, and what the failed write cost.
	l.Add(pricing.DynamoDBReadUnits, 7)
	err = s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: rec.V, Status: "IN_PROGRESS", State: []byte(`{}`),
		Ops: rec.Ops, PriorBytes: rec.Bytes})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale commit: %v", err)
	}
	left := l.Take()
	if left[pricing.DynamoDBReadUnits] != 7 || left[pricing.DynamoDBWriteUnits] < 1 {
		t.Errorf("after a failed commit the ledger holds %v; want the 7 read units and the failed write's units", left)
	}
	rec3, _, err := s.Runs.LoadRun(context.Background(), "wf", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	assertUsage(t, "after the failed commit", rec3.Ops, want)
}

func assertUsage(t *testing.T, what string, got, want pricing.Usage) {
	t.Helper()
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s: %s = %v, want %v (all: %v)", what, k, got[k], v, got)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s: unexpected %s = %v (all: %v)", what, k, v, got)
		}
	}
}

// TestMessageOps: a message carries its share of its send first in its
// body (the rest as it was), added to what it already carries; a body
// cannot make a run record more than maxMessagePart of an orchestration
// part, nor any other part.
func TestMessageOps(t *testing.T) {
	body := store.WithSendShare(`{"kind":"run_step","x":1}`, pricing.SQSRequests, 0.25)
	if body != `{"ops":{"sqs_requests":0.25},"kind":"run_step","x":1}` {
		t.Errorf("body %s", body)
	}
	if got := store.MessageOps([]byte(body)); len(got) != 1 || got[pricing.SQSRequests] != 0.25 {
		t.Errorf("MessageOps = %v", got)
	}
	if b := store.WithSendShare(`{}`, pricing.SQSRequests, 1); b != `{"ops":{"sqs_requests":1}}` {
		t.Errorf("empty object: %s", b)
	}
	for _, notObject := range []string{`[1]`, `"s"`, `{"a":`, ``} {
		if b := store.WithSendShare(notObject, pricing.SQSRequests, 1); b != notObject {
			t.Errorf("%q became %q", notObject, b)
		}
	}
	merged := store.WithSendShare(`{"ops":{"dynamodb_read_units":2,"sqs_fifo_requests":1},"workflow_id":"wf"}`, pricing.SQSFIFORequests, 0.5)
	if got := store.MessageOps([]byte(merged)); got[pricing.SQSFIFORequests] != 1.5 || got[pricing.DynamoDBReadUnits] != 2 {
		t.Errorf("merged %s: %v", merged, got)
	}
	forged := []byte(`{"ops":{"dynamodb_write_units":1e300,"fargate_vcpu_seconds":5,"nonsense":3,"sns_requests":-4,"sqs_requests":"x"}}`)
	if got := store.MessageOps(forged); got != nil {
		t.Errorf("a body whose ops do not decode gave %v", got)
	}
	forged = []byte(`{"ops":{"dynamodb_write_units":1e300,"fargate_vcpu_seconds":5,"nonsense":3,"sns_requests":-4}}`)
	if got := store.MessageOps(forged); len(got) != 1 || got[pricing.DynamoDBWriteUnits] != 100 {
		t.Errorf("forged ops gave %v, want the write units capped at 100 and nothing else", got)
	}
}
