package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
)

// A foreach step runs its inline steps once per iteration, each iteration as
// a run of its own (a child run): the engine of the parent run only counts
// them. Launching one is a StartChild command, which the store turns into
// the child's items in the parent's commit; a child that ends puts a
// ChildEnded event into the parent's inbox in its own terminal commit. The
// parent's state holds the loop's counters and the indices of the
// iterations in flight (at most the loop's concurrency), never one entry
// per iteration.

// Loop limits.
const (
	// MaxIterations bounds the iterations of one foreach step (the
	// cartesian product of its loop params).
	MaxIterations = 1_000_000
	// LoopParamsName is the foreach step param holding the loop params.
	LoopParamsName = "loop_params"
	// LoopIndexName is the param that gives an iteration its 0-based index.
	LoopIndexName = "loop_index"
)

// ParentRef points a child run at the step attempt that started it.
type ParentRef struct {
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	RunID      int64  `json:"workflow_run_id"`
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
	// Index is the child's 0-based iteration index.
	Index int64 `json:"index"`
	// Depth is how deep the child is below the root run (1 for an
	// iteration of a root run's foreach).
	Depth int `json:"depth"`
	// RootWorkflowID and RootInstanceID name the run at the top of the tree.
	RootWorkflowID string `json:"root_workflow_id"`
	RootInstanceID int64  `json:"root_workflow_instance_id"`
	// Feedback, on an iteration of a while step, names the loop params
	// whose values the iteration reports back when it succeeds
	// (Instance.Feedback).
	Feedback []string `json:"feedback,omitempty"`
	// Owner, on an iteration, is the workflow whose definition holds the
	// iteration's steps (the nearest ancestor that is not an iteration):
	// its breakpoints on those steps apply in every iteration.
	Owner string `json:"owner,omitempty"`
	// Subworkflow is set on an instance a subworkflow step started: a
	// real instance of its workflow, to which the workflow's run strategy
	// applies; Async when that step does not follow it (sync false), so
	// it reports no end.
	Subworkflow bool `json:"subworkflow,omitempty"`
	Async       bool `json:"async,omitempty"`
	// Deadline, on an iteration, is its parent run's deadline
	// (Instance.TimeoutAt, unix ms) when the iteration was started: the
	// parent's workflow timeout ends its loop steps, which stop their
	// iterations, so an iteration whose own deadline is not earlier arms
	// no timer of its own (OwnWorkflowTimer).
	Deadline int64 `json:"deadline,omitempty"`
}

// LoopState is the state of a foreach step attempt's iterations.
type LoopState struct {
	// WorkflowID is the inline workflow whose instance n is iteration n-1.
	WorkflowID string `json:"workflow_id"`
	// Total is the number of iterations; Next the index of the next one to
	// launch.
	Total int64 `json:"total"`
	Next  int64 `json:"next"`
	// Concurrency bounds the iterations in flight.
	Concurrency int64 `json:"concurrency"`
	// Running holds the indices of the iterations in flight, ascending.
	Running []int64 `json:"running,omitempty"`
	// Counts holds the ended iterations by workflow status.
	Counts map[model.WorkflowStatus]int64 `json:"counts,omitempty"`
	// Stopping is set once no more iterations are launched: one failed
	// (FAIL_AFTER_RUNNING, IGNORE_FAILURE) and the step ends when the
	// running ones have.
	Stopping bool `json:"stopping,omitempty"`
	// While is set on a while step's loop: Total is unused, iterations run
	// one at a time while the condition holds, and Vars holds the loop
	// params' current values.
	While bool   `json:"while,omitempty"`
	Vars  Values `json:"vars,omitempty"`
	// Rollup sums the rollups the ended iterations reported.
	Rollup *Rollup `json:"rollup,omitempty"`
	// Failed holds, ascending, the indices of the iterations that ended
	// other than SUCCEEDED (stopped ones included), so that a restart from
	// incomplete runs only those again; at most MaxFailedKept, past which
	// FailedOverflow is set and a restart runs the whole loop again.
	Failed         []int64 `json:"failed,omitempty"`
	FailedOverflow bool    `json:"failed_overflow,omitempty"`
	// Pending holds, ascending, the indices of a restarted loop's
	// iterations still to run again (RestartChild, with PendingPolicy),
	// launched before Next..Total.
	Pending       []int64 `json:"pending,omitempty"`
	PendingPolicy string  `json:"pending_policy,omitempty"`
	// PendingInner is how the one pending iteration restarts when it is
	// restarted by itself inside it (LoopRedo.Inner).
	PendingInner *InnerRestart `json:"pending_inner,omitempty"`
	// Items, on a loop fed by items_from, is where its items come from and
	// how far they have been read.
	Items *LoopItems `json:"items,omitempty"`
}

