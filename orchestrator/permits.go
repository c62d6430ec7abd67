package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// InternalTagPrefix starts the tags the runtime manages itself:
// "maestro_<workflow id>" carries a workflow's step_concurrency.
const InternalTagPrefix = "maestro_"

// leaseMargin is added to an attempt's timeout to form its permit lease:
// the timeout ends the attempt (and returns its permits) first; the lease
// only frees permits whose holder can no longer return them.
const leaseMargin = time.Hour

// maxPermitWakes bounds the waiting runs one commit wakes, keeping the
// commit inside one transaction; later releases wake the rest.
const maxPermitWakes = 10

// workflowTag is the internal tag bounding the running steps of all
// instances of a workflow (properties.step_concurrency).
func workflowTag(wf string) string { return InternalTagPrefix + wf }

// permitBook is the engine.Permits of one processing round: it answers
// from a strongly consistent snapshot of the permits the run's steps can
// need and turns what the engine took and returned into conditional
// updates of the commit. A commit that lost a race on a permit fails as a
// conflict, and the round is decided again from fresh reads.
type permitBook struct {
	wf        string
	inst, run int64
	now       int64
	snap      map[string]*store.TagPermit
	holders   map[string]map[string]int64 // working copies of touched tags
	waiters   map[string]map[string]int64
	// queues are the job queues (by name) and qholders, qwaiters the
	// working copies of those touched (see jobqueues.go).
	queues             map[string]*store.TagPermit
	qholders, qwaiters map[string]map[string]int64
}

var _ engine.Permits = (*permitBook)(nil)

// loadPermits reads the permits the work steps of g can need: their tags
// and the workflow's internal tag (step_concurrency). An inline workflow (a
// loop's body, its id "maestro_…", which no pushed workflow may take) has
// no internal tag: its iterations' rounds read nothing when its steps have
// no tags.
func (o *Rounds) loadPermits(ctx context.Context, g *engine.Graph, st *engine.Instance, now time.Time) (*permitBook, error) {
	snap := map[string]*store.TagPermit{}
	if g.HasWork() { // steps without work (NoOp, Join) take no permits: nothing to read
		var tags []string
		if !strings.HasPrefix(st.WorkflowID, model.ReservedPrefix) {
			tags = append(tags, workflowTag(st.WorkflowID))
		}
		for _, s := range g.Workflow().Steps {
			for _, t := range s.Tags {
				tags = append(tags, t.Name)
			}
		}
		tags = append(tags, st.RuntimeTags.Names()...)
		if len(tags) > 0 {
			var err error
			if snap, err = o.store.Gates.GetTagPermits(ctx, tags); err != nil {
				return nil, err
			}
		}
	}
	queues := map[string]*store.TagPermit{}
	if usesJobQueues(g) {
		var err error
		if queues, err = o.store.Gates.GetJobQueues(ctx); err != nil {
			return nil, err
		}
	}
	return &permitBook{
		wf: st.WorkflowID, inst: st.InstanceID, run: st.RunID, now: now.UnixMilli(), snap: snap,
		holders: map[string]map[string]int64{}, waiters: map[string]map[string]int64{},
		queues: queues, qholders: map[string]map[string]int64{}, qwaiters: map[string]map[string]int64{},
	}, nil
}

// touch returns the working holders and waiters of tag, copying them from
// the snapshot on first use without the holders whose lease expired.
func (b *permitBook) touch(tag string) (h, w map[string]int64) {
	return touchWorking(b.snap, b.holders, b.waiters, tag, b.now)
}

// touchWorking returns the working holders and waiters of key, kept in
// holders and waiters, copying them from snap[key] on first use without the
// holders whose lease ended before now: the same for tags and job queues.
func touchWorking(snap map[string]*store.TagPermit, holders, waiters map[string]map[string]int64, key string, now int64) (h, w map[string]int64) {
	if h, ok := holders[key]; ok {
		return h, waiters[key]
	}
	h, w = workingCopy(snap[key], now)
	holders[key], waiters[key] = h, w
	return h, w
}

// workingCopy copies permit p's holders, without those whose lease ended
// before now, and its waiters.
func workingCopy(p *store.TagPermit, now int64) (h, w map[string]int64) {
	h = make(map[string]int64, len(p.Holders))
	for k, exp := range p.Holders {
		if exp >= now {
			h[k] = exp
		}
	}
	w = maps.Clone(p.Waiters)
	if w == nil {
		w = map[string]int64{}
	}
	return h, w
}

