package orchestrator

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Flatten views: Maestro's /api/v3/views/flatten (its maestro-extensions
// ForeachFlattenController). For a step inside a foreach — nested foreach
// loops included — of a root instance's run, the views list that step in
// every iteration, leaf by leaf: its status, its loop params, where it
// lives. Maestro fills a table from its step events; here the views walk
// the loop tree itself, in rank order, reading each level's iterations in
// batches (their summaries for the latest run, then their run items), so
// nothing is written per step for a view few users open. A request reads
// at most FlattenScanLimit leaf iterations; a filtered page cut short by it
// says there is more and where to go on from.

// StepIteration is a step in one (leaf) iteration of the foreach loops
// around it, in Maestro's shape.
type StepIteration struct {
	WorkflowID         string `json:"workflow_id"`
	WorkflowInstanceID int64  `json:"workflow_instance_id"`
	WorkflowRunID      int64  `json:"workflow_run_id"`
	StepID             string `json:"step_id"`
	// IterationRank is the path of iteration ids from the outermost loop to
	// the innermost, each prefixed with its number of digits (Maestro's
	// encoding, which sorts as the numbers do): "3344-13-223" is 344, 3, 23.
	IterationRank string `json:"iteration_rank"`
	// StepAttemptSeq is run id and step attempt id, from the root run and
	// its foreach step attempt down to the leaf run and the step's attempt,
	// encoded the same way.
	StepAttemptSeq      string            `json:"step_attempt_seq"`
	LeafStepInstanceRef *StepInstanceRef  `json:"leaf_step_instance_ref,omitempty"`
	LoopParams          map[string]string `json:"loop_params,omitempty"`
	StepRuntimeState    StepRuntimeView   `json:"step_runtime_state"`
}

// StepInstanceRef names a step attempt (Maestro's StepInstanceReference).
type StepInstanceRef struct {
	WorkflowID         string `json:"workflow_id"`
	WorkflowInstanceID int64  `json:"workflow_instance_id"`
	WorkflowRunID      int64  `json:"workflow_run_id"`
	StepID             string `json:"step_id"`
	StepAttemptID      int64  `json:"step_attempt_id"`
}

// StepIterationPage is a page of step iterations (Maestro's
// PaginationResult).
type StepIterationPage struct {
	PageInfo   PageInfo        `json:"page_info"`
	TotalCount int             `json:"total_count"`
	Elements   []StepIteration `json:"elements"`
}

// PageInfo locates a page: its cursors go on backwards (StartCursor) and
// forwards (EndCursor).
type PageInfo struct {
	StartCursor     string `json:"start_cursor,omitempty"`
	EndCursor       string `json:"end_cursor,omitempty"`
	HasPreviousPage bool   `json:"has_previous_page"`
	HasNextPage     bool   `json:"has_next_page"`
}

// StepIterationsSummary sums a step's iterations up (Maestro's
// StepIterationsSummary).
type StepIterationsSummary struct {
	// RepresentativeIteration is the iteration whose status matters most
	// (Maestro's priorities: a paused or failed one first), the first in
	// rank order among equals.
	RepresentativeIteration *StepIteration      `json:"representative_iteration,omitempty"`
	CountByStatus           map[string]int64    `json:"count_by_status,omitempty"`
	LoopParamValues         map[string][]string `json:"loop_param_values,omitempty"`
}

// FlattenQuery selects a page of step iterations: First (forwards) or Last
// (backwards) of them, 1 to 200, after or before Cursor; only those whose
// status is in Statuses and whose loop params have the values in
// LoopParams, when set.
type FlattenQuery struct {
	First, Last int
	Cursor      string
	Statuses    []string
	LoopParams  map[string]string
}

// SummaryQuery says what a summary holds.
type SummaryQuery struct {
	StatusCount    bool
	Representative bool
	ValueCount     int
}

// Limits of the flatten views.
const (
	// MaxFlattenPage is the largest page (Maestro's 200).
	MaxFlattenPage = 200
	// FlattenScanLimit bounds the leaf iterations one request reads.
	FlattenScanLimit = 10_000
	// SummaryScanLimit bounds the leaf iterations a summary with status
	// counts or a representative reads.
	SummaryScanLimit = 100_000
	// summarySample is how many iterations the loop param values are
	// sampled from (Maestro's 100).
	summarySample = 100
)