// MaxFailedKept bounds LoopState.Failed.
const MaxFailedKept = 1_000

// noteFailed records that iteration idx did not succeed.
func (l *LoopState) noteFailed(idx int64) {
	if l.FailedOverflow {
		return
	}
	k, found := slices.BinarySearch(l.Failed, idx)
	if found {
		return
	}
	if len(l.Failed) >= MaxFailedKept {
		l.Failed, l.FailedOverflow = nil, true
		return
	}
	l.Failed = slices.Insert(l.Failed, k, idx)
}

// LoopRedo is what a foreach step restarted from incomplete keeps of its
// previous attempt's loop (RestartState): its inline workflow, whose
// iterations that did not succeed (Indices, of the first Ran launched)
// run again as new runs of the same instances, and the ones never
// launched run for the first time; the succeeded ones are not run again.
type LoopRedo struct {
	WorkflowID string  `json:"workflow_id"`
	Total      int64   `json:"total"`
	Ran        int64   `json:"ran"`
	Indices    []int64 `json:"indices,omitempty"`
	// Kept, when set, counts by status the launched iterations that do
	// not run again, and KeptFailed lists those of them that did not
	// succeed (a restart of one iteration keeps the others as they
	// ended); unset, they all succeeded.
	Kept       map[model.WorkflowStatus]int64 `json:"kept,omitempty"`
	KeptFailed []int64                        `json:"kept_failed,omitempty"`
	// Policy is how the iterations in Indices restart: from incomplete
	// (empty) or from the beginning.
	Policy string `json:"policy,omitempty"`
	// While is set for a while loop, which goes on from where it stopped
	// (Maestro's while restart): its last iteration, if it did not
	// succeed, runs again (Indices), with the loop params' values Vars.
	While bool   `json:"while,omitempty"`
	Vars  Values `json:"vars,omitempty"`
	// Inner, set with one index in Indices, restarts that iteration as a
	// restart of one iteration of a loop of its own (a nested loop's
	// iteration restarted by itself).
	Inner *InnerRestart `json:"inner,omitempty"`
}

// InnerRestart names one iteration of a loop inside an iteration run: the
// run restarts with only it run again (RestartIteration), and so on down
// through Inner.
type InnerRestart struct {
	StepID string               `json:"step_id"`
	Index  int64                `json:"index"`
	Was    model.WorkflowStatus `json:"was"`
	Policy string               `json:"policy,omitempty"`
	Inner  *InnerRestart        `json:"inner,omitempty"`
	// Step, set alone, ends the chain: the iteration run restarts from
	// that step (RestartStepRun), a step restart inside it.
	Step *StepRestart `json:"step,omitempty"`
}

func (l *LoopState) clone() *LoopState {
	if l == nil {
		return nil
	}
	c := *l
	c.Running = slices.Clone(l.Running)
	c.Vars = l.Vars.Clone()
	c.Rollup = l.Rollup.clone()
	c.Failed = slices.Clone(l.Failed)
	c.Pending = slices.Clone(l.Pending)
	c.Items = l.Items.clone()
	if l.Counts != nil {
		c.Counts = make(map[model.WorkflowStatus]int64, len(l.Counts))
		for k, v := range l.Counts {
			c.Counts[k] = v
		}
	}
	return &c
}

// KindChildEnded is the kind of a ChildEnded event.
const KindChildEnded EventKind = "child_ended"

// ChildEnded reports that a child run (an iteration) reached a terminal
// status.
type ChildEnded struct {
	StepID  string               `json:"step_id"`
	Attempt int64                `json:"step_attempt_id"`
	Index   int64                `json:"index"`
	Status  model.WorkflowStatus `json:"status"`
	Message string               `json:"message,omitempty"`
	// Feedback is what a succeeded while iteration reports for its loop
	// params (Instance.Feedback).
	Feedback Values `json:"feedback,omitempty"`
	// Child names the reporting instance when a subworkflow step started
	// it: its end may arrive before its start report (ChildStarted).
	Child *ChildRef `json:"child,omitempty"`
	// Rollup is the child's rollup at its end (see Rollup).
	Rollup *Rollup `json:"rollup,omitempty"`
	// Cost is the child's cost at its end (Instance.Cost: its tree's),
	// added to the parent's.
	Cost pricing.Usage `json:"cost,omitempty"`
}

// Kind returns KindChildEnded.
func (ChildEnded) Kind() EventKind { return KindChildEnded }

