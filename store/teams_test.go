package store_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

// TestChangeEventsOfGrantsAndTeams: the changes of a workflow's grant and
// of the teams carry their events to the stream router in an outbox: a
// grant's in its head's, with the definition sequence; every team change's
// in the teams' counter item, numbered by the teams' sequence, a deleted
// team's too (a deleted item's image carries nothing). Each names the
// caller, and a team's names the team and what became of it, no workflow.
// The counter counts the teams; team items carry no outbox of their own.
func TestChangeEventsOfGrantsAndTeams(t *testing.T) {
	s, raw := newStoreAnyRaw(t)
	ctx := caller.With(context.Background(), "arn:aws:iam::123456789012:user/admin")
	now := time.UnixMilli(1_900_000_000_000)
	outbox := func(pk, sk string) []events.Event {
		t.Helper()
		ob, ok := raw(pk, sk)["ob"].(*types.AttributeValueMemberS)
		if !ok {
			t.Fatalf("%s %s carries no outbox", pk, sk)
		}
		msgs, err := store.OutboxFromImage(map[string]lambdaevents.DynamoDBAttributeValue{"ob": lambdaevents.NewStringAttribute(ob.Value)})
		if err != nil || len(msgs) != 1 || msgs[0].Queue != store.QueueEvents {
			t.Fatalf("outbox of %s %s: %+v, %v", pk, sk, msgs, err)
		}
		evs, err := events.DecodeBatch(msgs[0].Body)
		if err != nil {
			t.Fatalf("events of %s %s: %v", pk, sk, err)
		}
		return evs
	}

	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Now: now, Access: []byte(`{"owners":["team:data"]}`)}); err != nil {
		t.Fatal(err)
	}
	if acl, ok := raw("WF#wf", "HEAD")["acl"].(*types.AttributeValueMemberS); !ok || acl.Value != `{"owners":["team:data"]}` {
		t.Fatalf("the head's acl attribute: %v", raw("WF#wf", "HEAD")["acl"])
	}
	if err := s.Definitions.PutAccess(ctx, "wf", []byte(`{"owners":["team:ml"]}`), now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want := events.Definition(events.AccessChanged, "wf", 0, 2, now.Add(time.Second).UnixMilli())
	want.Principal = "arn:aws:iam::123456789012:user/admin"
	if got := outbox("WF#wf", "HEAD"); len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
		t.Errorf("the grant change's events %+v, want %+v", got, want)
	}

	for i, step := range []struct {
		do     func() error
		status string
		count  string
	}{
		{func() error {
			_, err := s.Teams.PutTeam(ctx, store.Team{Name: "data", Members: []string{"arn:aws:iam::123456789012:user/a"}}, now)
			return err
		}, events.TeamCreated, "1"},
		{func() error { _, err := s.Teams.PutTeam(ctx, store.Team{Name: "data"}, now); return err }, events.TeamReplaced, "1"},
		{func() error { return s.Teams.DeleteTeam(ctx, "data", now) }, events.TeamDeleted, "0"},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		want := events.TeamChange("data", step.status, int64(i+1), now.UnixMilli())
		want.Principal = "arn:aws:iam::123456789012:user/admin"
		if got := outbox("TEAMS", "COUNT"); len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
			t.Errorf("change %d's events %+v, want %+v", i, got, want)
		}
		if n, ok := raw("TEAMS", "COUNT")["n"].(*types.AttributeValueMemberN); !ok || n.Value != step.count {
			t.Errorf("change %d: the counter says %v teams, want %s", i, raw("TEAMS", "COUNT")["n"], step.count)
		}
		if item := raw("TEAMS", "T#data"); item != nil && item["ob"] != nil {
			t.Errorf("change %d: the team item carries an outbox", i)
		}
	}
}

// newStoreAnyRaw returns a store on a new table and a reader of its items
// as stored.
func newStoreAnyRaw(t *testing.T) (*store.Store, func(pk, sk string) map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(fmt.Sprintf("tm%d-%d", os.Getpid()%10000, stageSeq.Add(1))))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	return store.New(db, res.Table.Name, store.Options{}), func(pk, sk string) map[string]types.AttributeValue {
		t.Helper()
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(res.Table.Name), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
}
