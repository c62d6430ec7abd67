package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

// TestWorkerWrittenEnds: only the worker holding a RUNNING attempt's claim
// writes its end; the end carries a wake naming the attempt and reads back
// as a finished attempt with the worker's entries counted; an attempt with
// neither an end nor a recorded outcome is not one. A decision that
// rewrites the end replaces the worker's entries and takes the wake and the
// marks off the item, which then reads as finished no more.
func TestWorkerWrittenEnds(t *testing.T) {
	s, raw := newStoreRaw(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	createRun(t, s, "wf")
	start := &store.AttemptStart{Body: []byte(`{"status":"RUNNING"}`), Timeline: [][]byte{[]byte(`"CREATED"`), []byte(`"RUNNING"`)}}
	for _, step := range []string{"a", "b"} {
		if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt(step), "tok-"+step, now, now.Add(time.Minute), start); err != nil {
			t.Fatal(err)
		}
	}
	end := store.AttemptEnd{Status: "SUCCEEDED", Body: []byte(`{"status":"SUCCEEDED","outputs":{"x":1}}`),
		Timeline: [][]byte{[]byte(`"FINISHING"`), []byte(`"SUCCEEDED"`)}}
	if err := s.Attempts.FinishAttempt(ctx, firstAttempt("a"), "tok-b", end, true); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("end written without the claim: %v, want ErrClaimLost", err)
	}
	if err := s.Attempts.FinishAttempt(ctx, firstAttempt("a"), "tok-a", end, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Attempts.FinishAttempt(ctx, firstAttempt("a"), "tok-a", end, true); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("second end of an attempt no longer RUNNING: %v, want ErrClaimLost", err)
	}
	fs, err := s.Attempts.FinishedAttempts(ctx, []store.AttemptRef{firstAttempt("b"), firstAttempt("a"), firstAttempt("a"), firstAttempt("missing")})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Ref != firstAttempt("a") || fs[0].WorkerEntries != 2 || fs[0].Outcome != nil ||
		fs[0].Attempt.Status != "SUCCEEDED" || string(fs[0].Attempt.Body) != string(end.Body) || len(fs[0].Attempt.Timeline) != 4 {
		t.Fatalf("finished attempts %+v; want a alone, SUCCEEDED with 2 worker entries of 4", fs)
	}
	// The wake it carries names the attempt: its keys say which.
	ob, ok := raw("S#000001#a#0001")["ob"].(*types.AttributeValueMemberS)
	if !ok {
		t.Fatal("the end carries no outbox")
	}
	msgs, err := store.OutboxFromImage(map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("R#wf#1"),
		"sk": events.NewStringAttribute("S#000001#a#0001"), "ob": events.NewStringAttribute(ob.Value)})
	if want := store.FinishedWakeMessage(firstAttempt("a")); err != nil || len(msgs) != 1 || msgs[0] != want {
		t.Fatalf("outbox %+v, %v; want %+v", msgs, err, want)
	}
	if item := raw("S#000001#a#0001"); item["claim"] != nil || item["lease"] != nil {
		t.Errorf("the end keeps the claim: %v", item)
	}
	// A decision rewrites it: its entries replace the worker's.
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: 1, Status: "IN_PROGRESS", State: []byte(`{}`),
		Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "FATALLY_FAILED", Body: []byte(`{"status":"FATALLY_FAILED"}`),
			Timeline: [][]byte{[]byte(`"CREATED"`), []byte(`"RUNNING"`), []byte(`"FATALLY_FAILED"`)}, ReplaceTimeline: true}}}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Attempts.GetAttempt(ctx, "wf", 1, 1, "a", 1)
	if err != nil {
		t.Fatal(err)
	}
	var tl []string
	for _, e := range a.Timeline {
		tl = append(tl, string(e))
	}
	if a.Status != "FATALLY_FAILED" || strings.Join(tl, ",") != `"CREATED","RUNNING","FATALLY_FAILED"` {
		t.Fatalf("rewritten attempt %s, timeline %s", a.Status, tl)
	}
	if item := raw("S#000001#a#0001"); item["ob"] != nil || item["wn"] != nil {
		t.Fatalf("rewritten attempt keeps its wake or its worker mark: %v", item)
	}
	if fs, err := s.Attempts.FinishedAttempts(ctx, []store.AttemptRef{firstAttempt("a")}); err != nil || len(fs) != 0 {
		t.Fatalf("finished attempts after the rewrite: %+v, %v; want none", fs, err)
	}
}

