package router_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	changes "github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/lambdas/router"
	"github.com/maestro-serverless/maestro/store"
)

// TestRouterPublishesTeamAndGrantEvents: a team's change event, which names
// no workflow, and a workflow grant's change are published with Maestro's
// events on, in this runtime's shape only (Maestro has no such events),
// with no empty message attribute (SNS refuses one): a team event's
// attributes name its type, its team and what became of it.
func TestRouterPublishesTeamAndGrantEvents(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rte")
	sq, sn := sqs.NewFromConfig(cfg), sns.NewFromConfig(cfg)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(res.Table.Name + "-events")})
	if err != nil {
		t.Fatal(err)
	}
	qa, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(res.Topics.Events.ARN), Protocol: aws.String("sqs"),
		Endpoint: aws.String(qa.Attributes["QueueArn"]), Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	r := router.New(router.Config{SNS: sn, EventsTopicARN: res.Topics.Events.ARN, MaestroEvents: true, Now: time.Now})
	team := changes.TeamChange("data", changes.TeamDeleted, 4, 1000)
	grant := changes.Definition(changes.AccessChanged, "wf", 0, 7, 1000)
	body, err := changes.EncodeBatch([]changes.Event{team, grant})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(1, store.Message{Queue: store.QueueEvents, Body: body}),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
	}
	got := map[string]map[string]string{}
	for {
		out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10,
			MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			var e changes.Event
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &e); err != nil {
				t.Fatalf("message %s: %v", aws.ToString(m.Body), err)
			}
			attrs := map[string]string{}
			for k, v := range m.MessageAttributes {
				attrs[k] = aws.ToString(v.StringValue)
			}
			got[e.ID] = attrs
			if _, err := sq.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]map[string]string{
		"teams/4":         {"event_type": "team_changed", "team": "data", "status": "DELETED"},
		"wf/definition/7": {"event_type": "access_changed", "workflow_id": "wf"},
	}
	if len(got) != len(want) {
		t.Fatalf("published %v, want %v", got, want)
	}
	for id, w := range want {
		for k, v := range w {
			if got[id][k] != v {
				t.Errorf("event %s: attribute %s = %q, want %q (all: %v)", id, k, got[id][k], v, got[id])
			}
		}
		if len(got[id]) != len(w) {
			t.Errorf("event %s: attributes %v, want %v", id, got[id], w)
		}
	}
}
