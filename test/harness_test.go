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

// emulator is the package's shared emulator, for the tests that make AWS
// resources of their own beside their stack's (a callback queue, a Batch
// queue) and pass it as stack.Options.Emulator, and for the crash test's
// child process. Other stacks run on emulators from emulatorPool.
var emulator *localstack.Emulator

// emulators hands out emulators for the tests' stacks.
var emulators = &emulatorPool{started: make(chan startedEmulator, 64)}

func TestMain(m *testing.M) {
	if os.Getenv(envCrashChild) != "" {
		os.Exit(runCrashChild()) // the orchestrator process of the crash test
	}
	os.Exit(localstack.RunWithEmulator(runThenClose{m, emulators}, func(e *localstack.Emulator) {
		emulator = e
		// Two ahead: one takes about 3 s to start.
		emulators.startAhead()
		emulators.startAhead()
	}))
}

// runThenClose runs the tests, then stops the emulators started ahead and
// waits for those being stopped.
type runThenClose struct {
	m    *testing.M
	pool *emulatorPool
}

func (r runThenClose) Run() int {
	code := r.m.Run()
	r.pool.close()
	return code
}

// Go resumes a package's parallel tests in the order they are declared,
// files by name, -parallel at a time. The files of the longest tests (the
// 1,098-iteration sample, the loops of 500 and 1,000 iterations) are named
// a_… so that those tests start first: declared last, they started when
// the others had taken the slots and ran alone for the package's last two
// minutes (an end-to-end run of 356 s had two or three tests left from
// 215 s on).

// stacksPerEmulator is how many stacks share one emulator of
// emulatorPool, and usersPerEmulator how many of them at once: as many as
// run side by side (make test's -parallel 8). With 8 and 3 the package
// started 27 emulators and used 724 CPU-seconds (user and system, its
// emulators' included); with 24 and 8, 15 emulators and 510 CPU-seconds
// (16 and 6: 17, 600), on two cores, 2026-11-28. Every emulator costs its
// start (about 4 CPU-seconds: a JVM and an interpreter) and its idle polls
// while it lives, and the suite is bound by CPU.
const stacksPerEmulator, usersPerEmulator = 24, 8

// emulatorPool starts emulators (moto_server and DynamoDB Local), ahead of
// need, while earlier tests run. A stack shares one with the stacks
// started around it (stacksPerEmulator, at most usersPerEmulator at once),
// or has one of its own (reserve: the tests that write tens of thousands of
// items or run long). Not one for the whole package: DynamoDB Local keeps
// every stream record it was ever sent, deleted tables' too, and reads
// through them to find a stream's open shard on writes, so on an emulator
// shared by every test each ran slower than the one before (alone / about
// 60 tests in: 3.7 / 14.8 s, 13.1 / 39.7 s, 5.0 / 10.6 s for three of
// them). Tests side by side (t.Parallel) queue on their emulator's moto
// (one Python interpreter's lock) and database thread, but on two cores
// more emulators only added their starts and polls: the package ran in
// 289 s with 24 and 8, 440 s with 8 and 3. Not one per stack either: most
// tests take a few seconds, and starting an emulator about 3.
type emulatorPool struct {
	started  chan startedEmulator
	pending  sync.WaitGroup // started, not taken
	stopping sync.WaitGroup // taken, being stopped

	mu  sync.Mutex
	cur *sharedEmulator // the one serving stacks in turn
}

type startedEmulator struct {
	em  *localstack.Emulator
	err error
}

// sharedEmulator is an emulator serving stacks in turn.
type sharedEmulator struct {
	em      *localstack.Emulator
	users   int  // stacks on it now
	served  int  // stacks it was given
	retired bool // stopped once its last user is done
}

// startAhead starts one emulator in the background.
func (p *emulatorPool) startAhead() {
	p.pending.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		em, err := localstack.Discover(ctx, localstack.DiscoverOptions{})
		p.started <- startedEmulator{em, err}
	}()
}

// fresh returns an emulator started ahead (waiting for it if it is not up
// yet) and starts the next one.
func (p *emulatorPool) fresh() (*localstack.Emulator, error) {
	s := <-p.started
	p.pending.Done()
	p.startAhead()
	return s.em, s.err
}