// flatLoop is the chain of foreach steps around a step: loops[0] is a step
// of the root workflow, the step itself is in the last one's body.
type flatLoop struct {
	loops     []string
	loopNames []string // the loop params' names, outermost loop first
}

// findLoops returns the foreach steps around step, outermost first, among
// steps; nil when step is not inside one.
func findLoops(steps []model.Step, step string) []*model.Step {
	for i := range steps {
		s := &steps[i]
		if s.Kind != model.KindForeach {
			continue
		}
		for j := range s.Steps {
			if s.Steps[j].ID == step {
				return []*model.Step{s}
			}
		}
		if inner := findLoops(s.Steps, step); inner != nil {
			return append([]*model.Step{s}, inner...)
		}
	}
	return nil
}

// flatWalk walks the iterations of a step, in rank order or reverse.
type flatWalk struct {
	o       *Runs
	rootWF  string
	inst    int64
	run     int64
	step    string
	loop    flatLoop
	reverse bool
	scanned int
	limit   int
	// cut is set when the walk stopped at limit: last is the rank it
	// reached.
	cut  bool
	last string
}

// level is one loop's run: the state that holds its foreach step, its
// iteration path so far and its attempt sequence.
type level struct {
	st   *engine.Instance
	path []int64
	seq  []string
}

// walk visits the iterations under lv at depth d (0: the root run), in
// order, from the iteration path from on (inclusive at inner levels, past
// it at the leaf; nil: from the first), calling emit with each leaf step
// that exists; emit returns false to stop. It reports false when stopped.
func (w *flatWalk) walk(ctx context.Context, lv level, d int, from []int64, emit func(StepIteration) bool) (bool, error) {
	ss := lv.st.Step(w.loop.loops[d])
	if ss == nil || ss.Loop == nil || ss.Loop.WorkflowID == "" {
		return true, nil
	}
	launched := ss.Loop.Next
	for _, r := range ss.Loop.Running {
		launched = max(launched, r+1)
	}
	ids := make([]int64, 0, launched)
	for n := int64(1); n <= launched; n++ {
		ids = append(ids, n)
	}
	if w.reverse {
		slices.Reverse(ids)
	}
	if len(from) > 0 {
		leaf := d == len(w.loop.loops)-1
		k := slices.IndexFunc(ids, func(n int64) bool {
			switch {
			case w.reverse && leaf:
				return n < from[0]
			case w.reverse:
				return n <= from[0]
			case leaf:
				return n > from[0]
			default:
				return n >= from[0]
			}
		})
		if k < 0 {
			return true, nil
		}
		ids = ids[k:]
	}
	seq := append(slices.Clone(lv.seq), encodeRankPart(lv.st.RunID), encodeRankPart(ss.Attempt))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 100)]
		ids = ids[len(chunk):]
		states, err := w.o.iterationStates(ctx, ss.Loop.WorkflowID, chunk)
		if err != nil {
			return false, err
		}
		for _, n := range chunk {
			st, ok := states[n]
			if !ok {
				continue
			}
			path := append(slices.Clone(lv.path), n)
			if d < len(w.loop.loops)-1 {
				var inner []int64
				if len(from) > 0 && n == from[0] {
					inner = from[1:]
				}
				goOn, err := w.walk(ctx, level{st: st, path: path, seq: seq}, d+1, inner, emit)
				if err != nil || !goOn {
					return goOn, err
				}
				continue
			}
			w.scanned++
			if w.limit > 0 && w.scanned > w.limit {
				w.cut = true
				return false, nil
			}
			w.last = encodeRank(path)
			it, ok := w.iteration(st, path, seq)
			if ok && !emit(it) {
				return false, nil
			}
		}
	}
	return true, nil
}

