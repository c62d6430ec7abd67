package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// healthResources is the part of GET /health the ingest tests read.
type healthResources struct {
	Endpoint  string `json:"aws_endpoint"`
	Resources struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
	} `json:"resources"`
}

// signalInstance reads a signal instance; it reports the HTTP status.
func (s *system) signalInstance(name, seq string) (orchestrator.SignalView, int) {
	var v orchestrator.SignalView
	code := s.do("GET", "/api/v3/signals/"+url.PathEscape(name)+"/instances/"+seq, nil, &v)
	return v, code
}

// waitSignal polls until signal name has an instance.
func (s *system) waitSignal(t *testing.T, name string, timeout time.Duration) orchestrator.SignalView {
	t.Helper()
	var v orchestrator.SignalView
	poll(t, timeout, "an instance of signal "+name, func() (bool, string) {
		var code int
		v, code = s.signalInstance(name, "latest")
		return code == http.StatusOK, fmt.Sprintf("HTTP %d", code)
	})
	return v
}

// waitQueueDrained polls until a queue holds no message, visible or in flight.
func waitQueueDrained(t *testing.T, client *sqs.Client, queueURL string, timeout time.Duration) {
	t.Helper()
	poll(t, timeout, "queue "+queueURL+" drained", func() (bool, string) {
		out, err := client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(queueURL),
			AttributeNames: []sqstypes.QueueAttributeName{
				sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		a := out.Attributes
		return a[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)] == "0" &&
			a[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)] == "0", fmt.Sprint(a)
	})
}