func (ChildEnded) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e ChildEnded) MarshalJSON() ([]byte, error) {
	type plain ChildEnded
	return withKind(e.Kind(), plain(e))
}

// Command kinds of loops.
const (
	KindCreateLoop CommandKind = "create_loop"
	KindStartChild CommandKind = "start_child"
	KindStopChild  CommandKind = "stop_child"
)

// CreateLoop asks the store to record the inline workflow of a foreach or
// while step attempt (its definition: the step's inline steps) before its
// first iteration starts. Params are the first iteration's params: the
// inline definition declares each with its type.
type CreateLoop struct {
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
	WorkflowID string `json:"workflow_id"`
	// While is set for a while step's loop.
	While  bool   `json:"while,omitempty"`
	Params Values `json:"params,omitempty"`
}

// StartChild asks for iteration Index of a foreach or while step attempt
// to be created and started: instance Index+1 of the inline workflow
// WorkflowID, with Params as its run params.
type StartChild struct {
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
	WorkflowID string `json:"workflow_id"`
	Index      int64  `json:"index"`
	// Initiator is the child's initiator type: FOREACH (when empty) or
	// WHILE.
	Initiator string    `json:"initiator,omitempty"`
	Params    Values    `json:"params,omitempty"`
	Parent    ParentRef `json:"parent"`
}

// KindRestartChild is the kind of a RestartChild command.
const KindRestartChild CommandKind = "restart_child"

// RestartChild asks for iteration Index of a restarted foreach step
// attempt to run again: a new run of instance Index+1 of the inline
// workflow WorkflowID, restarted from incomplete (its succeeded steps
// carried over), with Params as its run params and Parent as its parent.
type RestartChild struct {
	StepID     string    `json:"step_id"`
	Attempt    int64     `json:"step_attempt_id"`
	WorkflowID string    `json:"workflow_id"`
	Index      int64     `json:"index"`
	Params     Values    `json:"params,omitempty"`
	Parent     ParentRef `json:"parent"`
	// Policy is RestartFromIncomplete (when empty) or RestartFromBeginning.
	Policy string `json:"policy,omitempty"`
	// Inner, when set, restarts the child as a restart of one iteration of
	// a loop of its own (RestartIteration) instead of by Policy.
	Inner *InnerRestart `json:"inner,omitempty"`
}

// Kind returns KindRestartChild.
func (RestartChild) Kind() CommandKind { return KindRestartChild }

func (RestartChild) isCommand() {}

// MarshalJSON writes the command with its "kind".
func (c RestartChild) MarshalJSON() ([]byte, error) {
	type plain RestartChild
	return withKind(c.Kind(), plain(c))
}

// StopChild asks a child run to end: Action is STOP or KILL.
type StopChild struct {
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	Action     string `json:"action"`
	Reason     string `json:"reason,omitempty"`
}

// Kind returns KindCreateLoop.
func (CreateLoop) Kind() CommandKind { return KindCreateLoop }

// Kind returns KindStartChild.
func (StartChild) Kind() CommandKind { return KindStartChild }

// Kind returns KindStopChild.
func (StopChild) Kind() CommandKind { return KindStopChild }

func (CreateLoop) isCommand() {}
func (StartChild) isCommand() {}
func (StopChild) isCommand()  {}

// InlineWorkflowID is the id of the inline workflow of a foreach step
// attempt of a run: the same for the same attempt, different for any other.
func InlineWorkflowID(st *Instance, stepID string, attempt int64) string {
	return inlineWorkflowID(model.InlineForeachPrefix, st, stepID, attempt)
}

func inlineWorkflowID(prefix string, st *Instance, stepID string, attempt int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s\x00%d\x00%s", st.WorkflowID, st.InstanceID, st.RunID, stepID, attempt, st.UUID)))
	return prefix + hex.EncodeToString(sum[:12])
}

func isForeach(s *model.Step) bool { return s.Kind == model.KindForeach }