// iteration is the step iteration of leaf iteration run st, false when the
// step has not been created there.
func (w *flatWalk) iteration(st *engine.Instance, path []int64, seq []string) (StepIteration, bool) {
	s := st.Step(w.step)
	if s == nil || s.Attempt == 0 || s.Status == model.StepNotCreated || s.Status == "" {
		return StepIteration{}, false
	}
	it := StepIteration{
		WorkflowID: w.rootWF, WorkflowInstanceID: w.inst, WorkflowRunID: w.run, StepID: w.step,
		IterationRank:  encodeRank(path),
		StepAttemptSeq: strings.Join(append(slices.Clone(seq), encodeRankPart(st.RunID), encodeRankPart(s.Attempt)), "-"),
		LeafStepInstanceRef: &StepInstanceRef{WorkflowID: st.WorkflowID, WorkflowInstanceID: st.InstanceID,
			WorkflowRunID: st.RunID, StepID: w.step, StepAttemptID: s.Attempt},
		StepRuntimeState: StepRuntimeView{Status: string(s.Status), CreateTime: s.CreateTime, StartTime: s.StartTime, EndTime: s.EndTime},
	}
	for _, name := range w.loop.loopNames {
		if v, ok := st.Params[name]; ok {
			if it.LoopParams == nil {
				it.LoopParams = map[string]string{}
			}
			it.LoopParams[name] = loopValueString(v)
		}
	}
	return it, true
}

// iterationStates reads the latest runs' states of instances insts of
// inline workflow wf, in two batches: their summaries, then their run items.
func (o *Runs) iterationStates(ctx context.Context, wf string, insts []int64) (map[int64]*engine.Instance, error) {
	sums, err := o.store.Instances.GetInstances(ctx, wf, insts)
	if err != nil {
		return nil, err
	}
	keys := make([]store.RunKey, 0, len(sums))
	for _, n := range insts {
		if rec, ok := sums[n]; ok {
			keys = append(keys, store.RunKey{WorkflowID: wf, InstanceID: n, RunID: rec.RunID})
		}
	}
	runs, err := o.store.Runs.GetRuns(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*engine.Instance, len(runs))
	for k, rec := range runs {
		st, err := decodeState(rec)
		if err != nil {
			return nil, err
		}
		out[k.InstanceID] = st
	}
	return out, nil
}

// flatRoot loads what a flatten view of step of run run of instance inst
// of wf starts from: the run's state and the loops around the step.
func (o *Runs) flatRoot(ctx context.Context, wf string, inst, run int64, step string) (*engine.Instance, flatLoop, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, flatLoop{}, err
	}
	if run > rec.RunID {
		return nil, flatLoop{}, NotFound("workflow %s instance %d has no run %d", wf, inst, run)
	}
	_, decoded, err := o.loadRun(ctx, wf, inst, run)
	if err != nil {
		return nil, flatLoop{}, err
	}
	st := *decoded
	_, def, err := o.graph(ctx, wf, st.WorkflowVersion)
	if err != nil {
		return nil, flatLoop{}, Internal(err)
	}
	loops := findLoops(def.Workflow.Steps, step)
	if loops == nil {
		return nil, flatLoop{}, NotFound("workflow %s has no step %s inside a foreach step", wf, step)
	}
	var fl flatLoop
	for _, l := range loops {
		fl.loops = append(fl.loops, l.ID)
		if d := l.Params.Defs[engine.LoopParamsName]; d != nil {
			for _, k := range d.Keys {
				if !slices.Contains(fl.loopNames, k) {
					fl.loopNames = append(fl.loopNames, k)
				}
			}
		}
	}
	return &st, fl, nil
}

