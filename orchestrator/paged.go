package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// Maestro's paged lists (its PaginationHelper): a list of ids, newest
// (highest) first, read a page at a time forwards (toward older ids,
// Maestro's "first") or backwards (toward newer ids, its "last") from a
// cursor, the id the previous page ended at.

// MaxPageSize is the largest page of a paged list, Maestro's bound on
// first and last (1 to 200).
const MaxPageSize = 200

// MaxPageBytes bounds the stored bytes one page of workflow versions
// (their definitions) or of runs (their states) reads: a version may hold
// a 256 KiB definition, a run's state up to DynamoDB's 400 KB, and a
// Lambda answer is at most 6 MB. A page that would pass it ends early (at
// least one element), and its cursors say where it ended.
const MaxPageBytes = 4 << 20

// PageRequest asks for one page of a paged list.
type PageRequest struct {
	// Prev pages backwards, toward newer ids (Maestro's last); otherwise
	// forwards, toward older ids (its first).
	Prev bool
	// Size is how many ids the page covers, 1 to MaxPageSize.
	Size int64
	// Cursor is the id the page continues from, itself excluded; 0 starts
	// at the newest id (forwards) or the oldest (backwards).
	Cursor int64
}

// Page is one page of a paged list: its elements, newest first, and
// where they sit in the list.
type Page[T any] struct {
	Elements []T
	// High and Low are the ids of the first and last element (0 when
	// the page is empty).
	High, Low int64
	// Latest and Earliest are the newest and oldest ids of the whole
	// list (0 when it is empty).
	Latest, Earliest int64
}

// check refuses a request outside the bounds, naming the parameter.
func (r PageRequest) check() error {
	if r.Size < 1 || r.Size > MaxPageSize {
		name := "first"
		if r.Prev {
			name = "last"
		}
		return Invalid("invalid page size", fmt.Sprintf("%s: must be from 1 to %d", name, MaxPageSize))
	}
	if r.Cursor < 0 {
		return Invalid("bad cursor", "cursor: must not be negative")
	}
	return nil
}

// span returns the ids, low to high, a page covers in a list of ids
// earliest..latest, and false when it covers none.
func (r PageRequest) span(earliest, latest int64) (low, high int64, ok bool) {
	if latest < 1 || latest < earliest {
		return 0, 0, false
	}
	if r.Prev {
		low = earliest
		if r.Cursor != 0 {
			low = max(earliest, r.Cursor+1)
		}
		high = min(latest, low+r.Size-1)
	} else {
		high = latest
		if r.Cursor != 0 {
			high = min(latest, r.Cursor-1)
		}
		low = max(earliest, high-r.Size+1)
	}
	return low, high, low <= high
}

// ids returns the ids from high down to low.
func ids(low, high int64) []int64 {
	out := make([]int64, 0, high-low+1)
	for id := high; id >= low; id-- {
		out = append(out, id)
	}
	return out
}

// chunks calls fn with ids at most n at a time (BatchGetItem's 100 keys).
func chunks(all []int64, n int, fn func([]int64) error) error {
	for len(all) > 0 {
		k := min(len(all), n)
		if err := fn(all[:k]); err != nil {
			return err
		}
		all = all[k:]
	}
	return nil
}

// newPage builds a page from elements ordered newest first and their ids.
func newPage[T any](elems []T, idOf func(T) int64, earliest, latest int64) *Page[T] {
	p := &Page[T]{Elements: elems, Latest: latest, Earliest: earliest}
	if elems == nil {
		p.Elements = []T{}
	}
	if len(elems) > 0 {
		p.High, p.Low = idOf(elems[0]), idOf(elems[len(elems)-1])
	}
	if latest == 0 {
		p.Earliest = 0
	}
	return p
}