// loopArrays returns the loop params of foreach step i in definition order,
// each an array value, and the number of iterations (their product).
func (d *decider) loopArrays(i int) (names []string, arrays []any, total int64, err error) {
	s := &d.st.Steps[i]
	step := d.g.nodes[i].step
	raw, ok := s.Params[LoopParamsName]
	if !ok && s.LoopParamsOffloaded {
		if raw, ok, err = d.offloadedLoopParams(i); err != nil {
			return nil, nil, 0, err
		}
	}
	if !ok {
		return nil, nil, 0, fmt.Errorf("foreach step has no %s", LoopParamsName)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, 0, fmt.Errorf("%s is %T, want a MAP", LoopParamsName, raw)
	}
	var order []string
	if def := step.Params.Defs[LoopParamsName]; def != nil {
		order = def.Keys
	}
	names = model.MapKeys(order, m)
	total = 1
	for _, n := range names {
		v := m[n]
		l, ok := arrayLen(v)
		if !ok {
			t, _ := TypeOf(v)
			return nil, nil, 0, fmt.Errorf("loop param %q is %s, want an array (STRING_ARRAY, LONG_ARRAY, DOUBLE_ARRAY or BOOLEAN_ARRAY)", n, orDefault(string(t), fmt.Sprintf("%T", v)))
		}
		arrays = append(arrays, v)
		if l == 0 {
			total = 0
			continue
		}
		if total > 0 && total > math.MaxInt64/int64(l) {
			return nil, nil, 0, fmt.Errorf("the loop params' cartesian product exceeds the limit of %d iterations", MaxIterations)
		}
		total *= int64(l)
	}
	if total > MaxIterations {
		return nil, nil, 0, fmt.Errorf("the loop params' cartesian product has %d iterations, more than the limit of %d", total, MaxIterations)
	}
	return names, arrays, total, nil
}

// LoopParamsReader reads the evaluated loop_params of a running foreach step
// attempt that the state no longer holds (StepState.LoopParamsOffloaded).
// The StepParams reader given with WithStepParams provides it by
// implementing this interface too.
type LoopParamsReader interface {
	LoopParams(ctx context.Context, stepID string, attempt, run int64) (map[string]any, error)
}

// offloadedLoopParams reads the loop_params of running foreach step i (see
// LoopParamsReader). A read that fails fails the decision (its error, never
// the step's).
func (d *decider) offloadedLoopParams(i int) (any, bool, error) {
	s := &d.st.Steps[i]
	run := s.ItemRun(d.st.RunID)
	r, ok := d.paramsReader.(LoopParamsReader)
	var lp map[string]any
	var err error
	if !ok {
		err = fmt.Errorf("the loop params of step %q are not in the run's state and no reader was given", s.StepID)
	} else if lp, err = r.LoopParams(d.ctx, s.StepID, s.Attempt, run); err != nil {
		err = fmt.Errorf("read the loop params of step %q attempt %d: %w", s.StepID, s.Attempt, err)
	}
	if err != nil {
		if d.loadErr == nil {
			d.loadErr = err
		}
		return nil, false, err
	}
	return lp, lp != nil, nil
}

// arrayLen returns the length of a loop param's value, false when it is not
// an array.
func arrayLen(v any) (int, bool) {
	switch a := v.(type) {
	case []string:
		return len(a), true
	case []int64:
		return len(a), true
	case []float64:
		return len(a), true
	case []bool:
		return len(a), true
	}
	return 0, false
}

// passedDown returns the params step i passes to a child run: the
// workflow params (with withWorkflow; the child's identity and how it was
// started aside, see model.ChildOwnParam), then the step's own params.
func (d *decider) passedDown(i int, withWorkflow bool) Values {
	s := &d.st.Steps[i]
	out := Values{}
	if withWorkflow {
		for k, v := range d.st.Params {
			if !model.ChildOwnParam(k) {
				out[k] = v
			}
		}
	}
	for _, k := range d.g.nodes[i].step.Params.Names {
		if v, ok := s.Params[k]; ok && !model.ChildOwnParam(k) {
			out[k] = v
		}
	}
	return out
}

// iterationParams returns the run params of iteration idx of foreach step
// i: the parent's workflow params, the step's own params, loop_index and
// one value of each loop param (the first one varying fastest, as in
// Maestro).
func (d *decider) iterationParams(i int, names []string, arrays []any, idx int64) Values {
	out := d.passedDown(i, true)
	out[LoopIndexName] = idx
	rest := idx
	for j, n := range names {
		switch a := arrays[j].(type) {
		case []string:
			out[n], rest = a[rest%int64(len(a))], rest/int64(len(a))
		case []int64:
			out[n], rest = a[rest%int64(len(a))], rest/int64(len(a))
		case []float64:
			out[n], rest = a[rest%int64(len(a))], rest/int64(len(a))
		case []bool:
			out[n], rest = a[rest%int64(len(a))], rest/int64(len(a))
		}
	}
	return out
}

