package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Restart policies a user may ask for.
const (
	RestartFromIncomplete = "RESTART_FROM_INCOMPLETE"
	RestartFromBeginning  = "RESTART_FROM_BEGINNING"
)

func runPolicy(st *Instance) string {
	if st.RunPolicy == "" {
		return RunPolicyFreshRun
	}
	return st.RunPolicy
}

// RestartState returns the first state of the run that restarts prev, a run
// that has ended: run id + 1, status CREATED, RUN_POLICY policy. With
// RESTART_FROM_INCOMPLETE the steps that finished (SUCCEEDED, SKIPPED,
// COMPLETED_WITH_ERROR) are carried over as they are — they are not run
// again and their params stay visible to the steps after them — and every
// other step starts afresh; RESTART_FROM_BEGINNING starts every step
// afresh. Feed the result a StartRun event to start it.
func RestartState(prev *Instance, policy string, now time.Time) (*Instance, error) {
	if !prev.Status.IsTerminal() {
		return nil, fmt.Errorf("restart: run %d is %s, not ended", prev.RunID, prev.Status)
	}
	switch policy {
	case "", RestartFromIncomplete:
		policy = RestartFromIncomplete
	case RestartFromBeginning:
	default:
		return nil, fmt.Errorf("restart: unknown restart policy %q (want %s or %s)", policy, RestartFromIncomplete, RestartFromBeginning)
	}
	next := prev.Clone()
	next.Compact = false // the new run is decided and stored as any
	next.RunID = prev.RunID + 1
	next.Status = model.WorkflowCreated
	next.Seq = prev.Seq + 1 // the new run's creation is a status change of the instance
	next.RunPolicy = policy
	next.Message = ""
	next.Cost = nil // a run's cost is its own (carried-over steps keep their attempts' cost)
	next.CreateTime, next.StartTime, next.EndTime = now.UnixMilli(), 0, 0
	if policy == RestartFromBeginning {
		next.Steps = nil
		return next, nil
	}
	for i := range next.Steps {
		s := &next.Steps[i]
		switch s.Status {
		case model.StepSucceeded, model.StepSkipped, model.StepCompletedWithError:
			if s.FromRun == 0 {
				s.FromRun = prev.RunID
			}
		default:
			next.Steps[i] = StepState{StepID: s.StepID, Status: model.StepNotCreated, Redo: redoOf(s.Loop), RedoChild: redoChildOf(s)}
		}
	}
	return next, nil
}

// redoOf is what a foreach step restarted from incomplete keeps of its
// previous attempt's loop l: nil (run the loop afresh) for no loop, a
// while loop, or one that lost track of its failed iterations.
func redoOf(l *LoopState) *LoopRedo {
	if l == nil || l.WorkflowID == "" || l.FailedOverflow {
		return nil
	}
	if l.While {
		return whileRedoOf(l)
	}
	return &LoopRedo{WorkflowID: l.WorkflowID, Total: l.Total, Ran: l.Next, Indices: slices.Clone(l.Failed)}
}

// whileRedoOf is what a while step restarted from incomplete keeps: the
// iterations that succeeded and the loop params' values after them; its
// last iteration, which did not succeed (it failed, timed out or was
// stopped with the step), runs again with those values.
func whileRedoOf(l *LoopState) *LoopRedo {
	r := &LoopRedo{WorkflowID: l.WorkflowID, Ran: l.Next, While: true, Vars: l.Vars.Clone(), Kept: maps.Clone(l.Counts)}
	if r.Kept == nil {
		r.Kept = map[model.WorkflowStatus]int64{}
	}
	last := l.Next - 1
	if last < 0 || !slices.Contains(l.Failed, last) {
		return r // the condition is evaluated again
	}
	r.Indices = []int64{last}
	for _, st := range []model.WorkflowStatus{model.WorkflowFailed, model.WorkflowTimedOut, model.WorkflowStopped} {
		if r.Kept[st] > 0 {
			r.Kept[st]--
			break
		}
	}
	return r
}

// RunPolicyRestartFromSpecific is the RUN_POLICY of a run that restarts
// from one step.
const RunPolicyRestartFromSpecific = "RESTART_FROM_SPECIFIC"

// RestartFromStep returns the first state of the run that restarts prev, a
// run that has ended, from step stepID: that step and every step downstream
// of it start afresh even if they finished; the rest is restarted from
// incomplete (finished steps carried over, the others afresh).
func RestartFromStep(g *Graph, prev *Instance, stepID string, now time.Time) (*Instance, error) {
	i, ok := g.index[stepID]
	if !ok {
		return nil, fmt.Errorf("restart: unknown step %q", stepID)
	}
	next, err := RestartState(prev, RestartFromIncomplete, now)
	if err != nil {
		return nil, err
	}
	next.RunPolicy = RunPolicyRestartFromSpecific
	if len(next.Steps) != len(g.nodes) {
		return nil, fmt.Errorf("restart: run %d has %d steps, the definition %d", prev.RunID, len(next.Steps), len(g.nodes))
	}
	for _, j := range g.downstream(i) {
		next.Steps[j] = StepState{StepID: next.Steps[j].StepID, Status: model.StepNotCreated}
	}
	return next, nil
}

