package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
	"github.com/maestro-serverless/maestro/store/internal/runpages"
)

// statusRunning is the attempt status a claim needs.
const statusRunning = "RUNNING"

// plan is a commit's writes in package store's transaction order, where
// the writes whose failed condition means something other than a conflict
// are, and the first write DynamoDB would refuse as malformed (it refuses
// the request once it is sent, after the count).
type plan struct {
	ws                      []write
	slotIndex, requestIndex int
	invalid                 error
}

func (p *plan) add(w ...write) { p.ws = append(p.ws, w...) }

// refuse records a malformed write.
func (p *plan) refuse(err error) {
	if p.invalid == nil {
		p.invalid = err
	}
}

// CommitRun writes a decision at once, conditioned on the run item's
// version being ExpectV (or its absence, with Create): store.ErrConflict,
// store.ErrNoSlot, store.ErrRequestTaken when a condition fails,
// store.ErrTooManyItems past store.MaxTransactItems writes and a
// *store.ItemTooLargeError for an item past DynamoDB's limit, with nothing
// written. The run's state is split over pages as package store splits it
// (c.Pages is not read: see pages.go).
func (s *Runs) CommitRun(ctx context.Context, c store.Commit) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	pc, err := s.prepareCommit(c)
	if err != nil {
		return err
	}
	if pc.plan.invalid != nil {
		return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, pc.plan.invalid)
	}
	if err := s.sendCommit(c, pc.plan); err != nil {
		return err
	}
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	for i, w := range pc.writes {
		s.t.set(pk, w.SK, pc.pages[i])
	}
	for _, k := range pc.cur.Replaced(pc.next) {
		s.t.set(pk, k, nil)
	}
	return nil
}

// preparedCommit is a commit planned and counted: the run's pages as read
// (cur) and after it (next), the page items it puts and their writes, and
// its transaction's writes.
type preparedCommit struct {
	cur, next runpages.Set
	writes    []runpages.Write
	pages     []*pageItem
	plan      *plan
}

// CommitItems plans c as CommitRun does and returns how many writes it
// makes, past store.MaxTransactItems too (see store.Runs.CommitItems). It
// writes nothing.
func (s *Runs) CommitItems(ctx context.Context, c store.Commit) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	defer s.lock()()
	pc, err := s.planWrites(c)
	if err != nil {
		return 0, err
	}
	return len(pc.plan.ws), nil
}

// prepareCommit plans c (planWrites) and holds its count against
// DynamoDB's limit on items per transaction. s is locked.
func (s *Runs) prepareCommit(c store.Commit) (*preparedCommit, error) {
	pc, err := s.planWrites(c)
	if err != nil {
		return nil, err
	}
	if n := len(pc.plan.ws); n > maxTransactItems {
		return nil, fmt.Errorf("store: commit of %s/%d: %w", c.WorkflowID, c.InstanceID, &store.TooManyItemsError{Items: n})
	}
	return pc, nil
}

// planWrites splits c's state over pages as package store does, plans
// every write and sizes each item. s is locked.
func (s *Runs) planWrites(c store.Commit) (*preparedCommit, error) {
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	pc := &preparedCommit{}
	if it, ok := s.t.get(pk, layout.RunSK(c.RunID)).(*runItem); ok && c.Create == nil {
		pc.cur.Keys = it.pages
		for _, k := range it.pages {
			if pg, ok := s.t.get(pk, k).(*pageItem); ok {
				pc.cur.Base = append(pc.cur.Base, pg.entries)
			}
		}
	}
	state, writes, next, err := runpages.Split(c.State, pc.cur, c.Unsettled, func(page int) (string, error) {
		s.pageTag++
		return fmt.Sprintf("%s%04d#%012x", layout.PagePrefix(c.RunID), page, s.pageTag), nil
	})
	if err != nil {
		return nil, err
	}
	pc.writes, pc.next, pc.pages = writes, next, make([]*pageItem, len(writes))
	for i, w := range writes {
		entries, err := pageEntries(w.Steps)
		if err != nil {
			return nil, err
		}
		pc.pages[i] = &pageItem{entries: entries}
		if n := itemSize(pk, w.SK, pc.pages[i]); n > store.MaxItemBytes {
			return nil, tooLarge("run state page", n)
		}
	}
	if pc.plan, err = s.planCommit(c, state, next.Keys); err != nil {
		return nil, err
	}
	return pc, nil
}

