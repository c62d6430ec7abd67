package engine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/maestro-serverless/maestro/model"
)

// A while step runs its inline steps again and again, one iteration at a
// time, while its condition holds — Maestro's WhileStepRuntime. Each
// iteration is a child run of the step attempt's inline workflow
// (InlineWhilePrefix), as a foreach iteration is. The condition is
// evaluated before every iteration, over the workflow params, the step's
// params and the loop params' current values; an empty loop (false at
// once) succeeds. The loop params are the feedback: when an iteration
// succeeds, each takes the value of the same-named param of the
// iteration's steps (the last step to set it wins, in the order the steps
// were created), which is how sample-while-wf counts to 5. A failed
// iteration fails the step; a stopped or timed-out one ends it STOPPED or
// TIMED_OUT. At most MaxIterations iterations run.

// WhileConditionName is the param every while iteration receives as true
// (Maestro's reserved "condition" param).
const WhileConditionName = "condition"

func isWhile(s *model.Step) bool { return s.Kind == model.KindWhile }

// compileWhileCondition compiles while step s's condition in the scope of
// its successor conditions plus its loop params (typed by their literal
// definitions).
func compileWhileCondition(ev Evaluator, base map[string]model.ParamType, s *model.Step) (Condition, error) {
	if s.Condition == "" {
		return nil, fmt.Errorf("while step %q has no condition", s.ID)
	}
	vars := map[string]model.ParamType{}
	if lp := s.Params.Defs[LoopParamsName]; lp != nil && lp.HasValue {
		if m, ok := lp.Value.(map[string]*model.ParamDefinition); ok {
			for _, n := range model.MapKeys(lp.Keys, m) {
				if d := m[n]; d != nil {
					vars[n] = d.Type
				}
			}
		}
	}
	return ev.CompileCondition(s.Condition, stepScope(base, s).With(vars))
}

// InlineWhileWorkflowID is the id of the inline workflow of a while step
// attempt of a run: the same for the same attempt, different for any other.
func InlineWhileWorkflowID(st *Instance, stepID string, attempt int64) string {
	return inlineWorkflowID(model.InlineWhilePrefix, st, stepID, attempt)
}

// whileVars returns while step i's loop params (names in definition order,
// values): scalars only.
func (d *decider) whileVars(i int) ([]string, Values, error) {
	s := &d.st.Steps[i]
	raw, ok := s.Params[LoopParamsName]
	if !ok {
		return nil, nil, fmt.Errorf("while step has no %s", LoopParamsName)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s is %T, want a MAP", LoopParamsName, raw)
	}
	var order []string
	if def := d.g.nodes[i].step.Params.Defs[LoopParamsName]; def != nil {
		order = def.Keys
	}
	names := model.MapKeys(order, m)
	vars := make(Values, len(names))
	for _, n := range names {
		switch v := m[n].(type) {
		case string, int64, float64, bool:
			vars[n] = v
		default:
			t, _ := TypeOf(v)
			return nil, nil, fmt.Errorf("loop param %q is %s, want a scalar (STRING, LONG, DOUBLE or BOOLEAN)", n, orDefault(string(t), fmt.Sprintf("%T", v)))
		}
	}
	return names, vars, nil
}

// startWhile begins while step i, which has just reached RUNNING.
func (d *decider) startWhile(i int) {
	s := &d.st.Steps[i]
	if d.st.Parent != nil && d.st.Parent.Depth >= model.WorkflowDepthLimit {
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("while: nesting deeper than the limit of %d levels", model.WorkflowDepthLimit))
		return
	}
	if err := d.g.nodes[i].whileErr; err != nil {
		d.fail(i, model.StepFatallyFailed, "while: "+err.Error())
		return
	}
	_, vars, err := d.whileVars(i)
	if err != nil {
		d.fail(i, model.StepFatallyFailed, "while: "+err.Error())
		return
	}
	if r := s.Redo; r != nil && r.While {
		// Restarted from incomplete: go on from where the loop stopped.
		s.Redo = nil
		s.Loop = &LoopState{
			WorkflowID: r.WorkflowID, While: true, Vars: r.Vars.Clone(), Concurrency: 1,
			Next: r.Ran, Counts: maps.Clone(r.Kept),
		}
		if len(r.Indices) == 0 {
			d.nextWhile(i)
			return
		}
		idx := r.Indices[0]
		d.starts += iterationStarts
		s.Loop.Running = []int64{idx}
		p := d.childParent(i)
		p.Index = idx
		p.Feedback = slices.Sorted(maps.Keys(s.Loop.Vars))
		d.out.Commands = append(d.out.Commands, RestartChild{
			StepID: s.StepID, Attempt: s.Attempt, WorkflowID: s.Loop.WorkflowID, Index: idx,
			Params: d.whileIterationParams(i, idx), Parent: p,
		})
		return
	}
	s.Redo = nil
	s.Loop = &LoopState{
		WorkflowID:  InlineWhileWorkflowID(d.st, s.StepID, s.Attempt),
		While:       true,
		Vars:        vars,
		Concurrency: 1,
		Counts:      map[model.WorkflowStatus]int64{},
	}
	d.nextWhile(i)
}

