package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// announced is one AnnounceSignal call.
type announced struct {
	A   signals.Announce
	Src orchestrator.SignalSource
}

// fakeAnnouncer records announcements; fail, when set, answers a name.
type fakeAnnouncer struct {
	mu   sync.Mutex
	got  []announced
	fail func(a signals.Announce) error
}

func (f *fakeAnnouncer) AnnounceSignal(_ context.Context, a signals.Announce, src orchestrator.SignalSource) (*orchestrator.SignalView, error) {
	if f.fail != nil {
		if err := f.fail(a); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, announced{a, src})
	return &orchestrator.SignalView{Name: a.Name, SeqID: int64(len(f.got)), Created: true}, nil
}

// fakeSQS records dead-lettered messages.
type fakeSQS struct {
	mu   sync.Mutex
	sent []*sqs.SendMessageInput
	err  error
}

func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("dlq-1")}, nil
}

const dlqURL = "http://sqs.local/000000000000/maestro-t-signal-ingest-dlq"

// s3Body is an S3 event notification as S3 sends it to a queue, for one
// object (keys URL-encoded, '+' for a space).
func s3Body(bucket, key, eventTime string) string {
	return fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
	  "eventTime":%q,"eventName":"ObjectCreated:Put","s3":{"s3SchemaVersion":"1.0","configurationId":"c",
	  "bucket":{"name":%q,"arn":"arn:aws:s3:::%s"},"object":{"key":%q,"size":42,"eTag":"0123abcd"}}}]}`,
		eventTime, bucket, bucket, key)
}

// envelope wraps a message as SNS delivers it without raw message delivery.
func envelope(typ, msg string) string {
	return fmt.Sprintf(`{"Type":%q,"MessageId":"11111111-2222-3333-4444-555555555555",
	  "TopicArn":"arn:aws:sns:us-east-1:000000000000:maestro-t-signals","Message":%q,
	  "Timestamp":"2026-01-05T00:00:00.000Z","SignatureVersion":"1","Signature":"x","SigningCertURL":"https://x","UnsubscribeURL":"https://x"}`,
		typ, msg)
}

func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i+1), Body: b, EventSource: "aws:sqs"})
	}
	return ev
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestHandleAnnounces(t *testing.T) {
	const topic = "arn:aws:sns:us-east-1:000000000000:maestro-t-signals"
	lakeObject := s3Body("lake", "events/dt%3D20260105/hour%3D00/part-0", "2026-01-05T00:00:01.000Z")
	tests := []struct {
		name  string
		rules []signals.Rule
		body  string
		want  []announced
	}{
		{
			name: "S3 object: data-lake default name and partitions",
			body: lakeObject,
			want: []announced{{
				A: signals.Announce{Name: "s3://lake/events", Params: map[string]any{
					"dt": "20260105", "hour": "00", "bucket": "lake", "key": "events/dt=20260105/hour=00/part-0",
					"size": int64(42), "etag": "0123abcd", "event_name": "ObjectCreated:Put", "event_time": "2026-01-05T00:00:01Z",
				}},
				Src: orchestrator.SignalSource{Kind: SourceS3, Detail: "s3://lake/events/dt=20260105/hour=00/part-0"},
			}},
		},
		{
			name:  "S3 object: a rule names the signal",
			rules: []signals.Rule{{Bucket: "other", Name: "nope"}, {Bucket: "lake", Prefix: "events/", Suffix: "-0", Name: "lake-events"}},
			body:  lakeObject,
			want: []announced{{
				A:   signals.Announce{Name: "lake-events"},
				Src: orchestrator.SignalSource{Kind: SourceS3, Detail: "s3://lake/events/dt=20260105/hour=00/part-0"},
			}},
		},
		{
			name: "S3 test event yields nothing",
			body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-01-05T00:00:00.000Z","Bucket":"lake","RequestId":"r","HostId":"h"}`,
		},
		{
			name: "S3 notification published through SNS",
			body: envelope("Notification", lakeObject),
			want: []announced{{
				A:   signals.Announce{Name: "s3://lake/events"},
				Src: orchestrator.SignalSource{Kind: SourceS3, Detail: "s3://lake/events/dt=20260105/hour=00/part-0"},
			}},
		},
		{
			name: "raw SNS delivery: request id from the SQS message",
			body: `{"name":"db/test/table1","params":{"dt":20260105,"region":"eu"},"owner":"etl"}`,
			want: []announced{{
				A: signals.Announce{Name: "db/test/table1", Params: map[string]any{"dt": int64(20260105), "region": "eu"},
					Payload: map[string]any{"owner": "etl"}, RequestID: "sqs:m1"},
				Src: orchestrator.SignalSource{Kind: SourceSNS},
			}},
		},
		{
			name: "SNS envelope: request id from the SNS message, topic as detail",
			body: envelope("Notification", `{"name":"orders","params":{"n":1}}`),
			want: []announced{{
				A:   signals.Announce{Name: "orders", Params: map[string]any{"n": int64(1)}, RequestID: "sns:11111111-2222-3333-4444-555555555555"},
				Src: orchestrator.SignalSource{Kind: SourceSNS, Detail: topic},
			}},
		},
		{
			name: "a request id given is kept",
			body: `{"name":"orders","params":{},"request_id":"r-1","request_time":1767571200000}`,
			want: []announced{{
				A:   signals.Announce{Name: "orders", Params: map[string]any{}, RequestID: "r-1", RequestTime: 1767571200000},
				Src: orchestrator.SignalSource{Kind: SourceSNS},
			}},
		},
		{
			name: "an announce body may carry Records in its payload",
			body: `{"name":"orders","Records":[1]}`,
			want: []announced{{
				A:   signals.Announce{Name: "orders", Payload: map[string]any{"Records": []any{json.Number("1")}}, RequestID: "sqs:m1"},
				Src: orchestrator.SignalSource{Kind: SourceSNS},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ann, q := &fakeAnnouncer{}, &fakeSQS{}
			h := New(Config{Announcer: ann, SQS: q, DLQURL: dlqURL, Rules: tt.rules, Logger: quiet()})
			resp, err := h.Handle(context.Background(), sqsEvent(tt.body))
			require.NoError(t, err)
			assert.Empty(t, resp.BatchItemFailures)
			assert.Empty(t, q.sent, "nothing is dead-lettered")
			require.Len(t, ann.got, len(tt.want))
			for i, w := range tt.want {
				got := ann.got[i]
				assert.Equal(t, w.Src, got.Src)
				assert.Equal(t, w.A.Name, got.A.Name)
				if w.A.Params != nil {
					assert.Equal(t, w.A.Params, got.A.Params)
				}
				if w.A.Payload != nil {
					assert.Equal(t, w.A.Payload, got.A.Payload)
				}
				if w.Src.Kind == SourceSNS {
					assert.Equal(t, w.A.RequestID, got.A.RequestID)
					assert.Equal(t, w.A.RequestTime, got.A.RequestTime)
				} else {
					assert.NotEmpty(t, got.A.RequestID, "S3 signals carry a derived request id")
				}
			}
		})
	}
}

