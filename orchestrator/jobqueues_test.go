package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
)

func queueBook(now int64, q *store.TagPermit) *permitBook {
	return &permitBook{wf: "wf", inst: 1, run: 1, now: now, snap: map[string]*store.TagPermit{},
		holders: map[string]map[string]int64{}, waiters: map[string]map[string]int64{},
		queues: map[string]*store.TagPermit{q.Tag: q}, qholders: map[string]map[string]int64{}, qwaiters: map[string]map[string]int64{}}
}

func ask(step string, prio, cpu int64, enqueue bool) engine.PermitRequest {
	return engine.PermitRequest{StepID: step, Attempt: 1, Lease: time.Hour, Enqueue: enqueue,
		Queue: &engine.QueueDemand{Queue: "q", Priority: prio, CPU: cpu * 1000}}
}

// TestJobQueueAdmitsByPriorityWithinCapacity: steps that join together are
// admitted highest priority first, while their needs fit; a head that does
// not fit is not passed.
func TestJobQueueAdmitsByPriorityWithinCapacity(t *testing.T) {
	q := &store.TagPermit{Tag: "q", Queue: &store.QueueCapacity{CPU: 4000}}
	b := queueBook(1000, q)
	steps := []struct {
		id        string
		prio, cpu int64
	}{{"a", 1, 1}, {"b", 3, 2}, {"c", 2, 1}, {"d", 3, 1}, {"e", 1, 3}, {"f", 2, 2}}
	for _, s := range steps {
		if ans := b.Acquire(ask(s.id, s.prio, s.cpu, true)); ans.OK || !strings.HasPrefix(ans.Why, "waiting in job queue q: position") {
			t.Fatalf("%s joined: %+v", s.id, ans)
		}
	}
	var admitted []string
	for progress := true; progress; {
		progress = false
		for _, s := range steps {
			if ans := b.Acquire(ask(s.id, s.prio, s.cpu, false)); ans.OK {
				if !containsStep(admitted, s.id) {
					admitted = append(admitted, s.id)
					progress = true
				}
			}
		}
	}
	// b (3, 2 cpu) and d (3, 1 cpu) first, then c (2, 1 cpu): 4 cpu. f
	// (2, 2 cpu) is next in line and does not fit: nobody passes it.
	if got := strings.Join(admitted, ","); got != "b,d,c" {
		t.Fatalf("admitted %s, want b,d,c", got)
	}
	if ans := b.Acquire(ask("a", 1, 1, false)); ans.OK || ans.Why != "waiting in job queue q: position 2 of 3" {
		t.Fatalf("a: %+v", ans)
	}
	// c ends: 3 of 4 cpu still held, f (2 cpu) waits; d ends too: it fits.
	b.Release("c", 1, []string{queueTagPrefix + "q"}, true)
	if ans := b.Acquire(ask("f", 2, 2, false)); ans.OK {
		t.Fatalf("f with 1 cpu free: %+v", ans)
	}
	b.Release("d", 1, []string{queueTagPrefix + "q"}, true)
	if ans := b.Acquire(ask("f", 2, 2, false)); !ans.OK {
		t.Fatalf("f with 2 cpu free: %+v", ans)
	}
	ups, _, err := b.updates()
	if err != nil || len(ups) != 1 || !ups[0].Queue || len(ups[0].Hold) != 2 {
		t.Fatalf("updates %+v, %v", ups, err)
	}
}

func containsStep(list []string, id string) bool {
	for _, s := range list {
		if s == id {
			return true
		}
	}
	return false
}

// TestJobQueueAging: a low-priority waiter gains a point per aging period
// and in time goes before newer higher-priority work.
func TestJobQueueAging(t *testing.T) {
	const minute = int64(60_000)
	entry := func(step string, prio int64) string {
		return store.QueueEntry{Key: store.PermitKey("wf", 1, 1, step, 1), Priority: prio, CPU: 1000}.String()
	}
	waiters := map[string]int64{
		entry("old-low", 1):  0,           // waiting since 0
		entry("new-high", 3): 10 * minute, // since 10 minutes
	}
	if got := admissionOrder(waiters, minute, 10*minute); got[0] != entry("old-low", 1) {
		t.Fatalf("after 10 minutes (1+10 > 3+0): %v", got)
	}
	if got := admissionOrder(waiters, minute, 10*minute+1); got[0] != entry("old-low", 1) {
		t.Fatalf("%v", got)
	}
	if got := admissionOrder(waiters, 0, 10*minute); got[0] != entry("new-high", 3) {
		t.Fatalf("without aging priority decides: %v", got)
	}
	// Both joined at once: priority decides, then the older.
	waiters = map[string]int64{entry("x", 2): 5, entry("y", 2): 4, entry("z", 1): 0}
	if got := admissionOrder(waiters, 3600_000, 10); got[0] != entry("y", 2) || got[1] != entry("x", 2) || got[2] != entry("z", 1) {
		t.Fatalf("%v", got)
	}

	// Through the book: a waiter keeps the time it began waiting across
	// decisions (its rejoin does not reset it), so it ages.
	q := &store.TagPermit{Tag: "q", Queue: &store.QueueCapacity{CPU: 1000, AgingMillis: minute},
		Holders: map[string]int64{entry("busy", 0): 1 << 60},
		Waiters: map[string]int64{entry("low", 1): 0}}
	b := queueBook(30*minute, q)
	b.Release("low", 1, []string{queueTagPrefix + "q"}, false)
	b.Acquire(ask("low", 1, 1, false))
	if got := b.qwaiters["q"][entry("low", 1)]; got != 0 {
		t.Fatalf("the waiter's since became %d, want 0", got)
	}
	if ans := b.Acquire(ask("high", 20, 1, true)); ans.Why != "waiting in job queue q: position 2 of 2" {
		t.Fatalf("a new priority-20 step behind a priority-1 step that waited 30 minutes: %+v", ans)
	}
}

func TestJobQueueRefusals(t *testing.T) {
	q := &store.TagPermit{Tag: "q", Queue: &store.QueueCapacity{CPU: 2000}}
	b := queueBook(0, q)
	if ans := b.Acquire(ask("a", 0, 3, true)); ans.Err == nil || !strings.Contains(ans.Err.Error(), "has 2 cpu") {
		t.Fatalf("a demand above the capacity: %+v", ans)
	}
	req := ask("a", 0, 1, true)
	req.Queue.Queue = "nope"
	if ans := b.Acquire(req); ans.Err == nil || !strings.Contains(ans.Err.Error(), `job queue "nope" does not exist`) {
		t.Fatalf("an unknown queue: %+v", ans)
	}
}