// loopConcurrency is how many iterations of foreach step i may run at once:
// its concurrency, at most the workflow's instance_step_concurrency
// (default 100), as Maestro computes it.
func (d *decider) loopConcurrency(i int) int64 {
	limit := int64(model.DefaultInstanceStepConcurrency)
	if c := d.g.workflow.InstanceStepConcurrency; c != nil && *c > 0 {
		limit = *c
	}
	if c := d.g.nodes[i].step.Concurrency; c != nil && *c > 0 {
		limit = min(limit, *c)
	}
	return max(limit, 1)
}

// startLoop begins foreach step i, which has just reached RUNNING.
func (d *decider) startLoop(i int) {
	s := &d.st.Steps[i]
	if d.st.Parent != nil && d.st.Parent.Depth >= model.WorkflowDepthLimit {
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("foreach: nesting deeper than the limit of %d levels", model.WorkflowDepthLimit))
		return
	}
	src, err := d.startSource(i)
	if err != nil {
		if d.loadErr == nil {
			d.fail(i, model.StepFatallyFailed, "foreach: "+err.Error())
		}
		return
	}
	total := src.total
	if total == 0 {
		s.Loop = &LoopState{Counts: map[model.WorkflowStatus]int64{}}
		d.succeed(i, "foreach: no iterations ("+src.none()+")")
		return
	}
	if k := bodyLeaves(d.g.nodes[i].step.Steps); k > 0 && total > model.TotalLeafStepCountLimit/k {
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("foreach: %d iterations of %d leaf steps each is more than the limit of %d leaf steps in an instance tree",
			total, k, model.TotalLeafStepCountLimit))
		return
	}
	if r := s.Redo; r != nil && r.Total == total {
		// Restarted from incomplete: the same iterations, the succeeded
		// ones kept, the others run again.
		s.Loop = &LoopState{
			WorkflowID:    r.WorkflowID,
			Total:         total,
			Next:          r.Ran,
			Concurrency:   d.loopConcurrency(i),
			Counts:        map[model.WorkflowStatus]int64{model.WorkflowSucceeded: r.Ran - int64(len(r.Indices))},
			Pending:       slices.Clone(r.Indices),
			PendingPolicy: r.Policy,
			PendingInner:  r.Inner,
			Items:         src.items,
		}
		if src.items != nil && len(r.Indices) > 0 {
			at := src.items.Object.First
			src.items.PendingAt = &at
		}
		if r.Kept != nil {
			s.Loop.Counts = maps.Clone(r.Kept)
			s.Loop.Failed = slices.Clone(r.KeptFailed)
			if l := s.Loop; l.Counts[model.WorkflowFailed] > 0 {
				// A kept failure stops the launches as it did before
				// (FAIL_AFTER_RUNNING, IGNORE_FAILURE): only the
				// iteration asked for runs again.
				l.Next = l.Total
			}
		}
		s.Redo = nil
		d.launchIterations(i, src)
		if len(s.Loop.Running) == 0 && len(s.Loop.Pending) == 0 && s.Loop.Next == s.Loop.Total {
			d.endLoop(i)
		}
		return
	}
	s.Redo = nil
	s.Loop = &LoopState{
		WorkflowID:  InlineWorkflowID(d.st, s.StepID, s.Attempt),
		Total:       total,
		Concurrency: d.loopConcurrency(i),
		Counts:      map[model.WorkflowStatus]int64{},
		Items:       src.items,
	}
	first, err := src.firstParams(d, i)
	if err != nil {
		if d.loadErr == nil {
			d.fail(i, model.StepFatallyFailed, "foreach: "+err.Error())
		}
		return
	}
	d.out.Commands = append(d.out.Commands, CreateLoop{
		StepID: s.StepID, Attempt: s.Attempt, WorkflowID: s.Loop.WorkflowID,
		Params: first,
	})
	d.launchIterations(i, src)
}

// iterationStarts is what starting one iteration counts against a
// decision's start budget by default (see WithIterationStarts): it writes
// three items (the child's summary, run and start event) where a step start
// writes its attempt and, at times, a permit or a signal wait. Counted as
// one, a budget of 40 starts made 120-item commits that the store refused
// before every round.
const iterationStarts = 2

// iterationCost is what starting one iteration of loop step i counts
// against the decision's start budget.
func (d *decider) iterationCost(i int) int {
	if d.iterationStarts != nil {
		return max(1, d.iterationStarts(d.g.nodes[i].step))
	}
	return iterationStarts
}

// overBudget reports whether one more iteration costing cost would pass the
// decision's start budget. A first one passes unless the budget is strict,
// so that a loop whose iterations each cost more than the budget goes on.
func (d *decider) overBudget(cost int) bool {
	if d.maxStarts <= 0 {
		return false
	}
	if d.strictStarts {
		return d.starts+cost > d.maxStarts
	}
	return d.starts+cost > max(d.maxStarts, cost)
}