// FlattenIterations returns a page of the iterations of step, a step inside
// foreach loops of run run of instance inst of wf (Maestro's GET
// /api/v3/views/flatten/workflows/{wf}/instances/{i}/runs/{r}/steps/{s}).
func (o *Runs) FlattenIterations(ctx context.Context, wf string, inst, run int64, step string, q FlattenQuery) (*StepIterationPage, error) {
	if (q.First > 0) == (q.Last > 0) {
		return nil, Invalid("invalid page", "first, last: exactly one of them is required")
	}
	size := max(q.First, q.Last)
	if size > MaxFlattenPage {
		return nil, Invalid("invalid page", fmt.Sprintf("first, last: must be from 1 to %d", MaxFlattenPage))
	}
	var from []int64
	if q.Cursor != "" {
		raw, err := base64.URLEncoding.DecodeString(q.Cursor)
		if err == nil {
			from, err = decodeRank(string(raw))
		}
		if err != nil {
			return nil, Invalid("invalid cursor", "cursor: must be a cursor of an earlier page")
		}
	}
	st, fl, err := o.flatRoot(ctx, wf, inst, run, step)
	if err != nil {
		return nil, err
	}
	if len(from) > 0 && len(from) != len(fl.loops) {
		return nil, Invalid("invalid cursor", "cursor: not a cursor of this step's iterations")
	}
	statuses := map[string]bool{}
	for _, s := range q.Statuses {
		statuses[strings.ToUpper(strings.TrimSpace(s))] = true
	}
	w := &flatWalk{o: o, rootWF: wf, inst: inst, run: run, step: step, loop: fl, reverse: q.Last > 0, limit: FlattenScanLimit}
	var got []StepIteration
	more := false
	_, err = w.walk(ctx, level{st: st}, 0, from, func(it StepIteration) bool {
		if len(statuses) > 0 && !statuses[it.StepRuntimeState.Status] {
			return true
		}
		for k, v := range q.LoopParams {
			if it.LoopParams[k] != v {
				return true
			}
		}
		if len(got) == size {
			more = true
			return false
		}
		got = append(got, it)
		return true
	})
	if err != nil {
		return nil, Internal(err)
	}
	if w.reverse {
		slices.Reverse(got)
	}
	page := &StepIterationPage{TotalCount: len(got), Elements: got}
	if page.Elements == nil {
		page.Elements = []StepIteration{}
	}
	cursor := func(rank string) string { return base64.URLEncoding.EncodeToString([]byte(rank)) }
	if len(got) > 0 {
		page.PageInfo.StartCursor, page.PageInfo.EndCursor = cursor(got[0].IterationRank), cursor(got[len(got)-1].IterationRank)
	}
	ahead := more || w.cut // there may be more in the walk's direction
	if w.cut {
		// Cut short by the scan limit: go on from where the walk stopped.
		if w.reverse {
			page.PageInfo.StartCursor = cursor(w.last)
		} else {
			page.PageInfo.EndCursor = cursor(w.last)
		}
	}
	if w.reverse {
		page.PageInfo.HasPreviousPage, page.PageInfo.HasNextPage = ahead, q.Cursor != ""
	} else {
		page.PageInfo.HasNextPage, page.PageInfo.HasPreviousPage = ahead, q.Cursor != ""
	}
	return page, nil
}

// FlattenIteration returns one iteration of step: iterationID is the path
// of iteration ids, outermost first, joined by "-" ("344-3-23").
func (o *Runs) FlattenIteration(ctx context.Context, wf string, inst, run int64, step, iterationID string) (*StepIteration, error) {
	var path []int64
	for _, p := range strings.Split(iterationID, "-") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 1 {
			return nil, Invalid("invalid iteration id", "iterationId: must be iteration ids (positive integers) joined by '-'")
		}
		path = append(path, n)
	}
	st, fl, err := o.flatRoot(ctx, wf, inst, run, step)
	if err != nil {
		return nil, err
	}
	notFound := NotFound("step iteration not found for workflow %s instance %d run %d step %s iteration %s", wf, inst, run, step, iterationID)
	if len(path) != len(fl.loops) {
		return nil, notFound
	}
	// Down the path, one iteration read per level.
	w := &flatWalk{rootWF: wf, inst: inst, run: run, step: step, loop: fl}
	var seq []string
	for d, n := range path {
		ss := st.Step(fl.loops[d])
		if ss == nil || ss.Loop == nil || ss.Loop.WorkflowID == "" {
			return nil, notFound
		}
		seq = append(seq, encodeRankPart(st.RunID), encodeRankPart(ss.Attempt))
		states, err := o.iterationStates(ctx, ss.Loop.WorkflowID, []int64{n})
		if err != nil {
			return nil, Internal(err)
		}
		if st = states[n]; st == nil {
			return nil, notFound
		}
	}
	it, ok := w.iteration(st, path, seq)
	if !ok {
		return nil, notFound
	}
	return &it, nil
}