// sendCommit applies a planned commit and says which error a failed
// condition is.
func (s *Runs) sendCommit(c store.Commit, p *plan) error {
	err := s.t.transact(p.ws)
	if err == nil {
		return nil
	}
	cc, ok := asCancelled(err)
	switch {
	case !ok:
		return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, err)
	case len(p.ws) == 1:
		return fmt.Errorf("store: commit %s/%d/%d at v%d: %w", c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV, store.ErrConflict)
	case c.Admit && cc.at(p.slotIndex) && !cc.at(0):
		return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, store.ErrNoSlot)
	case cc.at(p.requestIndex):
		return fmt.Errorf("store: create %s/%d: %w", c.WorkflowID, c.InstanceID, store.ErrRequestTaken)
	}
	return fmt.Errorf("store: commit %s/%d/%d at v%d: %w (%v)", c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV, store.ErrConflict, cc)
}

// planCommit lists every write of commit c, the run item first.
func (s *Runs) planCommit(c store.Commit, state []byte, pages []string) (*plan, error) {
	p := &plan{slotIndex: -1, requestIndex: -1}
	held, spilled := store.SplitTimeline(c.PriorTimeline, c.Timeline)
	run, err := s.runWrite(c, state, pages, held)
	if err != nil {
		return nil, err
	}
	p.add(run)
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	for _, a := range c.Attempts {
		w, err := s.attemptWrite(p, c.WorkflowID, c.InstanceID, c.RunID, a)
		if err != nil {
			return nil, err
		}
		p.add(w)
	}
	for _, t := range spilled {
		p.add(timelineWrite(p, pk, c.RunID, t))
	}
	for _, id := range c.Consumed {
		p.add(del(pk, layout.EventSK(c.RunID, id)))
	}
	s.planEvents(p, c.WorkflowID, c.InstanceID, c.RunID, c.NewEvents...)
	planSlot(p, c)
	if err := s.planOthers(p, c); err != nil {
		return nil, err
	}
	planInstance(p, c)
	return p, nil
}

// runWrite is the conditional put of the run item.
func (s *Runs) runWrite(c store.Commit, state []byte, pages []string, held []store.TimelineItem) (write, error) {
	ob, err := outboxJSON(c.Outbox)
	if err != nil {
		return write{}, err
	}
	tl, err := heldTimeline(held)
	if err != nil {
		return write{}, err
	}
	it := &runItem{v: c.ExpectV + 1, status: c.Status, state: clone(state), outbox: ob, timeline: tl, pages: pages}
	if c.SweepAt > 0 {
		it.sweepAt = c.SweepAt
	}
	pk, sk := layout.RunPK(c.WorkflowID, c.InstanceID), layout.RunSK(c.RunID)
	if n := itemSize(pk, sk, it); n > store.MaxItemBytes {
		return write{}, fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, tooLarge("run state", n))
	}
	w := put(pk, sk, it)
	if c.Create != nil {
		w.cond = absent
	} else {
		w.cond = func(cur any) bool { r, ok := cur.(*runItem); return ok && r.v == c.ExpectV }
	}
	return w, nil
}

// planEvents adds inbox event puts to run run of instance inst of wf.
func (s *base) planEvents(p *plan, wf string, inst, run int64, evs ...store.Event) {
	for _, ev := range evs {
		it, err := s.newEvent(ev)
		if err != nil {
			p.refuse(err)
			it = &eventItem{}
		}
		p.add(put(layout.RunPK(wf, inst), layout.EventSK(run, ev.ID), it))
	}
}

// timelineWrite is the put of instance timeline entry t of run run.
func timelineWrite(p *plan, pk string, run int64, t store.TimelineItem) write {
	if err := needBody(t.Body, "timeline entry"); err != nil {
		p.refuse(err)
	}
	return put(pk, layout.TimelineSK(run, t.Seq), &timelineItem{body: clone(t.Body)})
}

// attemptWrite is the update of step attempt a of run run: its status,
// its new timeline entries appended (or, ReplaceTimeline, replacing
// them; or after Start's, on an item not written yet), its claim and,
// unless nil, its body; an attempt that ends loses its recorded outcome
// and its worker end's marks. It creates the item too.
func (s *base) attemptWrite(p *plan, wf string, inst, run int64, a store.Attempt) (write, error) {
	if len(a.Body) > store.MaxItemBytes {
		if n := storedLen(a.Body); n > store.MaxItemBytes {
			return write{}, fmt.Errorf("store: commit %s/%d/%d: %w", wf, inst, run,
				tooLarge(fmt.Sprintf("step attempt %s/%d", a.StepID, a.Attempt), n))
		}
	}
	entries := strs(a.Timeline)
	var start []string
	var startBody []byte
	if a.Start != nil && !a.ReplaceTimeline {
		start = strs(a.Start.Timeline)
		if a.Body == nil {
			startBody = clone(a.Start.Body)
		}
	}
	body := clone(a.Body)
	return write{pk: layout.RunPK(wf, inst), sk: layout.AttemptSK(run, a.StepID, a.Attempt), apply: func(cur any) (any, error) {
		n := &attemptItem{}
		if c, ok := cur.(*attemptItem); ok {
			n = c.copy()
		}
		n.status = a.Status
		switch {
		case a.ReplaceTimeline:
			n.tl = entries
		case cur == nil && start != nil:
			n.tl = append(start, entries...)
		case cur == nil:
			n.tl = entries
		default:
			n.tl = append(slices.Clip(n.tl), entries...)
		}
		if startBody != nil && n.body == nil {
			n.body = startBody
		}
		if a.Status != statusRunning {
			n.outcome, n.ob, n.wn, n.hasWN = nil, "", 0, false
		}
		if a.Claim != "" {
			n.claim, n.hasClaim, n.lease, n.hasLease = a.Claim, true, a.Lease, true
		}
		if body != nil {
			n.body = body
		}
		return n, nil
	}}, nil
}

