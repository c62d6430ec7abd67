// Package e2e holds end-to-end tests: each test starts the whole system on the
// local stack (the real handlers, pumps and an AWS emulator) and talks to it
// over HTTP, as a user would.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// emulator is shared by every test of the package; each test provisions its
// own stage on it.
var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	if os.Getenv(envCrashChild) != "" {
		os.Exit(runCrashChild()) // the orchestrator process of the crash test
	}
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

var stageSeq atomic.Int64

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// system is one running local stack and an HTTP client for it.
type system struct {
	t      *testing.T
	st     *stack.Stack
	client *http.Client
}

func startSystem(t *testing.T, opts stack.Options) *system {
	t.Helper()
	if opts.Emulator == nil {
		opts.Emulator = emulator
	}
	opts.Addr = "127.0.0.1:0"
	opts.Stage = fmt.Sprintf("e2e%d-%d", os.Getpid()%100000, stageSeq.Add(1))
	if opts.Logger == nil {
		// Warnings are kept and printed when the test fails, so a failure
		// under load shows what the handlers saw.
		logs := &tailBuffer{max: 64 << 10}
		var w io.Writer = logs
		if testing.Verbose() {
			w = io.MultiWriter(logs, os.Stderr)
		}
		opts.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
		t.Cleanup(func() {
			if t.Failed() && !testing.Verbose() {
				t.Logf("stack warnings (last %d KB):\n%s", logs.max>>10, logs.String())
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start local stack: %v", err)
	}
	t.Cleanup(func() {
		st.Close()
		// The stage's items would stay in the emulator's memory for the
		// rest of the package and slow every later test down.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg, err := st.Emulator.AWSConfig(ctx)
		if err == nil {
			err = localstack.Deprovision(ctx, cfg, st.Resources)
		}
		if err != nil {
			t.Logf("delete the stage's resources: %v", err)
		}
	})
	return &system{t: t, st: st, client: &http.Client{Timeout: 30 * time.Second}}
}

// startIsolatedSystem starts a stack on an emulator of its own, closed
// when the test ends, for a test that writes tens of thousands of items or
// runs beside others (t.Parallel): moto serves requests one at a time and
// DynamoDB Local writes on one database thread, so parallel tests sharing
// them stretch each other's runs (the mixed sample took 258 s instead of
// 217 beside four others on the package's emulator).
// Amazon's DynamoDB Local keeps every stream record it was ever sent, of
// deleted tables too, and reads through all of them on every write (to
// find the stream's open shard): after the 1,098-iteration sample, each
// commit of the next test took ~0.2 s on its single database thread and
// the 500-iteration loop's children waited tens of seconds for theirs.
func startIsolatedSystem(t *testing.T, opts stack.Options) *system {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	em, err := localstack.Discover(ctx, localstack.DiscoverOptions{})
	if err != nil {
		t.Fatalf("start an emulator: %v", err)
	}
	// Registered first, so it runs after the stack's own cleanup.
	t.Cleanup(func() {
		if err := em.Close(); err != nil {
			t.Logf("close the emulator: %v", err)
		}
	})
	opts.Emulator = em
	return startSystem(t, opts)
}

// do sends a request and decodes a JSON answer into out (when non-nil).
func (s *system) do(method, path string, body []byte, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.st.URL+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

func (s *system) push(def []byte) string {
	s.t.Helper()
	var out struct {
		WorkflowDefinition orchestrator.DefinitionView `json:"workflow_definition"`
	}
	var errBody map[string]any
	if code := s.do("POST", "/api/v3/workflows", def, &out); code != http.StatusOK {
		s.do("POST", "/api/v3/workflows", def, &errBody)
		s.t.Fatalf("push: status %d: %v", code, errBody)
	}
	return out.WorkflowDefinition.Metadata.WorkflowID
}

func (s *system) start(wf string, body string) orchestrator.StartResponse {
	s.t.Helper()
	var out orchestrator.StartResponse
	if code := s.do("POST", "/api/v3/workflows/"+wf+"/versions/latest/actions/start", []byte(body), &out); code != http.StatusOK {
		s.t.Fatalf("start %s: status %d", wf, code)
	}
	return out
}

func (s *system) instance(wf string, id int64) orchestrator.InstanceView {
	s.t.Helper()
	var v orchestrator.InstanceView
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d", wf, id), nil, &v); code != http.StatusOK {
		s.t.Fatalf("get instance %s/%d: status %d", wf, id, code)
	}
	return v
}

func (s *system) steps(wf string, id int64) map[string]orchestrator.StepView {
	s.t.Helper()
	var list []orchestrator.StepView
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps", wf, id), nil, &list); code != http.StatusOK {
		s.t.Fatalf("get steps %s/%d: status %d", wf, id, code)
	}
	out := map[string]orchestrator.StepView{}
	for _, v := range list {
		out[v.StepID] = v
	}
	return out
}

// pollInterval is how often the tests re-check a condition.
const pollInterval = 50 * time.Millisecond

// poll checks cond every pollInterval until it holds, and fails the test
// with what cond last said if it does not within timeout. It is the suite's
// only way to wait for something to happen; to check that something did not
// happen, wait for the stack to be idle (system.idle) and look.
func poll(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s (%s)", what, timeout, last)
		}
		<-ticker.C
	}
}