// ListRuns returns a page of an instance's runs, newest first (Maestro's
// GET .../instances/{instanceId}/runs). Each is read with its state, as
// GetRun has it, without the timeline.
func (o *Runs) ListRuns(ctx context.Context, wf string, inst int64, req PageRequest) (*Page[*InstanceView], error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	low, high, ok := req.span(1, rec.RunID)
	if !ok {
		return newPage[*InstanceView](nil, nil, 1, rec.RunID), nil
	}
	rrs, err := readWithin(ids(low, high), req.Prev, MaxPageBytes, func(part []int64) (map[int64]*store.RunRecord, error) {
		keys := make([]store.RunKey, len(part))
		for i, run := range part {
			keys[i] = store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run}
		}
		recs, err := o.store.Runs.GetRuns(ctx, keys)
		out := make(map[int64]*store.RunRecord, len(recs))
		for k, r := range recs {
			out[k.RunID] = r
		}
		return out, err
	}, func(r *store.RunRecord) int { return len(r.State) })
	if err != nil {
		return nil, Internal(err)
	}
	views := make([]*InstanceView, 0, len(rrs))
	for _, rr := range rrs {
		st, err := decodeState(rr)
		if err != nil {
			return nil, Internal(err)
		}
		v := runHeader(st, rr.Ops)
		if rr.RunID == rec.RunID {
			v.ModifyTime = rec.ModifyTime
		}
		views = append(views, v)
	}
	return newPage(views, func(v *InstanceView) int64 { return v.WorkflowRunID }, 1, rec.RunID), nil
}

// runHeader is the view of run st without its timeline and rollup: ids,
// status, initiator, params, times and its steps' statuses.
func runHeader(st *engine.Instance, ops pricing.Usage) *InstanceView {
	view := &InstanceView{
		WorkflowID: st.WorkflowID, WorkflowInstanceID: st.InstanceID, WorkflowRunID: st.RunID,
		WorkflowUUID: st.UUID, WorkflowVersionID: st.WorkflowVersion, Status: string(st.Status), TraceID: st.TraceID,
		Params:     st.Params,
		CreateTime: st.CreateTime, StartTime: st.StartTime, EndTime: st.EndTime,
		StepStatuses: map[string]string{},
	}
	if st.Initiator.Type != "" {
		view.Initiator = &Initiator{
			Type: st.Initiator.Type, Timezone: st.Initiator.Timezone, ScheduledTime: st.Initiator.ScheduledTime,
			Principal: st.Initiator.Principal, Parent: st.Parent, Backfill: st.Initiator.Backfill,
		}
	}
	overview := &RuntimeOverview{StepOverview: map[string]int64{}, RunStatus: string(st.Status)}
	for _, s := range st.Steps {
		status := string(s.Status)
		if status == "" {
			status = string(model.StepNotCreated)
		}
		view.StepStatuses[s.StepID] = status
		overview.StepOverview[status]++
		overview.TotalStepCount++
	}
	view.RuntimeOverview = overview
	view.RunConfig = runConfigOf(st)
	cost := pricing.Price(runUsage(st, ops))
	view.Cost = &cost
	return view
}

// runUsage is what run st recorded it was billed for: its steps' compute
// and its children's (st.Cost), and its orchestration's and its children's
// (ops, store.RunRecord.Ops).
func runUsage(st *engine.Instance, ops pricing.Usage) pricing.Usage {
	return st.Cost.Add(ops)
}

