package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
)

// Job queues (see engine.ParamJobQueue): a permit of capacity rather than
// count. Its waiters are ordered by effective priority — their priority,
// plus one point per aging period waited, so that lower-priority work is
// not passed over forever — then by when they began waiting. A waiter is
// admitted only at the head of that order and only while what the
// queue's holders need, with its own need, fits the capacity: no later
// waiter passes a head that does not fit (a large job is not starved by
// small ones).

// queueTagPrefix marks a job queue among the tags an attempt holds or
// waits on (StepState.Permits).
const queueTagPrefix = "job_queue:"

// usesJobQueues reports whether a step of g sets the job_queue param.
func usesJobQueues(g *engine.Graph) bool {
	for _, s := range g.Workflow().Steps {
		if _, ok := s.Params.Defs[engine.ParamJobQueue]; ok {
			return true
		}
	}
	return false
}

// touchQueue returns the working holders and waiters of queue name,
// copying them from the snapshot on first use without the holders whose
// lease expired.
func (b *permitBook) touchQueue(name string) (h, w map[string]int64) {
	return touchWorking(b.queues, b.qholders, b.qwaiters, name, b.now)
}

func entryOf(k string, d *engine.QueueDemand) string {
	return store.QueueEntry{Key: k, Priority: d.Priority, CPU: d.CPU, Memory: d.Memory, GPU: d.GPU}.String()
}

// queueAsk checks attempt k's demand of its job queue (none: ""): it
// returns the queue's tag when the attempt must wait, with why, joining
// the waiters (keeping the time it first began waiting).
func (b *permitBook) queueAsk(k string, req engine.PermitRequest) (tag, why string, err error) {
	d := req.Queue
	if d == nil {
		return "", "", nil
	}
	p, ok := b.queues[d.Queue]
	if !ok {
		return "", "", fmt.Errorf("job queue %q does not exist (POST /api/v3/job-queues creates it)", d.Queue)
	}
	if c := p.Queue; d.CPU > c.CPU || d.Memory > c.Memory || d.GPU > c.GPU {
		return "", "", fmt.Errorf("the step needs %s of job queue %q, which has %s in all", needs(d.CPU, d.Memory, d.GPU), d.Queue, needs(c.CPU, c.Memory, c.GPU))
	}
	e := entryOf(k, d)
	h, w := b.touchQueue(d.Queue)
	if _, held := h[e]; held {
		return "", "", nil
	}
	if _, waiting := w[e]; !waiting {
		since := b.now
		if old, ok := p.Waiters[e]; ok {
			since = old // waiting since before this decision
		}
		w[e] = since
	}
	order := b.queueOrder(d.Queue)
	pos := slices.Index(order, e)
	if !req.Enqueue && pos == 0 && b.fits(d.Queue, e) {
		return "", "", nil
	}
	return queueTagPrefix + d.Queue, fmt.Sprintf("waiting in job queue %s: position %d of %d", d.Queue, pos+1, len(order)), nil
}

// queueHold makes attempt k a holder of its queue until exp and returns
// the queue's tag.
func (b *permitBook) queueHold(k string, req engine.PermitRequest, exp int64) string {
	e := entryOf(k, req.Queue)
	h, w := b.touchQueue(req.Queue.Queue)
	h[e] = exp
	delete(w, e)
	return queueTagPrefix + req.Queue.Queue
}

// queueRelease returns attempt k's hold of queue name (held) or ends its
// wait.
func (b *permitBook) queueRelease(k, name string, held bool) {
	if _, ok := b.queues[name]; !ok {
		return // the queue was deleted: nothing to return
	}
	h, w := b.touchQueue(name)
	m := w
	if held {
		m = h
	}
	for e := range m {
		if strings.HasPrefix(e, k+"~") {
			delete(m, e)
		}
	}
}

// queueOrder returns queue name's waiters in admission order.
func (b *permitBook) queueOrder(name string) []string {
	_, w := b.touchQueue(name)
	return admissionOrder(w, b.queues[name].Queue.AgingMillis, b.now)
}

