package stack

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

var discard = slog.New(slog.DiscardHandler)

// call sends a request to the stack's API and decodes a JSON answer into
// out (when not nil); it returns the status.
func call(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return resp.StatusCode
}

// sweeps records the message ids of the sweeps the stack hands its worker.
type sweeps struct {
	mu  sync.Mutex
	ids []string
}

func (s *sweeps) hook(next localstack.SQSHandler) localstack.SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, m := range ev.Records {
			if strings.HasPrefix(m.MessageId, "sweep-") && m.Body == orchestrator.SweepBody {
				s.mu.Lock()
				s.ids = append(s.ids, m.MessageId)
				s.mu.Unlock()
			}
		}
		return next(ctx, ev)
	}
}

func (s *sweeps) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

// TestStartRunsAWorkflowAndCloses: a stack started on a given emulator
// serves /health naming its stage, runs a pushed workflow to its end
// through its pumps (the instance recording the local principal), moves
// its clock through POST /local/clock, plays the sweep schedule, goes idle,
// and on Close stops answering but leaves the emulator it did not start.
func TestStartRunsAWorkflowAndCloses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stage := uniqueStage(t)
	clock := localstack.NewManualClock()
	var sw sweeps
	st, err := Start(ctx, Options{Emulator: emulator, Addr: "127.0.0.1:0", Stage: stage, Clock: clock, Logger: discard,
		SweepEvery: 100 * time.Millisecond, Hooks: Hooks{Worker: sw.hook}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	if !strings.HasPrefix(st.URL, "http://127.0.0.1:") || strings.HasSuffix(st.URL, ":0") {
		t.Errorf("URL %q, want the port the listener got", st.URL)
	}

	var health struct {
		Status    string `json:"status"`
		Endpoint  string `json:"aws_endpoint"`
		Resources struct {
			Stage string `json:"stage"`
		} `json:"resources"`
	}
	if code := call(t, "GET", st.URL+"/health", "", &health); code != http.StatusOK {
		t.Fatalf("GET /health: %d", code)
	}
	if health.Resources.Stage != stage || health.Endpoint != emulator.Endpoint {
		t.Errorf("health names stage %q at %q, want %q at %q", health.Resources.Stage, health.Endpoint, stage, emulator.Endpoint)
	}

	api := st.URL + "/api/v3/workflows"
	if code := call(t, "POST", api, `{"workflow":{"id":"stack-smoke","steps":[
	  {"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":"true"}}}},
	  {"step":{"id":"b","type":"NoOp"}}]}}`, nil); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("push: %d", code)
	}
	var started struct {
		InstanceID int64 `json:"workflow_instance_id"`
	}
	if code := call(t, "POST", api+"/stack-smoke/versions/latest/actions/start", `{"initiator":{"type":"manual"}}`, &started); code >= 300 {
		t.Fatalf("start: %d", code)
	}
	var inst orchestrator.InstanceView
	localstack.Eventually(t, time.Minute, "succeeded instance", func() bool {
		call(t, "GET", api+"/stack-smoke/instances/1", "", &inst)
		return inst.Status == "SUCCEEDED"
	})
	if inst.Initiator == nil || inst.Initiator.Principal != LocalPrincipal {
		t.Errorf("initiator %+v, want principal %q", inst.Initiator, LocalPrincipal)
	}

	before := clock.Now()
	if code := call(t, "POST", st.URL+"/local/clock", `{"advance_seconds": 60}`, nil); code != http.StatusOK {
		t.Errorf("POST /local/clock: %d", code)
	}
	if moved := clock.Now().Sub(before); moved != time.Minute {
		t.Errorf("the clock moved %v, want 1m0s", moved)
	}

	localstack.Eventually(t, 30*time.Second, "two sweeps", func() bool { return len(sw.seen()) >= 2 })
	if ids := sw.seen(); ids[0] != "sweep-1" || ids[1] != "sweep-2" {
		t.Errorf("sweeps %v, want sweep-1, sweep-2, ...", ids)
	}
	if err := st.WaitIdle(ctx); err != nil {
		t.Errorf("WaitIdle: %v", err)
	}
	if err := st.WaitSchedulesSeen(ctx); err != nil {
		t.Errorf("WaitSchedulesSeen: %v", err)
	}

	closed = true
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get(st.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("the API still answers after Close: %s", resp.Status)
	}
	if resp, err := client.Get(emulator.Endpoint); err != nil {
		t.Errorf("the emulator the stack did not start stopped with it: %v", err)
	} else {
		resp.Body.Close()
	}
}

// TestClockRouteNeedsAnAdvancingClock: with a clock that cannot be moved
// (the system clock) the stack has no /local/clock route.
func TestClockRouteNeedsAnAdvancingClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Start(ctx, Options{Emulator: emulator, Addr: "127.0.0.1:0", Stage: uniqueStage(t), Clock: localstack.SystemClock{}, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if code := call(t, "POST", st.URL+"/local/clock", `{"advance_seconds": 60}`, nil); code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
		t.Errorf("POST /local/clock: %d, want no such route", code)
	}
}

// TestStartErrors: Start refuses bad options with an error naming the
// problem, and returns no stack.
func TestStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"invalid stage", Options{Stage: "Bad_Stage"}, `invalid stage "Bad_Stage"`},
		{"address in use", Options{Addr: busy.Addr().String()}, "listen on " + busy.Addr().String()},
		{"image entry without a registry", Options{Addr: "127.0.0.1:0", ECSImages: []string{"busybox"}}, `"busybox"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			opts := tt.opts
			opts.Emulator, opts.Logger = emulator, discard
			if opts.Stage == "" {
				opts.Stage = uniqueStage(t)
			}
			st, err := Start(ctx, opts)
			if err == nil {
				st.Close()
				t.Fatal("Start succeeded")
			}
			if st != nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Start: %v, %v; want no stack and an error naming %q", st, err, tt.wantErr)
			}
		})
	}
}