// ListInstancePage returns a page of a workflow's instances, newest first,
// each as its latest run (Maestro's GET .../{id}/instances with first or
// last). Ids reserved by a start that never stored its instance are
// skipped, so a page may hold fewer than its size.
func (o *Runs) ListInstancePage(ctx context.Context, wf string, req PageRequest) (*Page[*InstanceView], error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	latest, err := o.latestInstance(ctx, wf)
	if err != nil {
		return nil, err
	}
	low, high, ok := req.span(1, latest)
	if !ok {
		return newPage[*InstanceView](nil, nil, 1, latest), nil
	}
	want := ids(low, high)
	got := make(map[int64]*store.InstanceRecord, len(want))
	err = chunks(want, 100, func(part []int64) error {
		recs, err := o.store.Instances.GetInstances(ctx, wf, part)
		for id, r := range recs {
			got[id] = r
		}
		return err
	})
	if err != nil {
		return nil, Internal(err)
	}
	views := make([]*InstanceView, 0, len(want))
	for _, id := range want {
		if r, ok := got[id]; ok {
			views = append(views, instanceSummary(r))
		}
	}
	return newPage(views, func(v *InstanceView) int64 { return v.WorkflowInstanceID }, 1, latest), nil
}

// latestInstance returns the highest instance id a workflow has given
// out: its head's counter, or for a loop's inline workflow, which has no
// head, its newest iteration (one item read); a 404 when neither exists.
func (o *Runs) latestInstance(ctx context.Context, wf string) (int64, error) {
	head, err := o.head(ctx, wf)
	if err == nil {
		return max(head.NextInstance-1, 0), nil
	}
	if !model.IsInlineWorkflowID(wf) {
		return 0, err
	}
	recs, _, lerr := o.store.Instances.ListInstances(ctx, wf, "", "", 1)
	if lerr != nil {
		return 0, Internal(lerr)
	}
	if len(recs) == 0 {
		return 0, err
	}
	return recs[0].InstanceID, nil
}

// instanceSummary is the view of an instance from its summary item.
// Its initiator is the one the summary item stores (no further read): its
// type, scheduled time, principal and backfill, without a parent.
func instanceSummary(r *store.InstanceRecord) *InstanceView {
	v := &InstanceView{
		WorkflowID: r.WorkflowID, WorkflowInstanceID: r.InstanceID, WorkflowRunID: r.RunID,
		WorkflowUUID: r.UUID, WorkflowVersionID: r.Version, Status: r.Status,
		CreateTime: r.CreateTime, StartTime: r.StartTime, EndTime: r.EndTime, ModifyTime: r.ModifyTime,
	}
	var ini engine.Initiator
	if len(r.Initiator) > 0 && json.Unmarshal(r.Initiator, &ini) == nil && ini.Type != "" {
		v.Initiator = &Initiator{
			Type: ini.Type, Timezone: ini.Timezone, ScheduledTime: ini.ScheduledTime,
			Principal: ini.Principal, Backfill: ini.Backfill,
		}
	}
	return v
}