// admissionOrder orders waiters (entry -> since) by effective priority,
// highest first, then by age and key.
func admissionOrder(w map[string]int64, aging, now int64) []string {
	type ranked struct {
		e        string
		eff, age int64
	}
	list := make([]ranked, 0, len(w))
	for e, since := range w {
		q, err := store.ParseQueueEntry(e)
		if err != nil {
			continue
		}
		eff := q.Priority
		if aging > 0 && now > since {
			eff += (now - since) / aging
		}
		list = append(list, ranked{e, eff, since})
	}
	sort.Slice(list, func(i, j int) bool {
		a, c := list[i], list[j]
		if a.eff != c.eff {
			return a.eff > c.eff
		}
		if a.age != c.age {
			return a.age < c.age
		}
		return a.e < c.e
	})
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.e
	}
	return out
}

// used sums what queue name's holders need.
func (b *permitBook) used(name string) (cpu, mem, gpu int64) {
	h, _ := b.touchQueue(name)
	for e := range h {
		if q, err := store.ParseQueueEntry(e); err == nil {
			cpu, mem, gpu = cpu+q.CPU, mem+q.Memory, gpu+q.GPU
		}
	}
	return
}

// fits reports whether entry e fits queue name beside its holders.
func (b *permitBook) fits(name, e string) bool {
	q, err := store.ParseQueueEntry(e)
	if err != nil {
		return false
	}
	cpu, mem, gpu := b.used(name)
	c := b.queues[name].Queue
	return cpu+q.CPU <= c.CPU && mem+q.Memory <= c.Memory && gpu+q.GPU <= c.GPU
}

// queueUpdates adds the touched queues' net changes to ups and, to
// wakes, the runs whose waiters the queues would now admit, in order (the
// run deciding admits its own itself).
func (b *permitBook) queueUpdates(ups []store.PermitUpdate, wakes *runWakes) ([]store.PermitUpdate, []store.WakeRun, error) {
	for _, name := range slices.Sorted(maps.Keys(b.qholders)) {
		p := b.queues[name]
		h, w := b.qholders[name], b.qwaiters[name]
		u := store.PermitUpdate{Tag: name, Queue: true, ExpectV: p.V, Hold: diffAdded(p.Holders, h), Release: diffRemoved(p.Holders, h),
			Wait: diffAdded(p.Waiters, w), Unwait: diffRemoved(p.Waiters, w)}
		if len(u.Hold) == 0 && len(u.Release) == 0 && len(u.Wait) == 0 && len(u.Unwait) == 0 {
			continue
		}
		ups = append(ups, u)
		cpu, mem, gpu := b.used(name)
		c := p.Queue
		for _, e := range admissionOrder(w, c.AgingMillis, b.now) {
			q, err := store.ParseQueueEntry(e)
			if err != nil {
				return nil, nil, err
			}
			if cpu+q.CPU > c.CPU || mem+q.Memory > c.Memory || gpu+q.GPU > c.GPU || wakes.full() {
				break
			}
			cpu, mem, gpu = cpu+q.CPU, mem+q.Memory, gpu+q.GPU
			hk, err := store.ParsePermitKey(e)
			if err != nil {
				return nil, nil, err
			}
			if !b.deciding(hk) {
				wakes.add(hk)
			}
		}
	}
	return ups, wakes.list, nil
}

// needs writes an amount of cpu (thousandths), memory and gpu.
func needs(cpu, mem, gpu int64) string {
	return fmt.Sprintf("%g cpu, %d MiB memory, %d gpu", float64(cpu)/1000, mem, gpu)
}

// JobQueue is the view of a job queue.
type JobQueue struct {
	Name string `json:"name"`
	// CPU (vCPUs), Memory (MiB) and GPU are the capacity; Used what the
	// running steps hold of it.
	CPU    float64 `json:"cpu"`
	Memory int64   `json:"memory"`
	GPU    int64   `json:"gpu"`
	// AgingSeconds is how long a waiting step waits to gain one priority
	// point (0: no aging).
	AgingSeconds int64         `json:"aging_seconds"`
	Used         QueueUse      `json:"used"`
	Running      []QueueHolder `json:"running"`
	Waiting      []QueueHolder `json:"waiting"`
	CreateTime   int64         `json:"create_time,omitempty"`
	ModifyTime   int64         `json:"modify_time,omitempty"`
}

// QueueUse is an amount of a queue's capacity.
type QueueUse struct {
	CPU    float64 `json:"cpu"`
	Memory int64   `json:"memory"`
	GPU    int64   `json:"gpu"`
}