// launchIterations starts iterations of foreach step i while it has room
// (its concurrency) and the decision has budget (WithMaxStarts: each
// iteration counts as iterationCost starts): a restart's pending ones first,
// then the next ones. A loop cut short by the budget goes on in the Continue
// decision the run asks for. src is the loop's source when the caller has
// it (nil: found again).
func (d *decider) launchIterations(i int, src *loopSource) {
	s := &d.st.Steps[i]
	l := s.Loop
	if l.Stopping || (l.Next >= l.Total && len(l.Pending) == 0) {
		return
	}
	if src == nil {
		var err error
		if src, err = d.loopSourceOf(i); err != nil {
			if d.loadErr == nil {
				d.fail(i, model.StepFatallyFailed, "foreach: "+err.Error())
			}
			return
		}
	}
	cost := d.iterationCost(i)
	var again, fresh []int64
	for (l.Next+int64(len(fresh)) < l.Total || len(again) < len(l.Pending)) &&
		int64(len(l.Running)+len(again)+len(fresh)) < l.Concurrency {
		if d.overBudget(cost) {
			d.out.Continue = true
			break
		}
		d.starts += cost
		if len(again) < len(l.Pending) {
			again = append(again, l.Pending[len(again)])
		} else {
			fresh = append(fresh, l.Next+int64(len(fresh)))
		}
	}
	if len(again)+len(fresh) == 0 {
		return
	}
	params, err := src.params(d, i, again, fresh)
	if err != nil {
		if d.loadErr == nil {
			d.fail(i, model.StepFatallyFailed, "foreach: "+err.Error())
		}
		return
	}
	l.Pending = l.Pending[len(again):]
	if len(l.Pending) == 0 {
		l.Pending = nil
	}
	l.Next += int64(len(fresh))
	parent := d.childParent(i)
	for k, idx := range append(again, fresh...) {
		at, _ := slices.BinarySearch(l.Running, idx)
		l.Running = slices.Insert(l.Running, at, idx)
		p := parent
		p.Index = idx
		if k < len(again) {
			rc := RestartChild{
				StepID: s.StepID, Attempt: s.Attempt, WorkflowID: l.WorkflowID, Index: idx, Params: params[k], Parent: p,
				Policy: l.PendingPolicy,
			}
			if l.PendingInner != nil {
				rc.Inner, l.PendingInner = l.PendingInner, nil
			}
			d.out.Commands = append(d.out.Commands, rc)
			continue
		}
		d.out.Commands = append(d.out.Commands, StartChild{
			StepID: s.StepID, Attempt: s.Attempt, WorkflowID: l.WorkflowID, Index: idx, Params: params[k], Parent: p,
		})
	}
}

// childParent is what a child run of loop step i points back at (Index
// aside).
func (d *decider) childParent(i int) ParentRef {
	s := &d.st.Steps[i]
	parent := ParentRef{
		WorkflowID: d.st.WorkflowID, InstanceID: d.st.InstanceID, RunID: d.st.RunID,
		StepID: s.StepID, Attempt: s.Attempt, Depth: 1,
		RootWorkflowID: d.st.WorkflowID, RootInstanceID: d.st.InstanceID,
	}
	if p := d.st.Parent; p != nil {
		parent.Depth = p.Depth + 1
		parent.RootWorkflowID, parent.RootInstanceID = p.RootWorkflowID, p.RootInstanceID
	}
	if step := d.g.nodes[i].step; isForeach(step) || isWhile(step) {
		parent.Deadline = d.st.TimeoutAt
		parent.Owner = d.st.WorkflowID
		if p := d.st.Parent; p != nil && !p.Subworkflow && p.Owner != "" {
			parent.Owner = p.Owner
		}
	}
	return parent
}

// resumeLoops launches the iterations a decision cut short by its budget
// (WithMaxStarts) left unlaunched.
func (d *decider) resumeLoops() {
	for i := range d.st.Steps {
		s := &d.st.Steps[i]
		switch {
		case s.Loop == nil || s.Status != model.StepRunning || s.Loop.Stopping:
		case s.Loop.While:
			if len(s.Loop.Running) == 0 {
				d.nextWhile(i)
			}
		case s.Loop.Next < s.Loop.Total || len(s.Loop.Pending) > 0:
			d.launchIterations(i, nil)
		}
	}
}