// TestSignalIngest drives the signal-ingest queue's sources end to end: an
// object put into the signals bucket, a message published to the signals
// topic, a malformed message, and a redelivered S3 notification.
func TestSignalIngest(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	ctx := context.Background()
	var health healthResources
	if code := s.do("GET", "/health", nil, &health); code != http.StatusOK {
		t.Fatalf("GET /health: HTTP %d", code)
	}
	bucket := health.Resources.Bucket.Name
	if bucket == "" || health.Endpoint == "" {
		t.Fatalf("GET /health names bucket %q and endpoint %q", bucket, health.Endpoint)
	}
	cfg := s.st.Emulator.TestConfig(t)
	sqsClient := sqs.NewFromConfig(cfg)
	res := s.st.Resources

	t.Run("an object put into the signals bucket triggers a workflow", func(t *testing.T) {
		name := "s3://" + bucket + "/events"
		wf := s.push(fmt.Appendf(nil, `{"properties":{"owner":"ingest","run_strategy":"parallel"},"workflow":{"id":"ingest-s3",
		  "signal_triggers":[{"definitions":{%[1]q:{"match_params":{"dt":{"value":"20260105","operator":"="}}}}}],
		  "steps":[{"step":{"id":"load","type":"NoOp","params":{
		    "dt":{"type":"STRING","expression":"params.getFromSignal('%[2]s', 'dt')"},
		    "hour":{"type":"STRING","expression":"params.getFromSignal('%[2]s', 'hour')"},
		    "key":{"type":"STRING","expression":"params.getFromSignal('%[2]s', 'key')"}}}}]}}`, name, name))

		// The S3 endpoint is the one GET /health names.
		s3Client := s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.BaseEndpoint = aws.String(health.Endpoint)
			o.UsePathStyle = true
		})
		for _, key := range []string{"events/dt=20260104/hour=23/part-0", "events/dt=20260105/hour=00/part-0"} {
			if _, err := s3Client.PutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("rows\n"),
			}); err != nil {
				t.Fatalf("put %s: %v", key, err)
			}
		}
		list := s.waitInstances(t, wf, 1, 20*time.Second) // dt=20260104 does not match
		v := s.wait(wf, list[0].WorkflowInstanceID, 20*time.Second)
		if v.Status != "SUCCEEDED" || v.Initiator == nil || v.Initiator.Type != "SIGNAL" {
			t.Fatalf("instance %s initiator %+v", v.Status, v.Initiator)
		}
		p := s.steps(wf, v.WorkflowInstanceID)["load"].Params
		if fmt.Sprint(p["dt"]) != "20260105" || fmt.Sprint(p["hour"]) != "00" || fmt.Sprint(p["key"]) != "events/dt=20260105/hour=00/part-0" {
			t.Errorf("step params from the signal: %v", p)
		}
		sig := s.waitSignal(t, name, 10*time.Second)
		if sig.Source == nil || sig.Source.Kind != "s3" || !strings.HasPrefix(sig.Source.Detail, "s3://"+bucket+"/events/dt=") {
			t.Errorf("signal source %+v", sig.Source)
		}
	})

	t.Run("a message published to the signals topic triggers a workflow", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"ingest"},"workflow":{"id":"ingest-sns",
		  "signal_triggers":[{"definitions":{"db/ingest/orders":{"match_params":{"region":{"value":"eu","operator":"="}}}}}],
		  "steps":[{"step":{"id":"s","type":"NoOp","params":{"n":{"type":"LONG","expression":"params.getFromSignal('db/ingest/orders', 'n')"}}}}]}}`))
		publish(t, cfg, res.Topics.Signals.ARN, `{"name":"db/ingest/orders","params":{"region":"eu","n":7},"note":"from sns"}`)
		list := s.waitInstances(t, wf, 1, 20*time.Second)
		v := s.wait(wf, list[0].WorkflowInstanceID, 20*time.Second)
		if v.Status != "SUCCEEDED" || v.Initiator == nil || v.Initiator.Type != "SIGNAL" {
			t.Fatalf("instance %s initiator %+v", v.Status, v.Initiator)
		}
		if got := fmt.Sprint(s.steps(wf, v.WorkflowInstanceID)["s"].Params["n"]); got != "7" {
			t.Errorf("params.getFromSignal gave %s, want 7", got)
		}
		sig := s.waitSignal(t, "db/ingest/orders", 10*time.Second)
		if sig.Source == nil || sig.Source.Kind != "sns" || fmt.Sprint(sig.Payload["note"]) != "from sns" {
			t.Errorf("signal %+v source %+v", sig, sig.Source)
		}
	})

	t.Run("a malformed message lands in the dead-letter queue", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"ingest"},"workflow":{"id":"ingest-bad",
		  "signal_triggers":[{"definitions":{"db/ingest/bad":{}}}],
		  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`))
		bad := `{"name":"db/ingest/bad","params":{"ok":true}}`
		publish(t, cfg, res.Topics.Signals.ARN, bad)

		var got *sqstypes.Message
		deadline := time.Now().Add(20 * time.Second)
		for got == nil {
			out, err := sqsClient.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(res.Queues.SignalIngestDLQ.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageAttributeNames: []string{"All"},
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Messages {
				if aws.ToString(m.Body) == bad {
					got = &m
				}
			}
			if got == nil && time.Now().After(deadline) {
				t.Fatal("the malformed message did not reach the dead-letter queue")
			}
		}
		reason := got.MessageAttributes["reason"]
		if aws.ToString(reason.DataType) != "String" || !strings.Contains(aws.ToString(reason.StringValue), "params.ok: must be a LONG or a STRING") {
			t.Errorf("reason attribute %s %q", aws.ToString(reason.DataType), aws.ToString(reason.StringValue))
		}
		if id := got.MessageAttributes["source_message_id"]; aws.ToString(id.StringValue) == "" {
			t.Error("no source_message_id attribute")
		}
		waitQueueDrained(t, sqsClient, res.Queues.SignalIngest.URL, 10*time.Second)
		s.idle(t)
		if n := len(s.instances(t, wf)); n != 0 {
			t.Errorf("%d instances started by a malformed message", n)
		}
		if _, code := s.signalInstance("db/ingest/bad", "latest"); code != http.StatusNotFound {
			t.Errorf("a malformed message stored a signal (HTTP %d)", code)
		}
	})

	t.Run("a redelivered S3 notification announces one signal", func(t *testing.T) {
		name := "s3://" + bucket + "/replays"
		wf := s.push(fmt.Appendf(nil, `{"properties":{"owner":"ingest","run_strategy":"parallel"},"workflow":{"id":"ingest-replay",
		  "signal_triggers":[{"definitions":{%q:{}}}],"steps":[{"step":{"id":"s","type":"NoOp"}}]}}`, name))
		// The notification exactly as S3 sends it (key URL-encoded).
		body, err := json.Marshal(map[string]any{"Records": []any{map[string]any{
			"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": cfg.Region, "eventTime": "2026-01-07T01:02:03.456Z",
			"eventName": "ObjectCreated:Put",
			"s3": map[string]any{
				"s3SchemaVersion": "1.0", "configurationId": "maestro-signal-ingest",
				"bucket": map[string]any{"name": bucket, "arn": "arn:aws:s3:::" + bucket},
				"object": map[string]any{"key": "replays/dt%3D20260107/part-0", "size": 5, "eTag": "d41d8cd98f00b204e9800998ecf8427e"},
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := sqsClient.SendMessage(ctx, &sqs.SendMessageInput{
				QueueUrl: aws.String(res.Queues.SignalIngest.URL), MessageBody: aws.String(string(body)),
			}); err != nil {
				t.Fatal(err)
			}
		}
		first := s.waitSignal(t, name, 20*time.Second)
		waitQueueDrained(t, sqsClient, res.Queues.SignalIngest.URL, 20*time.Second)
		s.idle(t)
		latest, _ := s.signalInstance(name, "latest")
		if latest.SeqID != first.SeqID || latest.RequestID == "" || latest.RequestID != first.RequestID {
			t.Errorf("signals of %s: first %+v, latest %+v; want one", name, first, latest)
		}
		if fmt.Sprint(latest.Params["dt"]) != "20260107" || fmt.Sprint(latest.Params["event_time"]) != "2026-01-07T01:02:03.456Z" {
			t.Errorf("signal params %v", latest.Params)
		}
		// Exactly one instance. Its number need not be 1: the two
		// deliveries race, and the loser's sequence number stays unused
		// (sequence numbers may have gaps: docs/signals.md).
		for seq := int64(1); seq <= latest.SeqID+1; seq++ {
			if _, code := s.signalInstance(name, fmt.Sprint(seq)); (code == http.StatusOK) != (seq == latest.SeqID) {
				t.Errorf("signal %s instance %d: HTTP %d", name, seq, code)
			}
		}
		s.waitInstances(t, wf, 1, 20*time.Second)
	})
}

// publish publishes a message to an SNS topic.
func publish(t *testing.T, cfg aws.Config, topicARN, msg string) {
	t.Helper()
	if _, err := sns.NewFromConfig(cfg).Publish(context.Background(), &sns.PublishInput{
		TopicArn: aws.String(topicARN), Message: aws.String(msg),
	}); err != nil {
		t.Fatalf("publish to %s: %v", topicARN, err)
	}
}