// downstream returns step i and every step reachable from it, in
// breadth-first order.
func (g *Graph) downstream(i int) []int {
	seen := map[int]bool{i: true}
	out := []int{i}
	for head := 0; head < len(out); head++ {
		for _, k := range g.nodes[out[head]].succs {
			if j := g.edges[k].to; !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	return out
}

// CheckStepRestart reports whether step stepID of a run in progress can be
// restarted: it has ended for good, and no step downstream of it is in
// flight (those would run twice).
func CheckStepRestart(g *Graph, st *Instance, stepID string) error {
	i, ok := g.index[stepID]
	if !ok {
		return fmt.Errorf("unknown step %q", stepID)
	}
	if len(st.Steps) != len(g.nodes) {
		return fmt.Errorf("state has %d steps, the definition %d", len(st.Steps), len(g.nodes))
	}
	for _, j := range g.downstream(i)[1:] {
		s := &st.Steps[j]
		if s.Status != model.StepNotCreated && s.Status != "" && !s.settled() {
			return &ActionError{Action: string(model.StepActionRestart), StepID: stepID, Status: string(st.Steps[i].Status),
				Reason: fmt.Sprintf("step %q downstream of it is %s", s.StepID, s.Status), err: ErrActionNotAllowed}
		}
	}
	return nil
}

// restartStep applies a RESTART action to a step of a run in progress: the
// step starts a new attempt (with what r asks of it), and the steps
// downstream of it that have ended are reset to run again (each with a new
// attempt id if it ran).
func (d *decider) restartStep(i int, r *StepRestart) error {
	if err := CheckStepRestart(d.g, d.st, d.st.Steps[i].StepID); err != nil {
		return nil // the run moved on since the API checked: nothing to do
	}
	down := d.g.downstream(i)
	for _, j := range down {
		s := &d.st.Steps[j]
		if s.Status == model.StepNotCreated || s.Status == "" {
			continue
		}
		attempt := s.Attempt
		if j == i || !neverRan(s) {
			attempt++
		}
		*s = StepState{StepID: s.StepID, Status: model.StepNotCreated, Attempt: attempt}
	}
	r.apply(&d.st.Steps[i])
	d.startCounting()
	d.start(i)
	return d.advance()
}

// neverRan reports whether a step ended without being started (it has no
// attempt record of its own).
func neverRan(s *StepState) bool {
	return s.StartTime == 0 && s.CreateTime == 0
}

// redoChildOf is the child a subworkflow step restarted from incomplete
// restarts: its previous attempt's (or the one that attempt restarted,
// when it never heard back), nil when it had none.
func redoChildOf(s *StepState) *ChildRef {
	c := s.Child
	if c == nil {
		c = s.RedoChild
	}
	if c == nil {
		return nil
	}
	out := *c
	out.Ended, out.Rollup = false, nil
	return &out
}

// RestartIteration returns the first state of the run that restarts prev,
// a run that has ended, to run iteration index (0-based) of its foreach
// step stepID again: the foreach step and the steps downstream of it start
// afresh, as in RestartFromStep, and the loop keeps every other iteration
// as it ended (was is how the iteration to rerun ended), launching only
// that one again and then any never launched — unless a kept iteration
// failed, which stops the launches as before. The iteration itself is
// restarted with policy (RestartChild): from incomplete (its succeeded
// steps kept, so a succeeded iteration does nothing) or from the
// beginning.
//
// With inner, the iteration is itself restarted as a restart of one
// iteration of a loop of its own (a nested loop's iteration restarted by
// itself): policy is then unused.
func RestartIteration(g *Graph, prev *Instance, stepID string, index int64, was model.WorkflowStatus, policy string, now time.Time, inner *InnerRestart) (*Instance, error) {
	switch policy {
	case "", RestartFromIncomplete:
		policy = ""
	case RestartFromBeginning:
	default:
		return nil, fmt.Errorf("restart: unknown restart policy %q (want %s or %s)", policy, RestartFromIncomplete, RestartFromBeginning)
	}
	i, ok := g.index[stepID]
	if !ok || !isForeach(g.nodes[i].step) {
		return nil, fmt.Errorf("restart: %q is not a foreach step of this workflow", stepID)
	}
	if i >= len(prev.Steps) || prev.Steps[i].Loop == nil || prev.Steps[i].Loop.WorkflowID == "" {
		return nil, fmt.Errorf("restart: foreach step %q of run %d started no iterations", stepID, prev.RunID)
	}
	l := prev.Steps[i].Loop
	if index < 0 || index >= l.Next {
		return nil, fmt.Errorf("restart: foreach step %q of run %d never launched iteration %d", stepID, prev.RunID, index+1)
	}
	if l.FailedOverflow {
		return nil, fmt.Errorf("restart: foreach step %q lost track of its failed iterations (more than %d); restart the run", stepID, MaxFailedKept)
	}
	next, err := RestartFromStep(g, prev, stepID, now)
	if err != nil {
		return nil, err
	}
	kept := maps.Clone(l.Counts)
	if kept == nil {
		kept = map[model.WorkflowStatus]int64{}
	}
	if kept[was] > 0 {
		kept[was]--
	}
	var keptFailed []int64
	for _, f := range l.Failed {
		if f != index {
			keptFailed = append(keptFailed, f)
		}
	}
	next.Steps[i].Redo = &LoopRedo{WorkflowID: l.WorkflowID, Total: l.Total, Ran: l.Next, Indices: []int64{index},
		Kept: kept, KeptFailed: keptFailed, Policy: policy, Inner: inner}
	return next, nil
}