// childEnded applies an iteration's end to its foreach step.
func (d *decider) childEnded(e ChildEnded) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err // late: the step attempt has ended
	}
	s := &d.st.Steps[i]
	l := s.Loop
	if l == nil {
		if isSubworkflow(d.g.nodes[i].step) {
			return d.subworkflowEnded(i, e)
		}
		return nil
	}
	k, found := slices.BinarySearch(l.Running, e.Index)
	if !found {
		return nil // a duplicate report
	}
	d.startCounting()
	l.Running = slices.Delete(l.Running, k, k+1)
	d.st.Cost = d.st.Cost.Add(e.Cost)
	if e.Rollup != nil {
		if l.Rollup == nil {
			l.Rollup = &Rollup{}
		}
		l.Rollup.add(e.Rollup)
	}
	status := e.Status
	if !status.IsTerminal() {
		status = model.WorkflowFailed
	}
	if l.Counts == nil {
		l.Counts = map[model.WorkflowStatus]int64{}
	}
	l.Counts[status]++
	if status != model.WorkflowSucceeded {
		l.noteFailed(e.Index)
	}
	if err := d.checkLeafLimit(); err != nil || d.st.Status != model.WorkflowInProgress || d.st.Ending != nil {
		return err // the tree grew past its limit: the run is being stopped
	}
	if l.While {
		d.whileChildEnded(i, e, status)
		return d.advance()
	}
	if status == model.WorkflowFailed && !l.Stopping {
		l.Stopping = true
		if d.g.nodes[i].step.FailureMode == model.FailImmediately {
			d.endLoop(i)
			return d.advance()
		}
	}
	if !l.Stopping {
		d.launchIterations(i, nil)
	}
	if len(l.Running) == 0 && (l.Stopping || (l.Next == l.Total && len(l.Pending) == 0)) {
		d.endLoop(i)
	}
	return d.advance()
}

// endLoop ends foreach step i from its iterations' statuses: FAILED, then
// TIMED_OUT, then STOPPED win over SUCCEEDED (Maestro's order).
func (d *decider) endLoop(i int) {
	l := d.st.Steps[i].Loop
	switch {
	case l.Counts[model.WorkflowFailed] > 0:
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("foreach: %d of %d iterations failed", l.Counts[model.WorkflowFailed], l.Total))
	case l.Counts[model.WorkflowTimedOut] > 0:
		d.endStep(i, model.StepTimedOut, fmt.Sprintf("foreach: %d of %d iterations timed out", l.Counts[model.WorkflowTimedOut], l.Total))
	case l.Counts[model.WorkflowStopped] > 0:
		d.endStep(i, model.StepStopped, fmt.Sprintf("foreach: %d of %d iterations were stopped", l.Counts[model.WorkflowStopped], l.Total))
	default:
		d.succeed(i, fmt.Sprintf("foreach: %d iterations succeeded", l.Total))
	}
}

// ChildStops are iterations of a loop step that ended while they ran,
// still to be told to end (see Instance.ChildStops).
type ChildStops struct {
	WorkflowID string  `json:"workflow_id"`
	Action     string  `json:"action"`
	Reason     string  `json:"reason"`
	Indices    []int64 `json:"indices"`
}

// stopChildren queues a stop for every iteration of step i still in
// flight, because the step ends with status to; drainChildStops sends
// them, a bounded number per decision.
func (d *decider) stopChildren(i int, to model.StepStatus) {
	l := d.st.Steps[i].Loop
	if l == nil || len(l.Running) == 0 {
		return
	}
	action := string(model.WorkflowActionKill)
	if to == model.StepStopped {
		action = string(model.WorkflowActionStop)
	}
	d.st.ChildStops = append(d.st.ChildStops, ChildStops{
		WorkflowID: l.WorkflowID, Action: action, Indices: l.Running,
		Reason: fmt.Sprintf("its foreach step %q, which ended %s", d.st.Steps[i].StepID, to),
	})
	// The stopped iterations end without reporting (Action.FromParent):
	// count them as they are told to end, and keep them for a restart.
	told := model.WorkflowFailed // a KILL fails a run
	if action == string(model.WorkflowActionStop) {
		told = model.WorkflowStopped
	}
	if l.Counts == nil {
		l.Counts = map[model.WorkflowStatus]int64{}
	}
	for _, idx := range l.Running {
		l.Counts[told]++
		l.noteFailed(idx)
	}
	l.Running = nil
}