// limited returns the tags among the step's and the internal one that
// carry a permit, without duplicates, the internal tag first.
func (b *permitBook) limited(tags []string) []string {
	var out []string
	for _, t := range append([]string{workflowTag(b.wf)}, tags...) {
		if _, ok := b.snap[t]; ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Acquire implements engine.Permits.
func (b *permitBook) Acquire(req engine.PermitRequest) engine.PermitAnswer {
	k := store.PermitKey(b.wf, b.inst, b.run, req.StepID, req.Attempt)
	tags := b.limited(req.Tags)
	var full []string
	for _, t := range tags {
		h, _ := b.touch(t)
		if _, held := h[k]; !held && int64(len(h)) >= b.snap[t].MaxAllowed {
			full = append(full, t)
		}
	}
	queued, why, err := b.queueAsk(k, req)
	if err != nil {
		return engine.PermitAnswer{Err: err}
	}
	if len(full) > 0 || queued != "" {
		for _, t := range full {
			_, w := b.touch(t)
			if _, ok := w[k]; !ok {
				w[k] = b.now
			}
		}
		if why == "" {
			why = "waiting for tag permits: " + strings.Join(full, ", ")
		} else if len(full) > 0 {
			why += "; and for tag permits: " + strings.Join(full, ", ")
		}
		if queued != "" {
			full = append(full, queued)
		}
		return engine.PermitAnswer{Tags: full, Why: why}
	}
	exp := b.now + (req.Lease + leaseMargin).Milliseconds()
	for _, t := range tags {
		h, w := b.touch(t)
		h[k] = exp
		delete(w, k)
	}
	if req.Queue != nil {
		tags = append(tags, b.queueHold(k, req, exp))
	}
	return engine.PermitAnswer{OK: true, Tags: tags}
}

// Release implements engine.Permits.
func (b *permitBook) Release(stepID string, attempt int64, tags []string, held bool) {
	k := store.PermitKey(b.wf, b.inst, b.run, stepID, attempt)
	for _, t := range tags {
		if name, ok := strings.CutPrefix(t, queueTagPrefix); ok {
			b.queueRelease(k, name, held)
			continue
		}
		if _, ok := b.snap[t]; !ok {
			continue // the permit was removed: nothing to return
		}
		h, w := b.touch(t)
		if held {
			delete(h, k)
		} else {
			delete(w, k)
		}
	}
}

// updates returns the net change of every touched permit, and the wakes
// for runs waiting on permits this round freed.
func (b *permitBook) updates() ([]store.PermitUpdate, []store.WakeRun, error) {
	var ups []store.PermitUpdate
	wakes := runWakes{event: permitsEventID(b.now), woken: map[string]bool{}}
	for _, tag := range slices.Sorted(maps.Keys(b.holders)) {
		p := b.snap[tag]
		h, w := b.holders[tag], b.waiters[tag]
		u := store.PermitUpdate{Tag: tag, ExpectV: p.V, Hold: diffAdded(p.Holders, h), Release: diffRemoved(p.Holders, h),
			Wait: diffAdded(p.Waiters, w), Unwait: diffRemoved(p.Waiters, w)}
		if len(u.Hold) == 0 && len(u.Release) == 0 && len(u.Wait) == 0 && len(u.Unwait) == 0 {
			continue
		}
		ups = append(ups, u)
		free := p.MaxAllowed - int64(len(h))
		if len(u.Release) == 0 || free <= 0 {
			continue
		}
		freed := int64(0)
		for _, k := range oldestFirst(w) {
			if freed >= free || wakes.full() {
				break
			}
			hk, err := store.ParsePermitKey(k)
			if err != nil {
				return nil, nil, err
			}
			if b.deciding(hk) {
				continue // this run retried its own waiting steps already
			}
			freed++
			wakes.add(hk)
		}
	}
	return b.queueUpdates(ups, &wakes)
}

// deciding reports whether hk is a step attempt of the run deciding.
func (b *permitBook) deciding(hk store.PermitHolder) bool {
	return hk.WorkflowID == b.wf && hk.InstanceID == b.inst && hk.RunID == b.run
}

// runWakes gathers the wakes of the runs whose waiters a commit's freed
// permits and queue capacity let go on: one a run, at most maxPermitWakes.
type runWakes struct {
	event string // the id of the event each wake carries
	woken map[string]bool
	list  []store.WakeRun
}

// full reports whether no more runs may be woken.
func (r *runWakes) full() bool { return len(r.list) >= maxPermitWakes }

// add wakes hk's run, unless it is woken already.
func (r *runWakes) add(hk store.PermitHolder) {
	runKey := fmt.Sprintf("%s#%d#%d", hk.WorkflowID, hk.InstanceID, hk.RunID)
	if r.woken[runKey] {
		return
	}
	r.woken[runKey] = true
	r.list = append(r.list, store.WakeRun{
		WorkflowID: hk.WorkflowID, InstanceID: hk.InstanceID, RunID: hk.RunID,
		Event: store.Event{ID: r.event, Body: mustJSON(engine.Continue{})},
	})
}

// diffAdded returns the entries of after that before lacks or holds with
// another value.
func diffAdded(before, after map[string]int64) map[string]int64 {
	var out map[string]int64
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			if out == nil {
				out = map[string]int64{}
			}
			out[k] = v
		}
	}
	return out
}

