package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/resources"
)

func TestProvisionIsIdempotent(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	first, spec := provisionStage(t, cfg)
	second, err := Provision(ctx, cfg, spec)
	if err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("second Provision returned\n%+v\nfirst returned\n%+v", second, first)
	}

	// Every name, URL and ARN is filled in, and the JSON form carries them.
	raw, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"streamArn":"arn:`, `"decisionDlq":{"name":"` + spec.Queues.DecisionDLQ.Name, `"schedulerGroup":{"name":"` + spec.SchedulerGroup, `"signalsSubscriptionArn":"arn:`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("JSON %s lacks %s", raw, want)
		}
	}
	if strings.Contains(string(raw), `""`) {
		t.Errorf("JSON has an empty field: %s", raw)
	}

	t.Run("changed queue settings are applied", func(t *testing.T) {
		changed := spec
		changed.Queues.Work.VisibilityTimeout = 45 * time.Second
		if _, err := Provision(ctx, cfg, changed); err != nil {
			t.Fatalf("Provision with a changed queue: %v", err)
		}
		out, err := sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(first.Queues.Work.URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Attributes["VisibilityTimeout"]; got != "45" {
			t.Errorf("visibility = %s, want 45", got)
		}
		if _, err := Provision(ctx, cfg, spec); err != nil { // and back
			t.Fatal(err)
		}
	})

	t.Run("table", func(t *testing.T) {
		ddb := dynamodb.NewFromConfig(cfg)
		desc, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.Table.Name)})
		if err != nil {
			t.Fatal(err)
		}
		tb := desc.Table
		if ss := tb.StreamSpecification; ss == nil || !aws.ToBool(ss.StreamEnabled) || ss.StreamViewType != ddbtypes.StreamViewTypeNewAndOldImages {
			t.Errorf("stream = %+v", tb.StreamSpecification)
		}
		if aws.ToString(tb.LatestStreamArn) != first.Table.StreamARN {
			t.Errorf("stream ARN %s, provision said %s", aws.ToString(tb.LatestStreamArn), first.Table.StreamARN)
		}
		if tb.BillingModeSummary == nil || tb.BillingModeSummary.BillingMode != ddbtypes.BillingModePayPerRequest {
			t.Errorf("billing = %+v", tb.BillingModeSummary)
		}
		if len(tb.GlobalSecondaryIndexes) != 1 || aws.ToString(tb.GlobalSecondaryIndexes[0].IndexName) != resources.GSI1 {
			t.Fatalf("indexes = %+v", tb.GlobalSecondaryIndexes)
		}
		gsi := tb.GlobalSecondaryIndexes[0]
		if aws.ToString(gsi.KeySchema[0].AttributeName) != "gsi1pk" || aws.ToString(gsi.KeySchema[1].AttributeName) != "gsi1sk" ||
			gsi.Projection.ProjectionType != ddbtypes.ProjectionTypeKeysOnly {
			t.Errorf("gsi1 = %+v", gsi)
		}
		ttl, err := ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(spec.Table.Name)})
		if err != nil {
			t.Fatal(err)
		}
		if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != "ttl" || d.TimeToLiveStatus != ddbtypes.TimeToLiveStatusEnabled {
			t.Errorf("ttl = %+v", ttl.TimeToLiveDescription)
		}
	})

	t.Run("queues", func(t *testing.T) {
		client := sqs.NewFromConfig(cfg)
		q := first.Queues
		tests := []struct {
			info       QueueInfo
			visibility string
			retention  string
			fifo       bool
			dlqARN     string
		}{
			{q.Decision, "30", "345600", true, q.DecisionDLQ.ARN},
			{q.DecisionDLQ, "30", "1209600", true, ""},
			{q.Work, "60", "345600", false, q.WorkDLQ.ARN},
			{q.WorkDLQ, "30", "1209600", false, ""},
			{q.SignalIngest, "30", "345600", false, q.SignalIngestDLQ.ARN},
			{q.SignalIngestDLQ, "30", "1209600", false, ""},
		}
		for _, tt := range tests {
			out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
				QueueUrl: aws.String(tt.info.URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
			})
			if err != nil {
				t.Fatalf("%s: %v", tt.info.Name, err)
			}
			a := out.Attributes
			if a["VisibilityTimeout"] != tt.visibility || a["MessageRetentionPeriod"] != tt.retention || a["QueueArn"] != tt.info.ARN {
				t.Errorf("%s: attributes %v", tt.info.Name, a)
			}
			if (a["FifoQueue"] == "true") != tt.fifo {
				t.Errorf("%s: FifoQueue = %q", tt.info.Name, a["FifoQueue"])
			}
			if tt.dlqARN == "" {
				if a["RedrivePolicy"] != "" {
					t.Errorf("%s: unexpected redrive policy %s", tt.info.Name, a["RedrivePolicy"])
				}
				continue
			}
			var rp struct {
				Target string `json:"deadLetterTargetArn"`
				Max    any    `json:"maxReceiveCount"`
			}
			if err := json.Unmarshal([]byte(a["RedrivePolicy"]), &rp); err != nil {
				t.Fatalf("%s: redrive policy %q: %v", tt.info.Name, a["RedrivePolicy"], err)
			}
			if rp.Target != tt.dlqARN || fmt.Sprint(rp.Max) != "5" {
				t.Errorf("%s: redrive policy %s, want target %s and max 5", tt.info.Name, a["RedrivePolicy"], tt.dlqARN)
			}
		}
	})

	t.Run("subscription", func(t *testing.T) {
		client := sns.NewFromConfig(cfg)
		out, err := client.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(first.Topics.Signals.ARN)})
		if err != nil {
			t.Fatal(err)
		}
		var subs []snstypes.Subscription
		for _, s := range out.Subscriptions {
			if aws.ToString(s.Endpoint) == first.Queues.SignalIngest.ARN {
				subs = append(subs, s)
			}
		}
		if len(subs) != 1 {
			t.Fatalf("queue is subscribed %d times, want once: %+v", len(subs), out.Subscriptions)
		}
		attrs, err := client.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: subs[0].SubscriptionArn})
		if err != nil {
			t.Fatal(err)
		}
		if attrs.Attributes["RawMessageDelivery"] != "true" {
			t.Errorf("RawMessageDelivery = %q", attrs.Attributes["RawMessageDelivery"])
		}
	})

	t.Run("bucket", func(t *testing.T) {
		client := s3.NewFromConfig(cfg, UsePathStyle)
		out, err := client.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(spec.Bucket.Name)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.QueueConfigurations) != 1 || aws.ToString(out.QueueConfigurations[0].QueueArn) != first.Queues.SignalIngest.ARN {
			t.Fatalf("queue notifications = %+v", out.QueueConfigurations)
		}
		var events []string
		for _, e := range out.QueueConfigurations[0].Events {
			events = append(events, string(e))
		}
		if strings.Join(events, ",") != "s3:ObjectCreated:*,s3:ObjectRemoved:*" {
			t.Errorf("events = %v", events)
		}
	})

	t.Run("scheduler group", func(t *testing.T) {
		out, err := scheduler.NewFromConfig(cfg).GetScheduleGroup(ctx, &scheduler.GetScheduleGroupInput{Name: aws.String(spec.SchedulerGroup)})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.Arn) != first.SchedulerGroup.ARN {
			t.Errorf("group ARN %s, provision said %s", aws.ToString(out.Arn), first.SchedulerGroup.ARN)
		}
	})
}

func TestProvisionRejectsInvalidSpec(t *testing.T) {
	spec := resources.ForStage("Bad_Stage")
	_, err := Provision(context.Background(), testConfig(t), spec)
	if err == nil || !strings.Contains(err.Error(), "invalid stage") {
		t.Fatalf("err = %v, want an invalid stage error", err)
	}
}

// isS3TestEvent reports whether a message is the s3:TestEvent S3 sends when
// notifications are configured.
func isS3TestEvent(m sqstypes.Message) bool {
	return strings.Contains(aws.ToString(m.Body), `"s3:TestEvent"`)
}

func TestS3ObjectEventsReachSignalIngest(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	res, spec := provisionStage(t, cfg)
	s3c := s3.NewFromConfig(cfg, UsePathStyle)
	q := sqs.NewFromConfig(cfg)

	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(spec.Bucket.Name), Key: aws.String("signals/table-a/part=1"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(spec.Bucket.Name), Key: aws.String("signals/table-a/part=1")}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	msgs := receiveN(t, q, res.Queues.SignalIngest.URL, 2, 10*time.Second, func(m sqstypes.Message) bool { return !isS3TestEvent(m) })
	if len(msgs) != 2 {
		t.Fatalf("got %d object events, want 2", len(msgs))
	}
	var names []string
	for _, m := range msgs {
		var ev events.S3Event
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || len(ev.Records) != 1 {
			t.Fatalf("body %s: %v", aws.ToString(m.Body), err)
		}
		r := ev.Records[0]
		if r.S3.Bucket.Name != spec.Bucket.Name || !strings.Contains(r.S3.Object.Key, "table-a") {
			t.Errorf("event for %s/%s", r.S3.Bucket.Name, r.S3.Object.Key)
		}
		names = append(names, r.EventName)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "ObjectCreated:") || !strings.Contains(joined, "ObjectRemoved:") {
		t.Errorf("event names = %v, want a created and a removed event", names)
	}
}

func TestSNSSignalsReachSignalIngest(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	res, _ := provisionStage(t, cfg)
	body := `{"name":"db/table_a","params":{"dt":"20260101"}}`
	_, err := sns.NewFromConfig(cfg).Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(res.Topics.Signals.ARN),
		Message:  aws.String(body),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"signal": {DataType: aws.String("String"), StringValue: aws.String("db/table_a")},
		},
	})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	msgs := receiveN(t, sqs.NewFromConfig(cfg), res.Queues.SignalIngest.URL, 1, 10*time.Second, func(m sqstypes.Message) bool { return !isS3TestEvent(m) })
	if len(msgs) != 1 {
		for _, m := range msgs {
			t.Logf("message: %s %v", aws.ToString(m.Body), m.Attributes)
		}
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	if got := aws.ToString(msgs[0].Body); got != body {
		t.Errorf("body = %s, want the raw message %s", got, body)
	}
	if a, ok := msgs[0].MessageAttributes["signal"]; !ok || aws.ToString(a.StringValue) != "db/table_a" {
		t.Errorf("message attributes = %+v", msgs[0].MessageAttributes)
	}
}