// FlattenSummary sums the iterations of step up (Maestro's .../summary).
func (o *Runs) FlattenSummary(ctx context.Context, wf string, inst, run int64, step string, q SummaryQuery) (*StepIterationsSummary, error) {
	if q.ValueCount < 0 {
		return nil, Invalid("invalid summary", "valueCount: must not be negative")
	}
	st, fl, err := o.flatRoot(ctx, wf, inst, run, step)
	if err != nil {
		return nil, err
	}
	out := &StepIterationsSummary{}
	if q.StatusCount || q.Representative {
		w := &flatWalk{o: o, rootWF: wf, inst: inst, run: run, step: step, loop: fl, limit: SummaryScanLimit}
		counts := map[string]int64{}
		var rep *StepIteration
		best := int64(math.MinInt64)
		if _, err := w.walk(ctx, level{st: st}, 0, nil, func(it StepIteration) bool {
			counts[it.StepRuntimeState.Status]++
			if p := statusPriority(it.StepRuntimeState.Status); p > best {
				best, rep = p, &it
			}
			return true
		}); err != nil {
			return nil, Internal(err)
		}
		if w.cut {
			return nil, Invalid("too many iterations to sum up",
				fmt.Sprintf("statusCount, representative: read at most %d iterations; ask for loop param values only, or page through the iterations", SummaryScanLimit))
		}
		if q.StatusCount {
			out.CountByStatus = counts
		}
		if q.Representative {
			out.RepresentativeIteration = rep
		}
	}
	if q.ValueCount > 0 {
		w := &flatWalk{o: o, rootWF: wf, inst: inst, run: run, step: step, loop: fl, limit: summarySample}
		seen := map[string]map[string]bool{}
		values := map[string][]string{}
		if _, err := w.walk(ctx, level{st: st}, 0, nil, func(it StepIteration) bool {
			for k, v := range it.LoopParams {
				if seen[k] == nil {
					seen[k] = map[string]bool{}
					values[k] = []string{}
				}
				if !seen[k][v] && len(values[k]) < q.ValueCount {
					values[k] = append(values[k], v)
				}
				seen[k][v] = true
			}
			return true
		}); err != nil {
			return nil, Internal(err)
		}
		out.LoopParamValues = values
	}
	return out, nil
}

// statusPriority is Maestro's priority of a step status in a summary (its
// StepInstanceStatusEncoder): the higher, the more a user needs to see it.
func statusPriority(s string) int64 {
	switch model.StepStatus(s) {
	case model.StepSucceeded:
		return 10
	case model.StepUnsatisfied:
		return 20
	case model.StepNotCreated:
		return 30
	case model.StepDisabled:
		return 40
	case model.StepSkipped:
		return 50
	case model.StepFinishing:
		return 60
	case model.StepStarting:
		return 70
	case model.StepInitialized:
		return 80
	case model.StepCreated:
		return 90
	case model.StepCompletedWithError:
		return 100
	case model.StepStopped:
		return 110
	case model.StepRunning:
		return 120
	case model.StepWaitingForPermits:
		return 130
	case model.StepEvaluatingParams:
		return 140
	case model.StepWaitingForSignals:
		return 150
	case model.StepTimedOut:
		return 160
	case model.StepInternallyFailed:
		return 170
	case model.StepFatallyFailed:
		return 180
	case model.StepPlatformFailed:
		return 190
	case model.StepUserFailed:
		return 200
	case model.StepTimeoutFailed:
		return 201
	case model.StepPaused:
		return 210
	}
	return 0
}

// encodeRankPart writes n with its number of digits first: 1-9 as a digit,
// 10 and more as 'A' onwards (Maestro's ForeachFlatteningHelper), so that
// the encoded ids sort as the numbers do.
func encodeRankPart(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) < 10 {
		return string(rune('0'+len(s))) + s
	}
	return string(rune('A'+len(s)-10)) + s
}

// encodeRank encodes an iteration path.
func encodeRank(path []int64) string {
	parts := make([]string, len(path))
	for i, n := range path {
		parts[i] = encodeRankPart(n)
	}
	return strings.Join(parts, "-")
}

// decodeRank reads an encoded iteration path back.
func decodeRank(rank string) ([]int64, error) {
	var out []int64
	for _, p := range strings.Split(rank, "-") {
		if len(p) < 2 {
			return nil, fmt.Errorf("bad rank part %q", p)
		}
		n, err := strconv.ParseInt(p[1:], 10, 64)
		if err != nil || n < 1 || encodeRankPart(n) != p {
			return nil, fmt.Errorf("bad rank part %q", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// loopValueString writes a loop param's value as Maestro's views do (its
// Java toString): whole doubles keep a ".0".
func loopValueString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}