// QueueHolder is a step attempt holding, or waiting in, a job queue;
// waiters are listed in admission order (Position from 1).
type QueueHolder struct {
	WorkflowID string   `json:"workflow_id"`
	InstanceID int64    `json:"workflow_instance_id"`
	RunID      int64    `json:"workflow_run_id"`
	StepID     string   `json:"step_id"`
	Attempt    int64    `json:"step_attempt_id"`
	Priority   int64    `json:"priority"`
	Needs      QueueUse `json:"needs"`
	// Since is when it began waiting; Position its place in line.
	Since    int64 `json:"since,omitempty"`
	Position int   `json:"position,omitempty"`
}

// JobQueueRequest creates or changes a job queue.
type JobQueueRequest struct {
	Name               string
	CPU                float64
	Memory, GPU, Aging int64
}

// maxQueueNameLength bounds a job queue's name.
const maxQueueNameLength = 128

// PutJobQueue creates a job queue or changes its capacity; waiting steps it
// may now admit are woken.
func (o *Gates) PutJobQueue(ctx context.Context, r JobQueueRequest) (*JobQueue, error) {
	var errs []string
	if r.Name == "" || len(r.Name) > maxQueueNameLength || strings.ContainsAny(r.Name, "#~") {
		errs = append(errs, fmt.Sprintf("name: must be 1 to %d characters, without # or ~", maxQueueNameLength))
	}
	if r.CPU < 0 || r.Memory < 0 || r.GPU < 0 || r.Aging < 0 {
		errs = append(errs, "cpu, memory, gpu, aging_seconds: must not be negative")
	}
	if len(errs) > 0 {
		return nil, Invalid("invalid job queue", errs...)
	}
	c := store.QueueCapacity{CPU: int64(math.Round(r.CPU * 1000)), Memory: r.Memory, GPU: r.GPU, AgingMillis: r.Aging * 1000}
	p, err := o.store.Gates.PutJobQueue(ctx, r.Name, c, o.now().UnixMilli())
	if err != nil {
		return nil, Internal(err)
	}
	return wakeAndView(ctx, o, p, o.jobQueueView)
}

// GetJobQueue returns a job queue with its running and waiting steps.
func (o *Gates) GetJobQueue(ctx context.Context, name string) (*JobQueue, error) {
	p, err := o.store.Gates.GetJobQueue(ctx, name)
	if err != nil {
		return nil, notFoundOr(err, "no job queue %q", name)
	}
	return o.jobQueueView(p), nil
}

// DeleteJobQueue removes a job queue; the steps waiting in it are woken
// and fail (the queue no longer exists).
func (o *Gates) DeleteJobQueue(ctx context.Context, name string) (*JobQueue, error) {
	p, err := o.store.Gates.DeleteJobQueue(ctx, name)
	if err != nil {
		return nil, notFoundOr(err, "no job queue %q", name)
	}
	return wakeAndView(ctx, o, p, o.jobQueueView)
}

func (o *Gates) jobQueueView(p *store.TagPermit) *JobQueue {
	now := o.now().UnixMilli()
	c := p.Queue
	v := &JobQueue{Name: p.Tag, CPU: float64(c.CPU) / 1000, Memory: c.Memory, GPU: c.GPU, AgingSeconds: c.AgingMillis / 1000,
		Running: []QueueHolder{}, Waiting: []QueueHolder{}, CreateTime: p.CreateTime, ModifyTime: p.ModifyTime}
	holder := func(e string) (QueueHolder, bool) {
		q, err1 := store.ParseQueueEntry(e)
		k, err2 := store.ParsePermitKey(e)
		if err1 != nil || err2 != nil {
			return QueueHolder{}, false
		}
		return QueueHolder{WorkflowID: k.WorkflowID, InstanceID: k.InstanceID, RunID: k.RunID, StepID: k.StepID, Attempt: k.Attempt,
			Priority: q.Priority, Needs: QueueUse{CPU: float64(q.CPU) / 1000, Memory: q.Memory, GPU: q.GPU}}, true
	}
	for _, e := range slices.Sorted(maps.Keys(p.Holders)) {
		if p.Holders[e] < now {
			continue
		}
		if h, ok := holder(e); ok {
			v.Running = append(v.Running, h)
			v.Used.CPU += h.Needs.CPU
			v.Used.Memory += h.Needs.Memory
			v.Used.GPU += h.Needs.GPU
		}
	}
	for i, e := range admissionOrder(p.Waiters, c.AgingMillis, now) {
		if h, ok := holder(e); ok {
			h.Since, h.Position = p.Waiters[e], i+1
			v.Waiting = append(v.Waiting, h)
		}
	}
	return v
}