// take returns an emulator for one stack, shared with the stacks before
// and after it, and the function to call when the stack is done with it.
func (p *emulatorPool) take(t *testing.T) (*localstack.Emulator, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || p.cur.served >= stacksPerEmulator || p.cur.users >= usersPerEmulator {
		if p.cur != nil {
			p.retire(t.Name(), p.cur)
		}
		em, err := p.fresh()
		if err != nil {
			p.cur = nil
			return nil, nil, err
		}
		p.cur = &sharedEmulator{em: em}
	}
	cur := p.cur
	cur.users++
	cur.served++
	return cur.em, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		cur.users--
		if cur.retired && cur.users == 0 {
			p.stop(t.Name(), cur.em)
		}
	}, nil
}

// reserve starts an emulator for one stack of t in the background (not
// one of those started ahead) and returns the function that waits for it.
// The emulator stops when t ends.
func (p *emulatorPool) reserve(t *testing.T) (wait func() (*localstack.Emulator, error)) {
	ch := make(chan startedEmulator, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		em, err := localstack.Discover(ctx, localstack.DiscoverOptions{})
		ch <- startedEmulator{em, err}
	}()
	s := sync.OnceValue(func() startedEmulator { return <-ch })
	t.Cleanup(func() {
		if em := s().em; em != nil {
			p.stop(t.Name(), em)
		}
	})
	return func() (*localstack.Emulator, error) {
		r := s()
		return r.em, r.err
	}
}

// retire stops e once its last user is done; p.mu is held.
func (p *emulatorPool) retire(user string, e *sharedEmulator) {
	e.retired = true
	if e.users == 0 {
		p.stop(user, e.em)
	}
}

// stop stops an emulator in the background (it takes most of a second); a
// failure goes to stderr, naming who used it last (its test may have ended).
func (p *emulatorPool) stop(user string, em *localstack.Emulator) {
	p.stopping.Add(1)
	go func() {
		defer p.stopping.Done()
		if err := em.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: close its emulator: %v\n", user, err)
		}
	}()
}