// TestDeferredAttemptWrittenWhole: an attempt run unclaimed is written once,
// at its end, as a claim and an end would have left it (FinishDeferredAttempt
// against ClaimAttempt + FinishAttempt on a twin); a second write, or one
// after another worker's claim or a decision's write, loses (ErrClaimLost);
// without a wake it reads as finished with the worker's entries counted.
func TestDeferredAttemptWrittenWhole(t *testing.T) {
	s, raw := newStoreRaw(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	createRun(t, s, "wf")
	start := store.AttemptStart{Body: []byte(`{"status":"RUNNING"}`), Timeline: [][]byte{[]byte(`"CREATED"`), []byte(`"RUNNING"`)}}
	end := store.AttemptEnd{Status: "SUCCEEDED", Body: []byte(`{"status":"SUCCEEDED","outputs":{"x":1}}`),
		Timeline: [][]byte{[]byte(`"FINISHING"`), []byte(`"SUCCEEDED"`)}}

	// The twin, claimed then ended.
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("twin"), "tok", now, now.Add(time.Minute), &start); err != nil {
		t.Fatal(err)
	}
	if err := s.Attempts.FinishAttempt(ctx, firstAttempt("twin"), "tok", end, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Attempts.FinishDeferredAttempt(ctx, firstAttempt("a"), start, end, false); err != nil {
		t.Fatal(err)
	}
	twin, whole := raw("S#000001#twin#0001"), raw("S#000001#a#0001")
	delete(twin, "sk")
	delete(whole, "sk")
	if !reflect.DeepEqual(twin, whole) {
		for k := range twin {
			if !reflect.DeepEqual(twin[k], whole[k]) {
				t.Errorf("attribute %s written whole %#v, claimed and ended %#v", k, whole[k], twin[k])
			}
		}
		for k := range whole {
			if _, ok := twin[k]; !ok {
				t.Errorf("attribute %s written whole only: %#v", k, whole[k])
			}
		}
	}
	if err := s.Attempts.FinishDeferredAttempt(ctx, firstAttempt("a"), start, end, false); !errors.Is(err, store.ErrClaimLost) {
		t.Errorf("second write: %v, want ErrClaimLost", err)
	}
	// Another worker claimed it first (a swept run sent it again).
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("b"), "tok-b", now, now.Add(time.Minute), &start); err != nil {
		t.Fatal(err)
	}
	if err := s.Attempts.FinishDeferredAttempt(ctx, firstAttempt("b"), start, end, true); !errors.Is(err, store.ErrClaimLost) {
		t.Errorf("write over another worker's claim: %v, want ErrClaimLost", err)
	}
	fs, err := s.Attempts.FinishedAttempts(ctx, []store.AttemptRef{firstAttempt("a"), firstAttempt("b")})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Ref != firstAttempt("a") || fs[0].WorkerEntries != 2 || fs[0].Attempt.Status != "SUCCEEDED" || len(fs[0].Attempt.Timeline) != 4 {
		t.Fatalf("finished attempts %+v; want a alone, SUCCEEDED with 2 worker entries of 4", fs)
	}
	// With a wake, it carries the end's outbox.
	if err := s.Attempts.FinishDeferredAttempt(ctx, firstAttempt("c"), start, end, true); err != nil {
		t.Fatal(err)
	}
	if ob, ok := raw("S#000001#c#0001")["ob"].(*types.AttributeValueMemberS); !ok || ob.Value == "" {
		t.Errorf("the end written whole with a wake carries no outbox")
	}
}

// newStoreRaw is newStore with a reader of run 1 of instance 1 of workflow
// wf's items by sort key, as stored.
func newStoreRaw(t *testing.T) (*store.Store, func(sk string) map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stage := fmt.Sprintf("raw%d-%d", os.Getpid()%10000, time.Now().UnixNano()%1000000)
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(stage))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	return store.New(db, res.Table.Name, store.Options{}), func(sk string) map[string]types.AttributeValue {
		t.Helper()
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(res.Table.Name), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "R#wf#1"}, "sk": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
}