// drainChildStops sends queued child stops while the decision's budget of
// ends (WithMaxEnds) lasts; the rest wait for the Continue decision it
// asks for. It runs after every event, whatever the run's status: a run
// that ended still tells its iterations to end.
func (d *decider) drainChildStops() {
	for len(d.st.ChildStops) > 0 {
		cs := &d.st.ChildStops[0]
		for len(cs.Indices) > 0 {
			if d.maxEnds > 0 && d.ends >= d.maxEnds {
				d.out.Continue = true
				return
			}
			d.ends++
			d.out.Commands = append(d.out.Commands, StopChild{WorkflowID: cs.WorkflowID, InstanceID: cs.Indices[0] + 1, Action: cs.Action, Reason: cs.Reason})
			cs.Indices = cs.Indices[1:]
		}
		d.st.ChildStops = d.st.ChildStops[1:]
	}
	if len(d.st.ChildStops) == 0 {
		d.st.ChildStops = nil
	}
}

// LoopSummary is what a view shows of a foreach or while step's
// iterations. For a while step Total is the iterations started so far and
// LoopParams the loop params' current values.
type LoopSummary struct {
	WorkflowID string                         `json:"foreach_workflow_id,omitempty"`
	WhileID    string                         `json:"while_workflow_id,omitempty"`
	LoopParams Values                         `json:"loop_param_values,omitempty"`
	Total      int64                          `json:"total_loop_count"`
	Launched   int64                          `json:"next_loop_index"`
	Running    int64                          `json:"running_count"`
	Counts     map[model.WorkflowStatus]int64 `json:"status_counts,omitempty"`
	// RunningIterations are the 1-based iteration (instance) ids in flight.
	RunningIterations []int64 `json:"running_iterations,omitempty"`
	// Rollup counts the leaf steps of the ended iterations by status.
	Rollup *Rollup `json:"rollup,omitempty"`
	// ItemsFrom is the S3 object a foreach step's items come from, and
	// ItemsRead how far into it (bytes) its launches have read.
	ItemsFrom string `json:"items_from,omitempty"`
	ItemsRead int64  `json:"items_read_bytes,omitempty"`
}

// Summary returns the view of a loop, nil for nil.
func (l *LoopState) Summary() *LoopSummary {
	if l == nil {
		return nil
	}
	out := &LoopSummary{WorkflowID: l.WorkflowID, Total: l.Total, Launched: l.Next, Running: int64(len(l.Running)), Rollup: l.Rollup.clone()}
	if it := l.Items; it != nil {
		out.ItemsFrom, out.ItemsRead = it.Source.URI, it.At.Offset
	}
	if l.While {
		out.WorkflowID, out.WhileID = "", l.WorkflowID
		out.Total, out.LoopParams = l.Next, l.Vars.Clone()
	}
	if len(l.Counts) > 0 {
		out.Counts = make(map[model.WorkflowStatus]int64, len(l.Counts))
		for k, v := range l.Counts {
			out.Counts[k] = v
		}
	}
	for _, idx := range l.Running {
		out.RunningIterations = append(out.RunningIterations, idx+1)
	}
	return out
}

// MarshalJSON writes the command with its "kind".
func (c CreateLoop) MarshalJSON() ([]byte, error) {
	type plain CreateLoop
	return withKind(c.Kind(), plain(c))
}

// MarshalJSON writes the command with its "kind".
func (c StartChild) MarshalJSON() ([]byte, error) {
	type plain StartChild
	return withKind(c.Kind(), plain(c))
}

// MarshalJSON writes the command with its "kind".
func (c StopChild) MarshalJSON() ([]byte, error) {
	type plain StopChild
	return withKind(c.Kind(), plain(c))
}

// LiteralParams turns evaluated values into param definitions with literal
// values, in name order: how a child run receives its parent's params as
// run params (and how an inline definition declares them).
func LiteralParams(v Values) (model.Params, error) {
	out := model.Params{Defs: make(map[string]*model.ParamDefinition, len(v))}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, n := range names {
		def, err := literalParam(v[n])
		if err != nil {
			return model.Params{}, fmt.Errorf("param %q: %w", n, err)
		}
		out.Names = append(out.Names, n)
		out.Defs[n] = def
	}
	return out, nil
}

func literalParam(x any) (*model.ParamDefinition, error) {
	t, err := TypeOf(x)
	if err != nil {
		return nil, err
	}
	if t != model.TypeMap {
		return &model.ParamDefinition{Type: t, Value: cloneValue(x), HasValue: true}, nil
	}
	m := x.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	defs := make(map[string]*model.ParamDefinition, len(m))
	for _, k := range keys {
		d, err := literalParam(m[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		defs[k] = d
	}
	return &model.ParamDefinition{Type: model.TypeMap, Value: defs, HasValue: true, Keys: keys}, nil
}