// close stops the emulators started and not taken and the one serving
// stacks, and waits for those being stopped.
func (p *emulatorPool) close() {
	defer p.stopping.Wait()
	p.mu.Lock()
	if p.cur != nil {
		p.stop("TestMain", p.cur.em)
		p.cur = nil
	}
	p.mu.Unlock()
	go func() {
		p.pending.Wait()
		close(p.started)
	}()
	for s := range p.started {
		p.pending.Done()
		if s.em != nil {
			_ = s.em.Close()
		}
	}
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

// startSystem starts a stack for t on an emulator it shares with a few
// other tests' (see emulatorPool), or on opts.Emulator.
func startSystem(t *testing.T, opts stack.Options) *system {
	t.Helper()
	if opts.Emulator == nil {
		em, release, err := emulators.take(t)
		if err != nil {
			t.Fatalf("start an emulator: %v", err)
		}
		// Registered first, so it runs after the stack's own cleanup.
		t.Cleanup(release)
		opts.Emulator = em
	}
	// The emulator outlives the test: delete the stage.
	return launch(t, opts, true)
}

// startParallelSystem marks t parallel and starts its stack on an
// emulator of its own (see emulatorPool), for a test that writes tens of
// thousands of items or runs long. It starts that emulator first: it
// comes up while the tests before it run, not at the moment every
// parallel test wants one.
func startParallelSystem(t *testing.T, opts stack.Options) *system {
	t.Helper()
	started := emulators.reserve(t)
	t.Parallel()
	em, err := started()
	if err != nil {
		t.Fatalf("start an emulator: %v", err)
	}
	opts.Emulator = em
	return launch(t, opts, em.Kind != localstack.KindMoto)
}

// launch starts a stack on opts.Emulator for t, stopped when t ends, and
// then, with deleteStage, deletes its stage's resources from the emulator.
func launch(t *testing.T, opts stack.Options, deleteStage bool) *system {
	t.Helper()
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
		if !deleteStage {
			return // its emulator stops
		}
		// The stage's items would stay in the emulator's memory and slow
		// the tests after it down.
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

// do sends a request and decodes a JSON answer into out (when non-nil).
func (s *system) do(method, path string, body []byte, out any) int {
	s.t.Helper()
	return s.sendAs(method, path, "application/json", body, out)
}

// sendAs is do with a body of another content type.
func (s *system) sendAs(method, path, contentType string, body []byte, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.st.URL+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
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

// loadMargin multiplies every poll's timeout. The timeouts the tests name
// are what a run takes on an idle machine with room to spare; the suite
// runs its tests side by side (t.Parallel) on two cores beside the other
// packages' race-detector run, where a step's round trip was seen to take
// several times as long. A poll returns as soon as its condition holds, so
// the margin costs nothing unless something hangs, which is what these
// bounds catch; speed is measured by bench, not here.
const loadMargin = 3

// poll checks cond every pollInterval until it holds, and fails the test
// with what cond last said if it does not within timeout × loadMargin. It
// is the suite's only way to wait for something to happen; to check that
// something did not happen, wait for the stack to be idle (system.idle)
// and look.
func poll(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	timeout *= loadMargin
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

// advance moves the stack's clock forward by d (whole seconds) through
// POST /local/clock, as a user of the local stack would, and reports
// whether the queues' delayed messages moved with it (see
// stack.Stack.AdvanceClock).
func (s *system) advance(t testing.TB, d time.Duration) (delaysMoved bool) {
	t.Helper()
	var out struct {
		Now   string `json:"now"`
		Moved *bool  `json:"queue_delays_moved"`
	}
	if code := s.do("POST", "/local/clock", []byte(fmt.Sprintf(`{"advance_seconds": %d}`, int64(d/time.Second))), &out); code != http.StatusOK || out.Moved == nil {
		t.Fatalf("advance clock: HTTP %d %+v", code, out)
	}
	return *out.Moved
}

// advanceTimers moves the stack's clock forward by d (see advance) and
// returns when, in real time, the timers it made due fire: now, or on an
// emulator that keeps SQS message delays in real time (LocalStack), d
// after since, the moment the test started them.
func (s *system) advanceTimers(t testing.TB, d time.Duration, since time.Time) time.Time {
	t.Helper()
	if s.advance(t, d) {
		return time.Now()
	}
	return since.Add(d)
}

// pollSkipping is poll for a stack whose clock may skip ahead: whenever
// cond does not hold and the stack is idle (stack.Stack.WaitIdle), it
// moves the stack's clock to its next timer (stack.Stack.SkipToNextTimer),
// so that Sleep steps, retry backoffs and timeouts fire at once instead of
// after their real time, one after the other in the order they are due.
// On an emulator that cannot move SQS message delays (LocalStack, an
// endpoint from AWS_ENDPOINT_URL) it is poll, and timers take their real
// time: timeout must allow for that.
func (s *system) pollSkipping(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if !s.st.Emulator.CanAdvanceQueueDelays() {
		poll(t, timeout, what, cond)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	poll(t, timeout, what, func() (bool, string) {
		if ok, last := cond(); ok {
			return true, last
		}
		if err := s.st.WaitIdle(ctx); err != nil {
			return false, fmt.Sprintf("the stack did not become idle: %v", err)
		}
		if ok, last := cond(); ok {
			return true, last
		}
		skipped, ok, err := s.st.SkipToNextTimer(ctx)
		switch {
		case err != nil:
			t.Fatalf("%s: skip to the next timer: %v", what, err)
		case ok && testing.Verbose():
			t.Logf("%s: skipped %v to the next timer", what, skipped)
		}
		return cond()
	})
}

// waitSkipping is wait with pollSkipping: the instance's timers fire
// without their real time when the emulator allows it.
func (s *system) waitSkipping(wf string, id int64, timeout time.Duration) orchestrator.InstanceView {
	s.t.Helper()
	return s.waitWith(s.pollSkipping, wf, id, timeout)
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
	return s.waitWith(poll, wf, id, timeout)
}

// run pushes def, starts an instance of it and waits (wait) until that
// ends.
func (s *system) run(def []byte, timeout time.Duration) (string, orchestrator.StartResponse, orchestrator.InstanceView) {
	s.t.Helper()
	return s.runWith(s.wait, def, timeout)
}

// runSkipping is run with waitSkipping.
func (s *system) runSkipping(def []byte, timeout time.Duration) (string, orchestrator.StartResponse, orchestrator.InstanceView) {
	s.t.Helper()
	return s.runWith(s.waitSkipping, def, timeout)
}

func (s *system) runWith(wait func(string, int64, time.Duration) orchestrator.InstanceView, def []byte, timeout time.Duration) (string, orchestrator.StartResponse, orchestrator.InstanceView) {
	s.t.Helper()
	wf := s.push(def)
	r := s.start(wf, "")
	return wf, r, wait(wf, r.WorkflowInstanceID, timeout)
}

// runSample pushes Maestro's samples testdata/<name>.json in the order
// named, starts the last one manually, waits for it to end with wait,
// logging how long it took, and fails t unless it succeeded.
func (s *system) runSample(t *testing.T, wait func(string, int64, time.Duration) orchestrator.InstanceView, timeout time.Duration, names ...string) (orchestrator.StartResponse, orchestrator.InstanceView) {
	t.Helper()
	for _, name := range names {
		s.push(readFile(t, name+".json"))
	}
	wf := names[len(names)-1]
	started := time.Now()
	r := s.start(wf, `{"initiator": {"type": "manual"}}`)
	v := wait(wf, r.WorkflowInstanceID, timeout)
	t.Logf("%s ended %s after %.1f s", wf, v.Status, time.Since(started).Seconds())
	if v.Status != "SUCCEEDED" {
		t.Fatalf("%s: %s %v", wf, v.Status, v.StepStatuses)
	}
	return r, v
}

// waitWith is wait and waitSkipping: it polls with pollFn until the
// instance is terminal or the timeout passes.
func (s *system) waitWith(pollFn func(testing.TB, time.Duration, string, func() (bool, string)), wf string, id int64, timeout time.Duration) orchestrator.InstanceView {
	s.t.Helper()
	var v orchestrator.InstanceView
	pollFn(s.t, timeout, fmt.Sprintf("instance %s/%d ends", wf, id), func() (bool, string) {
		v = s.instance(wf, id)
		switch v.Status {
		case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
			return true, ""
		}
		return false, fmt.Sprintf("still %s: steps %v; timeline tail %s", v.Status, v.StepStatuses, timelineTail(v.Timeline, 8))
	})
	return v
}

// removeBreakpoint deletes the breakpoint on step stepID of workflow wf
// and fails t unless it resumed the attempts it paused, resumed of them.
func (s *system) removeBreakpoint(t testing.TB, wf, stepID string, resumed int) {
	t.Helper()
	var rm struct {
		Resumed int `json:"resumed_step_attempts"`
	}
	path := fmt.Sprintf("/api/v3/workflows/steps/breakpoints?workflowId=%s&stepId=%s", wf, stepID)
	if code := s.do("DELETE", path, nil, &rm); code != 200 || rm.Resumed != resumed {
		t.Fatalf("remove: %d %+v, want %d resumed", code, rm, resumed)
	}
}

// restart restarts instance id of wf with policy, failing t (naming the
// request what) unless the API takes it.
func (s *system) restart(t testing.TB, wf string, id int64, policy, what string) {
	t.Helper()
	var out map[string]any
	if code := s.do("POST", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/restart", wf, id),
		[]byte(fmt.Sprintf(`{"restart_policy": %q}`, policy)), &out); code != http.StatusOK {
		t.Fatalf("%s: HTTP %d %v", what, code, out)
	}
}

// wantEnd fails t unless instance v ended in status, with each step of
// steps in its status there.
func wantEnd(t testing.TB, v orchestrator.InstanceView, status string, steps map[string]string) {
	t.Helper()
	ok := v.Status == status
	for id, want := range steps {
		ok = ok && v.StepStatuses[id] == want
	}
	if !ok {
		t.Fatalf("instance %s: %v, want %s %v", v.Status, v.StepStatuses, status, steps)
	}
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
