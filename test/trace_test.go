package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestTraceFollowsARun starts a run with an X-Ray trace header, as API
// Gateway sends it, and follows the trace id: the answer names it, the
// instance and its foreach iterations keep it, every work message of the
// run reaches the worker with it as its AWSTraceHeader (a Sleep's timer
// through the stream, Http steps sent directly), and the worker's log lines
// carry it with the workflow, instance, run and step ids.
//
// It runs alone, not side by side with the others: in one run of the
// package with every test parallel on two loaded cores, one run_step
// record reached the worker without its AWSTraceHeader (and its step's log
// line without the trace id); alone it passed. The cause is not found yet.
func TestTraceFollowsARun(t *testing.T) {
	logs := &localstack.SyncBuffer{}
	var mu sync.Mutex
	headers := map[string][]string{} // work kind -> AWSTraceHeader of each record
	hook := func(next localstack.SQSHandler) localstack.SQSHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			mu.Lock()
			for _, r := range ev.Records {
				kind := "?"
				if i := strings.Index(r.Body, `"kind":"`); i >= 0 {
					kind, _, _ = strings.Cut(r.Body[i+8:], `"`)
				}
				headers[kind] = append(headers[kind], r.Attributes["AWSTraceHeader"])
			}
			mu.Unlock()
			return next(ctx, ev)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true}`) }))
	defer srv.Close()
	s := startSystem(t, stack.Options{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Hooks:  stack.Hooks{Worker: hook},
	})
	call := fmt.Sprintf(`{"type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}}`, srv.URL)
	wf := s.push([]byte(`{"properties":{"owner":"trace"},"workflow":{"id":"traced","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}},"transition":{"successors":{"fetch":"true"}}}},
	  {"step":{"id":"fetch",` + call[1:] + `,"transition":{"successors":{"each":"true"}}}},
	  {"foreach":{"id":"each","params":{"loop_params":{"value":{"i":{"value":[1,2],"type":"LONG_ARRAY"}},"type":"MAP"}},
	    "steps":[{"step":{"id":"inner",` + call[1:] + `}}]}}]}}`))

	const root = "1-67891233-abcdef012345678901234567"
	req, _ := http.NewRequest(http.MethodPost, s.st.URL+"/api/v3/workflows/"+wf+"/versions/latest/actions/start", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amzn-Trace-Id", "Root="+root+";Parent=53995c3f42cd8ad8;Sampled=1")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Amzn-Trace-Id") != "Root="+root {
		t.Fatalf("start: %d, trace header %q", resp.StatusCode, resp.Header.Get("X-Amzn-Trace-Id"))
	}
	if v := s.wait(wf, 1, 60*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("run: %s %v", v.Status, v.StepStatuses)
	}
	var view orchestrator.InstanceView
	s.do("GET", "/api/v3/workflows/"+wf+"/instances/1", nil, &view)
	if view.TraceID != root {
		t.Errorf("instance trace_id %q, want %q", view.TraceID, root)
	}
	var steps []orchestrator.StepView
	s.do("GET", "/api/v3/workflows/"+wf+"/instances/1/steps", nil, &steps)
	for _, st := range steps {
		if st.Foreach == nil {
			continue
		}
		for it := int64(1); it <= 2; it++ {
			var iv orchestrator.InstanceView
			s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d", st.Foreach.WorkflowID, it), nil, &iv)
			if iv.TraceID != root {
				t.Errorf("iteration %d trace_id %q, want %q", it, iv.TraceID, root)
			}
		}
	}
	// A request without a trace header starts a trace of its own.
	other := s.start(wf, "")
	if v := s.wait(wf, other.WorkflowInstanceID, 60*time.Second); v.TraceID == "" || v.TraceID == root {
		t.Errorf("a second run's trace id %q", v.TraceID)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, kind := range []string{"timer", "run_step"} {
		if len(headers[kind]) == 0 {
			t.Errorf("no %s message reached the worker (%v)", kind, headers)
		}
	}
	with := 0
	for kind, hs := range headers {
		for _, h := range hs {
			if h == "Root="+root {
				with++
			} else if kind == "timer" || kind == "run_step" {
				if !strings.HasPrefix(h, "Root=1-") {
					t.Errorf("a %s message without a trace header: %q", kind, h)
				}
			}
		}
	}
	if with < 3 {
		t.Errorf("%d messages carried the run's trace, want the timer and the Http steps' (%v)", with, headers)
	}
	var stepLines int
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `msg="step attempt ran"`) && strings.Contains(line, "trace_id="+root) {
			stepLines++
			for _, want := range []string{"workflow_id=", "instance_id=", "run_id=", "step_id=", "attempt=", "outcome="} {
				if !strings.Contains(line, want) {
					t.Errorf("log line lacks %s: %s", want, line)
				}
			}
		}
	}
	if stepLines < 3 {
		t.Errorf("%d worker log lines carry the run's trace, want one per Http step (3)\n%s", stepLines, logs.String())
	}
	t.Logf("%d work messages carried the trace; %d step log lines", with, stepLines)
}
