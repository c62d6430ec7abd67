package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// cpuGauge is a loopback server whose calls each hold ?cpu= vCPUs for a
// while: it records the most held at once.
type cpuGauge struct {
	mu         sync.Mutex
	held, peak int
	calls      int
}

func (g *cpuGauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cpu, _ := strconv.Atoi(r.URL.Query().Get("cpu"))
	g.mu.Lock()
	g.held += cpu
	g.peak = max(g.peak, g.held)
	g.calls++
	g.mu.Unlock()
	// The step's work: a fixed duration, so that steps overlap in the
	// queue (nothing here waits for a condition).
	select {
	case <-time.After(200 * time.Millisecond):
	case <-r.Context().Done():
	}
	g.mu.Lock()
	g.held -= cpu
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{}`)
}

func TestJobQueueAdmitsByPriorityWithinItsCapacity(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	gauge := &cpuGauge{}
	srv := httptest.NewServer(gauge)
	defer srv.Close()
	queue := fmt.Sprintf("cpu4-%d", stageSeq.Add(1))
	var q orchestrator.JobQueue
	if code := s.do("POST", "/api/v3/job-queues", []byte(`{"name":"`+queue+`","cpu":4,"aging_seconds":3600}`), &q); code != http.StatusOK || q.CPU != 4 {
		t.Fatalf("create the queue: HTTP %d %+v", code, q)
	}
	const n = 20
	prio := func(i int) int { return i%3 + 1 }
	cpu := func(i int) int { return 1 + i%2 }
	var steps []string
	for i := range n {
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"s%02d","type":"Http","params":{
		  "http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/?cpu=%d"}}},
		  "job_queue":{"type":"MAP","value":{"queue":{"type":"STRING","value":%q},"priority":{"type":"LONG","value":%d},"cpu":{"type":"LONG","value":%d}}}}}}`,
			i, srv.URL, cpu(i), queue, prio(i), cpu(i)))
	}
	wf := s.push([]byte(`{"properties":{"owner":"jq"},"workflow":{"id":"job-queue","steps":[` + strings.Join(steps, ",") + `]}}`))
	r := s.start(wf, "")

	// While it runs, the queue shows who waits, in order.
	poll(t, 30*time.Second, "steps wait in the queue", func() (bool, string) {
		s.do("GET", "/api/v3/job-queues/"+queue, nil, &q)
		return len(q.Waiting) > 0, fmt.Sprintf("%d running, %d waiting", len(q.Running), len(q.Waiting))
	})
	for i, w := range q.Waiting {
		if w.Position != i+1 || (i > 0 && w.Priority > q.Waiting[i-1].Priority) {
			t.Fatalf("waiting list out of order: %+v", q.Waiting)
		}
	}
	if q.Used.CPU > 4 {
		t.Fatalf("the queue holds %v cpu of 4", q.Used.CPU)
	}
	v := s.wait(wf, r.WorkflowInstanceID, 2*time.Minute)
	if v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
	}
	gauge.mu.Lock()
	peak, calls := gauge.peak, gauge.calls
	gauge.mu.Unlock()
	if calls != n || peak > 4 || peak < 3 {
		t.Fatalf("%d calls, at most %d cpu at once: want %d calls within the queue's 4 cpu, and the queue used", calls, peak, n)
	}
	// Every step of a higher priority started no later than every step of
	// a lower one.
	views := s.steps(wf, r.WorkflowInstanceID)
	type started struct {
		id         string
		prio       int
		start, end int64
	}
	var list []started
	for i := range n {
		sv := views[fmt.Sprintf("s%02d", i)]
		list = append(list, started{sv.StepID, prio(i), sv.RuntimeState.StartTime, sv.RuntimeState.EndTime})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].start < list[j].start })
	var order []string
	for _, l := range list {
		order = append(order, fmt.Sprintf("%s:p%d@%d", l.id, l.prio, l.start-list[0].start))
	}
	t.Logf("%d calls, at most %d of 4 cpu at once; starts (step:priority@ms after the first): %s", calls, peak, strings.Join(order, " "))
	for i := 1; i < len(list); i++ {
		for j := range i {
			if list[j].prio < list[i].prio && list[j].start < list[i].start {
				t.Fatalf("%s (priority %d) started at %d before %s (priority %d) at %d", list[j].id, list[j].prio, list[j].start,
					list[i].id, list[i].prio, list[i].start)
			}
		}
	}
	s.idle(t)
	if s.do("GET", "/api/v3/job-queues/"+queue, nil, &q); len(q.Running) != 0 || len(q.Waiting) != 0 {
		t.Fatalf("after the run the queue still has %d running, %d waiting", len(q.Running), len(q.Waiting))
	}
}