// strs is timeline entries as an attempt item stores them.
func strs(entries [][]byte) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = string(e)
	}
	return out
}

// planSlot adds the run slot's update and the queue entry's delete.
func planSlot(p *plan, c store.Commit) {
	if c.Admit || c.SlotDelta != 0 {
		h := holderKey(c.InstanceID, c.RunID)
		w := write{pk: layout.WorkflowPK(c.WorkflowID), sk: layout.SlotSK, apply: func(cur any) (any, error) {
			n := slotOf(cur)
			n.running, n.hasRunning = n.running+c.SlotDelta, true
			switch {
			case c.SlotDelta > 0:
				n.holders = withHolder(n.holders, h)
			case c.SlotDelta < 0:
				n.holders = withoutHolder(n.holders, h)
			}
			return n, nil
		}}
		if c.Admit || c.CheckQueue {
			w.cond = func(cur any) bool {
				r, _ := cur.(*slotItem)
				if r == nil {
					r = &slotItem{}
				}
				if c.Admit && r.hasRunning && r.running >= c.SlotLimit {
					return false
				}
				return !c.CheckQueue || !r.hasQV || r.qv == c.QueueVersion
			}
		}
		p.slotIndex = len(p.ws)
		p.add(w)
	}
	if c.Dequeue {
		p.add(del(layout.WorkflowPK(c.WorkflowID), layout.QueueSK(c.InstanceID)))
	}
}

// planOthers adds the writes to other items: another run's wake, permits,
// signal waits, lineage, waiters' wakes, inline definitions, loop params,
// child runs and reruns.
func (s *Runs) planOthers(p *plan, c store.Commit) error {
	if o := c.WakeOther; o != nil {
		s.planEvents(p, c.WorkflowID, o.InstanceID, o.RunID, o.Event)
	}
	for _, pm := range c.Permits {
		if len(pm.Hold) > 0 || len(pm.Release) > 0 || len(pm.Wait) > 0 || len(pm.Unwait) > 0 {
			p.add(permitWrite(p, pm))
		}
	}
	for _, w := range c.SignalWaits {
		if w.Remove {
			p.add(del(layout.SignalPK(w.Name), w.Key))
		} else {
			p.add(put(layout.SignalPK(w.Name), w.Key, &waiterItem{name: w.Name}))
		}
	}
	for _, l := range c.Lineage {
		p.add(lineageWrite(l))
	}
	for _, w := range c.Wakes {
		s.planEvents(p, w.WorkflowID, w.InstanceID, w.RunID, w.Event)
	}
	for _, d := range c.Definitions {
		if err := needBody(d.Definition, "inline definition"); err != nil {
			p.refuse(err)
		}
		p.add(put(layout.WorkflowPK(d.WorkflowID), layout.VersionSK(1), &versionItem{def: clone(d.Definition), createTime: d.Now.UnixMilli()}))
	}
	for _, lp := range c.LoopParams {
		if len(lp.Body) > store.MaxItemBytes {
			if n := storedLen(lp.Body); n > store.MaxItemBytes {
				return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID,
					tooLarge(fmt.Sprintf("loop params of step %s/%d", lp.StepID, lp.Attempt), n))
			}
		}
		if err := needBody(lp.Body, "loop params"); err != nil {
			p.refuse(err)
		}
		p.add(put(layout.RunPK(c.WorkflowID, c.InstanceID), layout.LoopParamsSK(c.RunID, lp.StepID, lp.Attempt), &loopParamsItem{body: clone(lp.Body)}))
	}
	for _, ch := range c.Children {
		if err := s.planChild(p, ch); err != nil {
			return err
		}
	}
	for _, nr := range c.Reruns {
		ws, err := s.newRunWrites(nr)
		if err != nil {
			p.refuse(err)
			ws = make([]write, 3)
		}
		p.add(ws...)
	}
	return nil
}

