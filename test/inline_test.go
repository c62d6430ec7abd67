package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// countingJSON answers {"ok": true} and counts the requests by path in
// calls, under mu. When hold is set, a request is answered once
// hold(path) returned, and the func it returned is called after.
func countingJSON(mu *sync.Mutex, calls map[string]int, hold func(path string) (answered func())) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		if hold != nil {
			defer hold(r.URL.Path)()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true}`)
	}
}

// TestHttpChainContinuesInline: in a chain of Http steps, the worker that
// runs a step applies its outcome itself and runs the next step in the same
// invocation — no step's outcome goes through the decision queue, and only
// the first step's work message is sent — and each step is called once.
// A step the worker's own commit started runs unclaimed: its attempt item
// is written once, whole, at its end (the first step's twice: its claim
// and its end), and reads as a claimed one's would.
func TestHttpChainContinuesInline(t *testing.T) {
	t.Parallel()
	const wf, n = "inline-chain", 6
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(countingJSON(&mu, calls, nil))
	defer srv.Close()

	var seen sync.Map // queue -> *int of messages of wf
	count := func(queue string, next localstack.SQSHandler) localstack.SQSHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			for _, m := range ev.Records {
				if strings.Contains(m.Body, `"workflow_id":"`+wf+`"`) &&
					(queue == "decision" || strings.Contains(m.Body, `"kind":"run_step"`)) {
					v, _ := seen.LoadOrStore(queue, new(int))
					mu.Lock()
					*v.(*int)++
					mu.Unlock()
				}
			}
			return next(ctx, ev)
		}
	}
	attemptWrites := map[string]int{} // attempt item sort key -> writes
	kindWrites := map[string]int{}    // sort key prefix (E#, RUN#, Q#...) of the workflow's and the run's items -> writes
	countWrites := func(key map[string]ddbtypes.AttributeValue) {
		pk, _ := key["pk"].(*ddbtypes.AttributeValueMemberS)
		sk, _ := key["sk"].(*ddbtypes.AttributeValueMemberS)
		if pk == nil || sk == nil || !strings.HasPrefix(pk.Value, "R#"+wf+"#") && pk.Value != "WF#"+wf {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		kind, _, _ := strings.Cut(sk.Value, "#")
		kindWrites[kind]++
		if kind == "S" {
			attemptWrites[sk.Value]++
		}
	}
	writes := func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("countAttemptWrites",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch p := in.Parameters.(type) {
				case *dynamodb.UpdateItemInput:
					countWrites(p.Key)
				case *dynamodb.PutItemInput:
					countWrites(p.Item)
				case *dynamodb.TransactWriteItemsInput:
					for _, ti := range p.TransactItems {
						switch {
						case ti.Put != nil:
							countWrites(ti.Put.Item)
						case ti.Update != nil:
							countWrites(ti.Update.Key)
						}
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
	s := startSystem(t, stack.Options{APIOptions: []func(*middleware.Stack) error{writes}, Hooks: stack.Hooks{
		Worker:  func(h localstack.SQSHandler) localstack.SQSHandler { return count("work", h) },
		Decider: func(h localstack.SQSHandler) localstack.SQSHandler { return count("decision", h) },
	}})
	var steps []string
	for i := 1; i <= n; i++ {
		next := ""
		if i < n {
			next = fmt.Sprintf(`,"transition":{"successors":{"h%d":"true"}}`, i+1)
		}
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"h%d","type":"Http",
		  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/h%d"},"method":{"type":"STRING","value":"GET"}}}}%s}}`,
			i, srv.URL, i, next))
	}
	s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"inline"},"workflow":{"id":%q,"steps":[%s]}}`, wf, strings.Join(steps, ","))))

	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	s.idle(t)
	views := s.steps(wf, r.WorkflowInstanceID)
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("h%d", i)
		if c := calls["/"+id]; c != 1 {
			t.Errorf("step %s called %d times, want once", id, c)
		}
		var statuses []string
		for _, e := range views[id].Timeline {
			statuses = append(statuses, e.Status)
		}
		if got, want := strings.Join(statuses, " "), "CREATED INITIALIZED EVALUATING_PARAMS STARTING RUNNING FINISHING SUCCEEDED"; got != want {
			t.Errorf("step %s timeline %q, want %q", id, got, want)
		}
		want := 1
		if i == 1 {
			want = 2
		}
		if w := attemptWrites[fmt.Sprintf("S#000001#%s#0001", id)]; w != want {
			t.Errorf("step %s: %d writes of its attempt item, want %d", id, w, want)
		}
	}
	// The start wrote the run once, started, with its instance (no start
	// event in its inbox, no queue item to delete); each step's end, one
	// commit more. The run's timeline entries (started, ended) are in its
	// item.
	for kind, want := range map[string]int{"E": 0, "Q": 0, "T": 0, "RUN": n + 1, "I": 2} {
		if w := kindWrites[kind]; w != want {
			t.Errorf("%d writes of %s# items, want %d (all: %v)", w, kind, want, kindWrites)
		}
	}
	got := func(queue string) int {
		if v, ok := seen.Load(queue); ok {
			return *v.(*int)
		}
		return 0
	}
	if w := got("work"); w != 1 {
		t.Errorf("%d run_step work messages, want 1 (the first step's; the worker ran the others inline)", w)
	}
	if d := got("decision"); d != 0 {
		t.Errorf("%d decision-queue messages for the run, want none (every outcome applied inline)", d)
	}
}

// TestHttpJoinDecidedByItsLastInput: in layers of Http steps whose every
// edge is a join, the worker of a layer's last step to end finds the
// others' ends on their attempts, applies them all and runs the next
// layer's steps itself, side by side: only the first layer's work messages
// are sent, and each step is called once. The stream is polled once, at
// the stack's start, so no end reaches the decider through it: the run
// ends only if every join is decided by a worker. A layer's steps answer
// one after the other, so the last to end is plain.
func TestHttpJoinDecidedByItsLastInput(t *testing.T) {
	t.Parallel()
	const wf, layers, width = "inline-joins", 3, 3
	// answered[l][c] is closed once step j<l>_<c+1> was answered: a
	// layer's step c+1 answers only after step c did.
	var answered [layers + 1][width]chan struct{}
	for l := range answered {
		for c := range answered[l] {
			answered[l][c] = make(chan struct{})
		}
	}
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(countingJSON(&mu, calls, func(path string) func() {
		var l, c int
		if _, err := fmt.Sscanf(path, "/j%d_%d", &l, &c); err != nil || l < 1 || l > layers || c < 1 || c > width {
			return func() {}
		}
		if c > 1 {
			select {
			case <-answered[l][c-2]:
			case <-time.After(30 * time.Second): // a deadline, not a pace: the run then fails
			}
		}
		var once sync.Once
		return func() { once.Do(func() { close(answered[l][c-1]) }) }
	}))
	defer srv.Close()
	var work atomic.Int64
	s := startSystem(t, stack.Options{StreamInterval: time.Hour, Hooks: stack.Hooks{
		Worker: func(h localstack.SQSHandler) localstack.SQSHandler {
			return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				for _, m := range ev.Records {
					if strings.Contains(m.Body, `"workflow_id":"`+wf+`"`) && strings.Contains(m.Body, `"kind":"run_step"`) {
						work.Add(1)
					}
				}
				return h(ctx, ev)
			}
		},
	}})
	id := func(l, c int) string { return fmt.Sprintf("j%d_%d", l, c) }
	var steps []string
	for l := 1; l <= layers; l++ {
		for c := 1; c <= width; c++ {
			next := ""
			if l < layers {
				var succ []string
				for d := 1; d <= width; d++ {
					succ = append(succ, fmt.Sprintf("%q:\"true\"", id(l+1, d)))
				}
				next = `,"transition":{"successors":{` + strings.Join(succ, ",") + `}}`
			}
			steps = append(steps, fmt.Sprintf(`{"step":{"id":%q,"type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
			  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/%s"},"method":{"type":"STRING","value":"GET"}}}}%s}}`,
				id(l, c), srv.URL, id(l, c), next))
		}
	}
	s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"inline"},"workflow":{"id":%q,"steps":[%s]}}`, wf, strings.Join(steps, ","))))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	// Every step ran before the run ended: its work message, if any, was
	// taken before (no wait for the stack's idleness, which needs the
	// stream polled).
	mu.Lock()
	defer mu.Unlock()
	for l := 1; l <= layers; l++ {
		for c := 1; c <= width; c++ {
			if n := calls["/"+id(l, c)]; n != 1 {
				t.Errorf("step %s called %d times, want once", id(l, c), n)
			}
		}
	}
	if n := work.Load(); n != width {
		t.Errorf("%d run_step work messages, want %d (the first layer's; each join's last worker ran the next layer)", n, width)
	}
}