// ListVersions returns a page of a workflow's versions, newest first
// (Maestro's GET /workflows/{id}/versions/pagination). A page stops early
// at MaxPageBytes of stored definitions.
func (o *Definitions) ListVersions(ctx context.Context, wf string, req PageRequest) (*Page[*DefinitionView], error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	low, high, ok := req.span(1, head.Latest)
	if !ok {
		return newPage[*DefinitionView](nil, nil, 1, head.Latest), nil
	}
	recs, err := o.versionsWithin(ctx, wf, ids(low, high), req.Prev, MaxPageBytes)
	if err != nil {
		return nil, err
	}
	views := make([]*DefinitionView, 0, len(recs))
	for _, r := range recs {
		v, err := definitionView(head, r)
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return newPage(views, func(v *DefinitionView) int64 { return v.Metadata.WorkflowVersionID }, 1, head.Latest), nil
}

// pageChunk is how many items a byte-budgeted page reads a request.
const pageChunk = 25

// readWithin reads the items of ids want (newest first) pageChunk at a
// time with read, from the end the page is read from — the newest when
// paging forwards, the oldest backwards — and stops once their sizes
// pass budget bytes (keeping at least one), so a page of large items
// reads little more than it answers. Ids read returns nothing for are
// skipped. It returns the items newest first.
func readWithin[T any](want []int64, prev bool, budget int, read func([]int64) (map[int64]T, error), size func(T) int) ([]T, error) {
	order := slices.Clone(want)
	if prev {
		slices.Reverse(order)
	}
	var out []T
	total := 0
	for len(order) > 0 {
		part := order[:min(len(order), pageChunk)]
		order = order[len(part):]
		got, err := read(part)
		if err != nil {
			return nil, err
		}
		for _, id := range part {
			item, ok := got[id]
			if !ok {
				continue
			}
			if total += size(item); total > budget && len(out) > 0 {
				order = nil
				break
			}
			out = append(out, item)
		}
	}
	if prev {
		slices.Reverse(out)
	}
	return out, nil
}

// versionsWithin reads the versions want (newest first) within budget
// bytes of definitions (readWithin).
func (o *Definitions) versionsWithin(ctx context.Context, wf string, want []int64, prev bool, budget int) ([]*store.VersionRecord, error) {
	recs, err := readWithin(want, prev, budget, func(part []int64) (map[int64]*store.VersionRecord, error) {
		return o.store.Definitions.GetVersions(ctx, wf, part)
	}, func(r *store.VersionRecord) int { return len(r.Definition) })
	if err != nil {
		return nil, Internal(err)
	}
	return recs, nil
}

// WorkflowPageRequest asks for one page of the workflows, which are
// listed in id order (strings, not numbers: Maestro has no such list).
type WorkflowPageRequest struct {
	// Prev pages backwards, toward smaller ids; otherwise forwards.
	Prev bool
	// Size is how many workflows, 1 to MaxPageSize.
	Size int64
	// Cursor is the workflow id the page continues from, itself
	// excluded; "" starts at the first id (forwards) or the last
	// (backwards).
	Cursor string
}

// WorkflowPage is one page of the workflows in id order.
type WorkflowPage struct {
	Workflows []WorkflowSummary
	// HasNext says workflows may follow the page's last one; HasPrev
	// that some came before its first (the directory is read one way at
	// a time, so each is true when the read stopped at its limit or
	// started from a cursor: the other page may turn out empty).
	HasNext, HasPrev bool
}

// ListWorkflowPage returns a page of the stored workflows in id order
// (GET /api/v3/workflows with first or last), read from the workflow
// directory index as ListWorkflows reads it.
func (o *Definitions) ListWorkflowPage(ctx context.Context, req WorkflowPageRequest) (*WorkflowPage, error) {
	if err := (PageRequest{Prev: req.Prev, Size: req.Size}).check(); err != nil {
		return nil, err
	}
	if req.Cursor != "" {
		if err := model.CheckWorkflowID(req.Cursor); err != nil {
			return nil, Invalid("bad cursor", "cursor: is not a cursor this API returned")
		}
	}
	list := headLister(o.store.Definitions.ListWorkflows)
	if req.Prev {
		list = o.store.Definitions.ListWorkflowsBefore
	}
	heads, next, err := o.access.readableHeads(ctx, list, req.Cursor, int(req.Size))
	if err != nil {
		return nil, AsError(err)
	}
	out := &WorkflowPage{Workflows: make([]WorkflowSummary, 0, len(heads))}
	for _, h := range heads {
		out.Workflows = append(out.Workflows, workflowSummary(h))
	}
	ahead, behind := next != "", req.Cursor != ""
	if req.Prev {
		slices.Reverse(out.Workflows)
		ahead, behind = behind, ahead
	}
	out.HasNext, out.HasPrev = ahead, behind
	return out, nil
}

// workflowSummary is the listing's view of a workflow head.
func workflowSummary(h *store.WorkflowHead) WorkflowSummary {
	return WorkflowSummary{
		WorkflowID: h.WorkflowID, LatestVersion: h.Latest, ActiveVersion: h.Active,
		InstanceCount: max(h.NextInstance-1, 0), PropertiesSnapshot: h.Properties,
		CreateTime: h.CreateTime, ModifyTime: h.ModifyTime,
	}
}