// nextWhile evaluates while step i's condition and either ends the step
// (false) or starts its next iteration, budget permitting (a decision cut
// short goes on in its Continue decision: resumeLoops).
func (d *decider) nextWhile(i int) {
	s := &d.st.Steps[i]
	l := s.Loop
	ok, err := d.whileCondition(i)
	if err != nil {
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("while: condition before iteration %d: %v", l.Next+1, err))
		return
	}
	if !ok {
		d.succeed(i, fmt.Sprintf("while: condition false after %d iterations", l.Next))
		return
	}
	if l.Next >= MaxIterations {
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("while: the condition still holds after %d iterations, the limit", MaxIterations))
		return
	}
	cost := d.iterationCost(i)
	if d.overBudget(cost) {
		d.out.Continue = true
		return
	}
	d.starts += cost
	idx := l.Next
	params := d.whileIterationParams(i, idx)
	if idx == 0 {
		d.out.Commands = append(d.out.Commands, CreateLoop{
			StepID: s.StepID, Attempt: s.Attempt, WorkflowID: l.WorkflowID, While: true, Params: params.Clone(),
		})
	}
	l.Next++
	l.Running = []int64{idx}
	p := d.childParent(i)
	p.Index = idx
	p.Feedback = slices.Sorted(maps.Keys(l.Vars))
	d.out.Commands = append(d.out.Commands, StartChild{
		StepID: s.StepID, Attempt: s.Attempt, WorkflowID: l.WorkflowID, Index: idx,
		Initiator: "WHILE", Params: params, Parent: p,
	})
}

// whileCondition evaluates while step i's condition over the workflow
// params, the step's params (loop_params aside) and the loop params'
// current values.
func (d *decider) whileCondition(i int) (bool, error) {
	s := &d.st.Steps[i]
	cond := d.g.nodes[i].whileCond
	if cond == nil {
		return false, fmt.Errorf("no compiled condition")
	}
	vars := overlay(d.st.Params, s.Params)
	delete(vars, LoopParamsName)
	for k, v := range s.Loop.Vars {
		vars[k] = v
	}
	env := &Env{
		Vars:        vars,
		Step:        d.stepFn,
		StepFields:  stepFields(s, s.Params),
		Instance:    d.instanceFields(),
		Seed:        fmt.Sprintf("%s/while/%d", stepUUID(d.st.UUID, s.StepID, s.Attempt), s.Loop.Next),
		Foreach:     d.getFromForeach,
		Subworkflow: d.getFromSubworkflow,
	}
	return cond.Eval(d.ctx, env)
}

// whileIterationParams returns the run params of iteration idx of while
// step i: the workflow params, the step's own params, loop_index, the loop
// params' current values and condition (true), as Maestro passes them.
func (d *decider) whileIterationParams(i int, idx int64) Values {
	s := &d.st.Steps[i]
	out := d.passedDown(i, true)
	out[LoopIndexName] = idx
	for k, v := range s.Loop.Vars {
		out[k] = v
	}
	out[WhileConditionName] = true
	return out
}

// whileChildEnded applies the end of while step i's running iteration.
func (d *decider) whileChildEnded(i int, e ChildEnded, status model.WorkflowStatus) {
	l := d.st.Steps[i].Loop
	switch status {
	case model.WorkflowSucceeded:
		for k, v := range e.Feedback {
			if _, ok := l.Vars[k]; ok {
				l.Vars[k] = v
			}
		}
		d.nextWhile(i)
	case model.WorkflowTimedOut:
		d.endStep(i, model.StepTimedOut, fmt.Sprintf("while: iteration %d timed out", e.Index+1))
	case model.WorkflowStopped:
		d.endStep(i, model.StepStopped, fmt.Sprintf("while: iteration %d was stopped", e.Index+1))
	default:
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("while: iteration %d failed%s", e.Index+1, orDefault(": "+e.Message, "")))
	}
}

// feedback returns, for a succeeding child run whose parent is a while
// step, the values its steps give the loop params the parent names
// (ParentRef.Feedback): each the param of the last step, in creation
// order, that has it.
func (d *decider) feedback() Values {
	p := d.st.Parent
	if p == nil || len(p.Feedback) == 0 {
		return nil
	}
	order := make([]int, 0, len(d.st.Steps))
	for i := range d.st.Steps {
		if d.st.Steps[i].CreateTime != 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(d.st.Steps[a].CreateTime, d.st.Steps[b].CreateTime)
	})
	out := Values{}
	for _, i := range order {
		params := d.paramsOf(i)
		for _, n := range p.Feedback {
			if v, ok := params[n]; ok {
				out[n] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