func TestS3RedeliveryKeepsRequestID(t *testing.T) {
	ann := &fakeAnnouncer{}
	h := New(Config{Announcer: ann, SQS: &fakeSQS{}, DLQURL: dlqURL, Logger: quiet()})
	body := s3Body("lake", "events/dt%3D20260105/part-0", "2026-01-05T00:00:01.000Z")
	_, err := h.Handle(context.Background(), sqsEvent(body, body))
	require.NoError(t, err)
	require.Len(t, ann.got, 2)
	assert.Equal(t, ann.got[0].A.RequestID, ann.got[1].A.RequestID)

	other := s3Body("lake", "events/dt%3D20260106/part-0", "2026-01-05T00:00:01.000Z")
	_, err = h.Handle(context.Background(), sqsEvent(other))
	require.NoError(t, err)
	require.Len(t, ann.got, 3)
	assert.NotEqual(t, ann.got[0].A.RequestID, ann.got[2].A.RequestID)
}

func TestHandleDeadLetters(t *testing.T) {
	longName := strings.Repeat("a", signals.MaxNameLength) + "/dt=1/x"
	tests := []struct {
		name      string
		body      string
		fail      func(signals.Announce) error
		reason    []string // substrings of the reason
		announced int
	}{
		{name: "not JSON", body: `{"name": "orders",`, reason: []string{"body: must be a JSON object"}},
		{name: "JSON but not an object", body: `[1,2]`, reason: []string{"body: must be a JSON object, got an array"}},
		{name: "announce problems, all of them", body: `{"params":{"x":true,"y":1.5}}`,
			reason: []string{"name: is required", "params.x: must be a LONG or a STRING", "params.y:"}},
		{name: "SNS envelope of another type", body: envelope("SubscriptionConfirmation", "confirm"),
			reason: []string{`sns envelope: Type is "SubscriptionConfirmation"`}},
		{name: "malformed message inside an envelope", body: envelope("Notification", "not json"),
			reason: []string{"body: must be a JSON object"}},
		{name: "S3 record without a valid event time", body: s3Body("lake", "a/b", "yesterday"),
			reason: []string{"s3 notification: Records[0]: eventTime"}},
		{name: "S3 object whose signal name is too long", body: s3Body("lake", longName, "2026-01-05T00:00:01.000Z"),
			reason: []string{"s3://lake/" + longName[:20], "name: must be at most 512 characters"}},
		{name: "orchestrator rejects with a 4xx", body: `{"name":"orders"}`,
			fail:   func(signals.Announce) error { return orchestrator.Invalid("invalid signal", "params: too big") },
			reason: []string{"invalid signal", "params: too big"}},
		{name: "4xx wrapped", body: s3Body("lake", "a/part-0", "2026-01-05T00:00:01.000Z"),
			fail:   func(signals.Announce) error { return fmt.Errorf("ctx: %w", orchestrator.Conflict("busy")) },
			reason: []string{"s3://lake/a/part-0: busy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ann, q := &fakeAnnouncer{fail: tt.fail}, &fakeSQS{}
			h := New(Config{Announcer: ann, SQS: q, DLQURL: dlqURL, Logger: quiet()})
			resp, err := h.Handle(context.Background(), sqsEvent(tt.body))
			require.NoError(t, err)
			assert.Empty(t, resp.BatchItemFailures, "a malformed message is done, not retried")
			assert.Len(t, ann.got, tt.announced)
			require.Len(t, q.sent, 1)
			in := q.sent[0]
			assert.Equal(t, dlqURL, aws.ToString(in.QueueUrl))
			assert.Equal(t, tt.body, aws.ToString(in.MessageBody), "the original body is kept")
			reason := in.MessageAttributes[AttrReason]
			assert.Equal(t, "String", aws.ToString(reason.DataType))
			for _, want := range tt.reason {
				assert.Contains(t, aws.ToString(reason.StringValue), want)
			}
			assert.LessOrEqual(t, len(aws.ToString(reason.StringValue)), MaxReasonBytes)
			src := in.MessageAttributes[AttrSourceMessageID]
			assert.Equal(t, "String", aws.ToString(src.DataType))
			assert.Equal(t, "m1", aws.ToString(src.StringValue))
		})
	}
}