// idle waits until the stack has nothing left to do now (see
// stack.Stack.WaitIdle): whatever the test caused has run.
func (s *system) idle(t testing.TB) {
	t.Helper()
	// Longer than the longest visibility timeout (the work queue's 60 s): a
	// batch whose handler failed under load returns after it, and that is
	// still work the stack has to do.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if err := s.st.WaitIdle(ctx); err != nil {
		t.Fatalf("the local stack did not become idle: %v", err)
	}
}

// wait polls an instance until it is terminal or the timeout passes.
func (s *system) wait(wf string, id int64, timeout time.Duration) orchestrator.InstanceView {
	s.t.Helper()
	var v orchestrator.InstanceView
	poll(s.t, timeout, fmt.Sprintf("instance %s/%d ends", wf, id), func() (bool, string) {
		v = s.instance(wf, id)
		switch v.Status {
		case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
			return true, ""
		}
		return false, fmt.Sprintf("still %s: steps %v; timeline tail %s", v.Status, v.StepStatuses, timelineTail(v.Timeline, 8))
	})
	return v
}

// timelineTail formats the last n entries of an instance timeline, so a
// run that did not end says what it last did.
func timelineTail(tl []orchestrator.TimelineEntry, n int) string {
	var b strings.Builder
	for _, e := range tl[max(len(tl)-n, 0):] {
		fmt.Fprintf(&b, "\n\t%s %s %s", time.UnixMilli(e.Time).UTC().Format("15:04:05.000"), e.Status, e.Message)
	}
	return b.String()
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ranOnce asserts that a step has one attempt whose timeline enters RUNNING
// exactly once and a terminal status exactly once.
func ranOnce(t *testing.T, v orchestrator.StepView) {
	t.Helper()
	if v.StepAttemptID != 1 {
		t.Errorf("step %s: attempt %d, want 1", v.StepID, v.StepAttemptID)
	}
	running, terminal := 0, 0
	for _, e := range v.Timeline {
		switch e.Status {
		case "RUNNING":
			running++
		case "SUCCEEDED", "FAILED", "FATALLY_FAILED", "USER_FAILED", "PLATFORM_FAILED", "UNSATISFIED":
			terminal++
		}
	}
	if running != 1 || terminal != 1 {
		var b strings.Builder
		for _, e := range v.Timeline {
			fmt.Fprintf(&b, " %s", e.Status)
		}
		t.Errorf("step %s: RUNNING %d times and terminal %d times, want 1 each; timeline:%s", v.StepID, running, terminal, b.String())
	}
}
