package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// The crash test runs the orchestrator (API, pumps, handlers: everything
// but the emulator) in a child process, this test binary started again with
// these variables set, so that it can be SIGKILLed.
const (
	envCrashChild = "MAESTRO_E2E_CRASH_CHILD"
	envCrashAddr  = "MAESTRO_E2E_CRASH_ADDR"
	envCrashStage = "MAESTRO_E2E_CRASH_STAGE"
	envCrashState = "MAESTRO_E2E_CRASH_STATE"
)

// Recovery settings of the crashing orchestrator: short enough that the
// test ends in about a minute, the same mechanisms as in AWS.
const (
	crashVisibility = 5 * time.Second
	crashLease      = 8 * time.Second
)

// runCrashChild is the child's main: it runs the local stack against the
// emulator named by AWS_ENDPOINT_URL until it is killed.
func runCrashChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := stack.Start(ctx, stack.Options{
		Addr: os.Getenv(envCrashAddr), Stage: os.Getenv(envCrashStage), StateDir: os.Getenv(envCrashState),
		VisibilityTimeout: crashVisibility, ClaimLease: crashLease,
		SweepEvery: time.Second, EventSweepAfter: 5 * time.Second, SweepGrace: 5 * time.Second,
		Logger: log,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "crash child: up at", st.URL)
	<-ctx.Done()
	st.Close()
	return 0
}

// crashChain is a 6-step chain h1 -> s1 -> h2 -> s2 -> h3 -> s3 of Http
// steps (calling /<instance>/<step> on url) and 1-second Sleep steps.
func crashChain(id, url string) []byte {
	var steps []string
	for i := 1; i <= 3; i++ {
		next := ""
		if i < 3 {
			next = fmt.Sprintf(`,"transition":{"successors":{"h%d":"true"}}`, i+1)
		}
		steps = append(steps,
			fmt.Sprintf(`{"step":{"id":"h%d","type":"Http","retry_policy":{"error_retry_limit":3,"platform_retry_limit":3,"backoff":{"type":"FIXED_BACKOFF","error_retry_backoff_in_secs":1,"platform_retry_backoff_in_secs":1}},
			  "params":{"http":{"type":"MAP","expression":"{\"url\": \"%s/\" + workflow_instance_id + \"/\" + step_id, \"method\": \"GET\"}"}},
			  "transition":{"successors":{"s%d":"true"}}}}`, i, url, i),
			fmt.Sprintf(`{"step":{"id":"s%d","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}}%s}}`, i, next))
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"crash","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[%s]}}`,
		id, strings.Join(steps, ",")))
}

// calls counts the Http calls per instance and step.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n[strings.Trim(r.URL.Path, "/")]++
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"ok": true}`)
}

func (c *calls) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// child is the orchestrator process of the crash test.
type child struct {
	t       *testing.T
	env     []string
	url     string
	logPath string
	cmd     *exec.Cmd
}

func (c *child) start() {
	c.t.Helper()
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = c.env
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	logf.Close()
	client := &http.Client{Timeout: time.Second}
	poll(c.t, 60*time.Second, "the orchestrator answers /health", func() (bool, string) {
		resp, err := client.Get(c.url + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// kill SIGKILLs the orchestrator: no deferred call, no shutdown, no
// checkpoint or message delete that was not done already.
func (c *child) kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

func (c *child) logTail() string {
	b, _ := os.ReadFile(c.logPath)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestCrashedOrchestratorLosesNoWork: with the emulator alive, the
// orchestrator process is SIGKILLed 4 times at random moments while 20
// instances of a 6-step Http/Sleep chain run, and started again each time
// (its stream pump resumes from its checkpoints; messages it held reappear
// after their visibility timeout; claims of steps it was running expire;
// the sweeper re-drives what was lost). All 20 succeed within 2 minutes of
// the last restart, every Http step was called, and the steps called twice
// are reported.
func TestCrashedOrchestratorLosesNoWork(t *testing.T) {
	t.Parallel()
	const instances, kills = 20, 4
	hits := &calls{n: map[string]int{}}
	srv := httptest.NewServer(hits)
	defer srv.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	c := &child{t: t, url: "http://" + addr, logPath: filepath.Join(dir, "orchestrator.log")}
	c.env = append(os.Environ(),
		envCrashChild+"=1", envCrashAddr+"="+addr, envCrashState+"="+dir,
		envCrashStage+"="+fmt.Sprintf("crash%d", os.Getpid()%100000),
		"AWS_ENDPOINT_URL="+emulator.Endpoint, "AWS_REGION="+emulator.Region)
	c.start()
	defer func() {
		if c.cmd.ProcessState == nil {
			c.kill()
		}
		if t.Failed() {
			t.Logf("orchestrator log (tail):\n%s", c.logTail())
		}
	}()
	s := &system{t: t, st: &stack.Stack{URL: c.url}, client: &http.Client{Timeout: 30 * time.Second}}
	wf := s.push(crashChain("crash-chain", srv.URL))
	ids := make([]int64, instances)
	for i := range ids {
		ids[i] = s.start(wf, "").WorkflowInstanceID
	}
	// The kills come at random moments of the run: when the Http calls
	// made so far reach thresholds drawn at random, in increasing order,
	// between the first and the last of the 60 calls.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	at := make([]int, kills)
	for k := range at {
		at[k] = 1 + k*(3*instances-10)/kills + rng.IntN((3*instances-10)/kills)
	}
	for k, n := range at {
		poll(t, 2*time.Minute, fmt.Sprintf("%d Http calls made", n), func() (bool, string) {
			made := hits.total()
			return made >= n, fmt.Sprintf("%d made", made)
		})
		c.kill()
		t.Logf("kill %d: orchestrator SIGKILLed after %d Http calls", k+1, hits.total())
		c.start()
	}
	restarted := time.Now()
	poll(t, 2*time.Minute, "all instances end", func() (bool, string) {
		var open []string
		for _, id := range ids {
			v := s.instance(wf, id)
			switch v.Status {
			case "SUCCEEDED":
			case "FAILED", "STOPPED", "TIMED_OUT":
				t.Fatalf("instance %d ended %s: %v", id, v.Status, v.StepStatuses)
			default:
				open = append(open, fmt.Sprintf("%d:%s", id, v.Status))
			}
		}
		return len(open) == 0, fmt.Sprintf("%d still open: %v", len(open), open)
	})
	t.Logf("all %d instances SUCCEEDED %.1f s after the last restart", instances, time.Since(restarted).Seconds())
	hits.mu.Lock()
	defer hits.mu.Unlock()
	twice := 0
	for _, id := range ids {
		for i := 1; i <= 3; i++ {
			switch n := hits.n[fmt.Sprintf("%d/h%d", id, i)]; {
			case n == 0:
				t.Errorf("instance %d: step h%d was never called", id, i)
			case n > 1:
				twice++
			}
		}
	}
	t.Logf("Http steps called more than once: %d of %d (a worker killed during its call runs it again once its claim expires)", twice, 3*instances)
}