func TestHandleMixedS3Objects(t *testing.T) {
	// One notification, two objects: the valid one is announced, the
	// message goes to the DLQ naming the other.
	longKey := strings.Repeat("k", signals.MaxNameLength) + "/dt=1/x"
	body := `{"Records":[` +
		strings.TrimSuffix(strings.TrimPrefix(s3Body("lake", "ok/part-0", "2026-01-05T00:00:01Z"), `{"Records":[`), `]}`) + `,` +
		strings.TrimSuffix(strings.TrimPrefix(s3Body("lake", longKey, "2026-01-05T00:00:01Z"), `{"Records":[`), `]}`) + `]}`
	ann, q := &fakeAnnouncer{}, &fakeSQS{}
	h := New(Config{Announcer: ann, SQS: q, DLQURL: dlqURL, Logger: quiet()})
	resp, err := h.Handle(context.Background(), sqsEvent(body))
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	require.Len(t, ann.got, 1)
	assert.Equal(t, "s3://lake/ok", ann.got[0].A.Name)
	require.Len(t, q.sent, 1)
	reason := aws.ToString(q.sent[0].MessageAttributes[AttrReason].StringValue)
	assert.Contains(t, reason, "name: must be at most 512 characters")
	assert.NotContains(t, reason, "ok/part-0")
}

