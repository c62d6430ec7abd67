package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// serve sends one request to the routes mux registers.
func serve(mux func(*http.ServeMux), method, path, body string) *httptest.ResponseRecorder {
	m := http.NewServeMux()
	mux(m)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

// errorBody is the JSON error the local routes answer.
type errorBody struct {
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Errors  []string `json:"errors"`
}

// TestClockRoute: POST /local/clock moves the stack's clock forward by
// advance_seconds (0 to 400 days) and answers the new time; anything else
// is a 400 naming the problem, and the clock stays where it was.
func TestClockRoute(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantMove   time.Duration
		wantError  string
	}{
		{name: "an hour", body: `{"advance_seconds": 3600}`, wantStatus: 200, wantMove: time.Hour},
		{name: "nothing", body: `{"advance_seconds": 0}`, wantStatus: 200},
		{name: "400 days", body: `{"advance_seconds": 34560000}`, wantStatus: 200, wantMove: maxAdvance},
		{name: "past 400 days", body: `{"advance_seconds": 34560001}`, wantStatus: 400, wantError: "advance_seconds: must be between 0 and 34560000"},
		{name: "backwards", body: `{"advance_seconds": -1}`, wantStatus: 400, wantError: "advance_seconds: must be between 0 and"},
		{name: "missing", body: `{}`, wantStatus: 400, wantError: "advance_seconds: is required"},
		{name: "null", body: `{"advance_seconds": null}`, wantStatus: 400, wantError: "advance_seconds: is required"},
		{name: "unknown field", body: `{"advance_seconds": 1, "rewind": true}`, wantStatus: 400, wantError: `unknown field "rewind"`},
		{name: "a fraction", body: `{"advance_seconds": 1.5}`, wantStatus: 400, wantError: "request body"},
		{name: "a string", body: `{"advance_seconds": "60"}`, wantStatus: 400, wantError: "request body"},
		{name: "not JSON", body: `advance 60`, wantStatus: 400, wantError: "request body"},
		// Seconds whose nanoseconds overflow an int64 must not wrap
		// around into range (2^64 ns + 290448384 ns).
		{name: "wraps around to 0.29 s", body: `{"advance_seconds": 18446744074}`, wantStatus: 400, wantError: "advance_seconds: must be between 0 and"},
		{name: "wraps around to -1 s", body: `{"advance_seconds": 9223372036854775807}`, wantStatus: 400, wantError: "advance_seconds: must be between 0 and"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := localstack.NewManualClock()
			// An emulator that cannot move queue delays: the route's
			// parsing and the clock alone (TestAdvanceClockWithoutQueueClock).
			s := &Stack{Emulator: &localstack.Emulator{Kind: localstack.KindLocalStack}, clock: clock}
			before := clock.Now()
			rec := serve(clockRoutes(s), http.MethodPost, "/local/clock", tt.body)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body.String())
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if moved := clock.Now().Sub(before); moved != tt.wantMove {
				t.Errorf("the clock moved %v, want %v", moved, tt.wantMove)
			}
			if tt.wantStatus == http.StatusOK {
				var got struct{ Now string }
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if want := clock.Now().UTC().Format(time.RFC3339Nano); got.Now != want {
					t.Errorf("now %q, want %q", got.Now, want)
				}
				return
			}
			var e errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if e.Status != 400 || len(e.Errors) != 1 || !strings.Contains(e.Errors[0], tt.wantError) {
				t.Errorf("error %+v, want one naming %q", e, tt.wantError)
			}
		})
	}
}

// TestJobEventsRoute: POST /local/job-events puts an EventBridge event on
// the work queue as the stack's EventBridge rules do in AWS
// ({"kind":"job_event","job_event":<the event>}); a body that is not such
// an event is a 400 and sends nothing; a queue that refuses is a 502.
func TestJobEventsRoute(t *testing.T) {
	ctx := context.Background()
	client := sqs.NewFromConfig(testConfig(t))
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("job-events-" + uniqueStage(t))})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(q.QueueUrl)
	const event = `{"version":"0","source":"aws.ecs","detail-type":"ECS Task State Change","detail":{"lastStatus":"STOPPED","containers":[{"exitCode":0}]}}`
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantError  string
	}{
		{name: "an ECS event", body: event, wantStatus: http.StatusAccepted},
		{name: "not JSON", body: `{"source":`, wantStatus: 400, wantError: "not a JSON object"},
		{name: "an array", body: `[]`, wantStatus: 400, wantError: "not a JSON object"},
		{name: "no source", body: `{"detail-type":"ECS Task State Change","detail":{}}`, wantStatus: 400, wantError: "needs source, detail-type and detail"},
		{name: "no detail-type", body: `{"source":"aws.batch","detail":{}}`, wantStatus: 400, wantError: "needs source, detail-type and detail"},
		{name: "no detail", body: `{"source":"aws.batch","detail-type":"Batch Job State Change"}`, wantStatus: 400, wantError: "needs source, detail-type and detail"},
		{name: "over 256 KB", body: `{"source":"aws.batch","detail-type":"x","detail":"` + strings.Repeat("a", maxJobEvent) + `"}`,
			wantStatus: 400, wantError: "at most 256 KB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(jobEventRoutes(client, url), http.MethodPost, "/local/job-events", tt.body)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body.String())
			}
			if tt.wantStatus != http.StatusAccepted {
				var e errorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != tt.wantStatus || !strings.Contains(e.Message, tt.wantError) {
					t.Errorf("error %s, want one naming %q", rec.Body.String(), tt.wantError)
				}
			}
		})
	}
	// Exactly the accepted event arrived, wrapped as a work message. Each
	// message received is deleted, and hidden for 2 s only: a receive whose
	// answer moto sent on a connection the client had just dropped
	// ("failed to discard remaining HTTP response body ... use of closed
	// network connection", seen once in CI) hid the message for the queue's
	// 30 s and the test saw none. Two rounds after the first message find
	// none more.
	var bodies []string
	deadline, after := time.Now().Add(15*time.Second), 0
	for {
		if len(bodies) > 0 {
			if after == 2 {
				break
			}
			after++
		} else if time.Now().After(deadline) {
			break
		}
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, VisibilityTimeout: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(bodies) != 1 {
		t.Fatalf("the work queue got %d messages, want 1: %q", len(bodies), bodies)
	}
	w, err := orchestrator.DecodeWork([]byte(bodies[0]))
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := w.(*orchestrator.JobEventWork); !ok || string(msg.JobEvent) != event {
		t.Errorf("work message %s, want kind job_event carrying the event as posted", bodies[0])
	}

	// A queue that does not exist: the event is not lost silently.
	rec := serve(jobEventRoutes(client, url+"-gone"), http.MethodPost, "/local/job-events", event)
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "send to the work queue") {
		t.Errorf("to a missing queue: %d %s, want 502", rec.Code, rec.Body.String())
	}
}