// diffRemoved returns the keys of before that after lacks, sorted.
func diffRemoved(before, after map[string]int64) []string {
	var out []string
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// oldestFirst orders waiters by when they started waiting, then by key.
func oldestFirst(w map[string]int64) []string {
	keys := slices.Collect(maps.Keys(w))
	sort.Slice(keys, func(i, j int) bool {
		if w[keys[i]] != w[keys[j]] {
			return w[keys[i]] < w[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// hasWork reports whether a run's steps could need permits this round.
func hasWork(st *engine.Instance) bool {
	return st.Status == model.WorkflowCreated || st.Status == model.WorkflowInProgress
}

// breakpoints returns workflow wf's breakpoints as the engine matches them.
func (o *Rounds) breakpoints(ctx context.Context, wf string) ([]engine.Breakpoint, error) {
	list, err := o.store.Gates.ListBreakpoints(ctx, wf, "", false)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Breakpoint, len(list))
	for i, b := range list {
		out[i] = engine.Breakpoint{StepID: b.StepID, Version: b.Version, Instance: b.Instance, Run: b.Run, Attempt: b.Attempt}
	}
	return out, nil
}

// runBreakpoints returns the breakpoints a run of workflow wf meets: wf's
// own and, for an iteration (owner set: the workflow whose definition holds
// its steps), the owner's breakpoints that match every run — one naming an
// instance, run or attempt names the owner's, not the iteration's.
func (o *Rounds) runBreakpoints(ctx context.Context, wf, owner string) ([]engine.Breakpoint, error) {
	bps, err := o.breakpoints(ctx, wf)
	if err != nil || owner == "" {
		return bps, err
	}
	owned, err := o.breakpoints(ctx, owner)
	if err != nil {
		return nil, err
	}
	for _, b := range owned {
		if b.Version == 0 && b.Instance == 0 && b.Run == 0 && b.Attempt == 0 {
			bps = append(bps, b)
		}
	}
	return bps, nil
}

// permitMark is a copy of a permitBook's working state.
type permitMark struct {
	holders, waiters, qholders, qwaiters map[string]map[string]int64
}

// checkpoint copies the working state, so that a decision the round drops
// can be undone; nil-safe.
func (b *permitBook) checkpoint() permitMark {
	if b == nil {
		return permitMark{}
	}
	cp := func(m map[string]map[string]int64) map[string]map[string]int64 {
		out := make(map[string]map[string]int64, len(m))
		for k, v := range m {
			out[k] = maps.Clone(v)
		}
		return out
	}
	return permitMark{holders: cp(b.holders), waiters: cp(b.waiters), qholders: cp(b.qholders), qwaiters: cp(b.qwaiters)}
}

// rollback restores a checkpoint; nil-safe.
func (b *permitBook) rollback(m permitMark) {
	if b == nil {
		return
	}
	b.holders, b.waiters, b.qholders, b.qwaiters = m.holders, m.waiters, m.qholders, m.qwaiters
}