func TestHandleRetries(t *testing.T) {
	internal := func(signals.Announce) error { return orchestrator.Internal(errors.New("throttled")) }
	tests := []struct {
		name   string
		fail   func(signals.Announce) error
		sqsErr error
		dlq    string
		body   string
	}{
		{name: "orchestrator 5xx", fail: internal, dlq: dlqURL, body: `{"name":"orders"}`},
		{name: "orchestrator 5xx on an S3 object", fail: internal, dlq: dlqURL, body: s3Body("lake", "a/part-0", "2026-01-05T00:00:01Z")},
		{name: "an error without a status is internal", fail: func(signals.Announce) error { return context.DeadlineExceeded },
			dlq: dlqURL, body: `{"name":"orders"}`},
		{name: "a panic is the message's failure", fail: func(signals.Announce) error { panic("boom") }, dlq: dlqURL, body: `{"name":"orders"}`},
		{name: "the dead-letter send fails", sqsErr: errors.New("sqs down"), dlq: dlqURL, body: `not json`},
		{name: "no dead-letter queue configured", body: `not json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail := func(a signals.Announce) error {
				if a.Name == "fine" || tt.fail == nil {
					return nil
				}
				return tt.fail(a)
			}
			ann, q := &fakeAnnouncer{fail: fail}, &fakeSQS{err: tt.sqsErr}
			h := New(Config{Announcer: ann, SQS: q, DLQURL: tt.dlq, Logger: quiet()})
			resp, err := h.Handle(context.Background(), sqsEvent(`{"name":"fine"}`, tt.body))
			require.NoError(t, err)
			assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m2"}}, resp.BatchItemFailures)
			assert.Empty(t, q.sent)
			require.Len(t, ann.got, 1, "the good message of the batch is announced")
			assert.Equal(t, "fine", ann.got[0].A.Name)
		})
	}
}

func TestHandleBatch(t *testing.T) {
	// 25 messages, more than the parallelism: every good one announced,
	// every bad one dead-lettered, the failing ones reported.
	var bodies []string
	var wantFailed []string
	for i := 1; i <= 25; i++ {
		switch i % 3 {
		case 0:
			bodies = append(bodies, fmt.Sprintf(`{"name":"n%d","params":{"i":%d}}`, i, i))
		case 1:
			bodies = append(bodies, fmt.Sprintf(`{"name":"fail%d"}`, i))
			wantFailed = append(wantFailed, fmt.Sprintf("m%d", i))
		default:
			bodies = append(bodies, `{"params":{}}`)
		}
	}
	ann := &fakeAnnouncer{fail: func(a signals.Announce) error {
		if strings.HasPrefix(a.Name, "fail") {
			return orchestrator.Internal(errors.New("down"))
		}
		return nil
	}}
	q := &fakeSQS{}
	h := New(Config{Announcer: ann, SQS: q, DLQURL: dlqURL, Parallelism: 3, Logger: quiet()})
	resp, err := h.Handle(context.Background(), sqsEvent(bodies...))
	require.NoError(t, err)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	slices.Sort(wantFailed)
	assert.Equal(t, wantFailed, failed)
	assert.Len(t, ann.got, 8)
	assert.Len(t, q.sent, 8)
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"0123456789abc", 10, "0123456..."},
		{"ééééé", 8, "éé..."}, // 2 bytes each: a cut inside a rune moves back
	}
	for _, tt := range tests {
		got := truncate(tt.in, tt.n)
		assert.Equal(t, tt.want, got, "truncate(%q, %d)", tt.in, tt.n)
		assert.LessOrEqual(t, len(got), tt.n)
		assert.True(t, utf8.ValidString(got))
	}
	long := strings.Repeat("problem; ", 500)
	assert.Len(t, truncate(long, MaxReasonBytes), MaxReasonBytes)
}