// permitWrite is the update of one permit item, conditioned on its
// version; DynamoDB refuses one that sets and removes the same holder.
func permitWrite(p *plan, u store.PermitUpdate) write {
	for _, k := range u.Release {
		if _, ok := u.Hold[k]; ok {
			p.refuse(validation("two document paths overlap with each other: [holders, %s]", k))
		}
	}
	for _, k := range u.Unwait {
		if _, ok := u.Wait[k]; ok {
			p.refuse(validation("two document paths overlap with each other: [waiters, %s]", k))
		}
	}
	pk, sk := layout.PermitPK(u.Tag), layout.PermitSK
	if u.Queue {
		pk, sk = layout.JobQueuePK, layout.JobQueueSK(u.Tag)
	}
	return write{pk: pk, sk: sk,
		cond: func(cur any) bool { r, ok := cur.(*permitItem); return ok && r.v == u.ExpectV },
		apply: func(cur any) (any, error) {
			n := *cur.(*permitItem)
			n.holders, n.waiters = copyMap(n.holders), copyMap(n.waiters)
			for k, v := range u.Hold {
				n.holders[k] = v
			}
			for k, v := range u.Wait {
				n.waiters[k] = v
			}
			for _, k := range u.Release {
				delete(n.holders, k)
			}
			for _, k := range u.Unwait {
				delete(n.waiters, k)
			}
			n.v++
			return &n, nil
		}}
}

// planChild adds the writes that create a child run: its summary and run
// item (each on its absence) and its first event, or, born, its attempts
// and the timeline entries its run item does not hold.
func (s *Runs) planChild(p *plan, c store.ChildRun) error {
	rec := &store.InstanceRecord{WorkflowID: c.WorkflowID, InstanceID: c.InstanceID, Version: c.Version, RunID: 1, UUID: c.UUID,
		Status: c.Status, Initiator: c.Initiator, CreateTime: c.Now.UnixMilli(), ModifyTime: c.Now.UnixMilli(),
		StartTime: c.StartTime, EndTime: c.EndTime}
	run, err := newRunItem(1, c.Status, c.State, c.Outbox)
	if err != nil {
		p.refuse(err)
		run = &runItem{}
	}
	run.sweepAt = c.SweepAt
	var spilled []store.TimelineItem
	if c.Born {
		var held []store.TimelineItem
		held, spilled = store.SplitTimeline(nil, c.Timeline)
		if run.timeline, err = heldTimeline(held); err != nil {
			return err
		}
	}
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	if n := itemSize(pk, layout.RunSK(1), run); n > store.MaxItemBytes {
		return fmt.Errorf("store: create %s/%d: %w", c.WorkflowID, c.InstanceID, tooLarge("run state", n))
	}
	p.add(putIfAbsent(layout.WorkflowPK(c.WorkflowID), layout.InstanceSK(c.InstanceID), instanceOf(rec)), putIfAbsent(pk, layout.RunSK(1), run))
	if !c.Born {
		s.planEvents(p, c.WorkflowID, c.InstanceID, 1, c.FirstEvent)
		return nil
	}
	for _, a := range c.Attempts {
		w, err := s.attemptWrite(p, c.WorkflowID, c.InstanceID, 1, a)
		if err != nil {
			return err
		}
		p.add(w)
	}
	for _, t := range spilled {
		p.add(timelineWrite(p, pk, 1, t))
	}
	return nil
}

// planInstance adds the instance summary's write: created with its start
// request's record by a creating commit, else updated.
func planInstance(p *plan, c store.Commit) {
	if r := c.Create; r != nil {
		created := *r
		if u := c.Instance; u != nil {
			created.RunID, created.Status, created.StartTime, created.EndTime, created.ModifyTime = u.RunID, u.Status, u.StartTime, u.EndTime, u.ModifyTime
		}
		p.add(putIfAbsent(layout.WorkflowPK(r.WorkflowID), layout.InstanceSK(r.InstanceID), instanceOf(&created)))
		if r.RequestID != "" {
			p.requestIndex = len(p.ws)
			p.add(putIfAbsent(layout.WorkflowPK(r.WorkflowID), layout.RequestSK(r.RequestID), &requestItem{instance: r.InstanceID}))
		}
		return
	}
	if u := c.Instance; u != nil {
		p.add(write{pk: layout.WorkflowPK(c.WorkflowID), sk: layout.InstanceSK(c.InstanceID), cond: present, apply: func(cur any) (any, error) {
			n := *cur.(*instanceItem)
			n.run, n.status, n.startTime, n.endTime, n.modifyTime = u.RunID, u.Status, u.StartTime, u.EndTime, u.ModifyTime
			return &n, nil
		}})
	}
}

// lineageWrite is the put of lineage link l.
func lineageWrite(l store.LineageLink) write {
	return put(layout.SignalPK(l.Name), layout.LineagePrefix(l.Seq)+l.ID, &lineageItem{body: string(l.Body)})
}
