package engine

import (
	"context"
	"fmt"

	"github.com/maestro-serverless/maestro/model"
)

// params.getFromForeach and params.getFromSubworkflow read the params of
// steps of other runs — a foreach step's iterations, a subworkflow step's
// child — through a ChildParams reader the runtime gives the decision.

// ChildParams reads a step's params (outputs applied) in a run other than
// the decided one. ok is false when the run or the step has none yet (not
// created, not reached). An error aborts the decision, as a failed read of
// offloaded params does: its result could be wrong.
type ChildParams interface {
	ChildStepParams(ctx context.Context, wf string, inst, run int64, stepID string) (params Values, ok bool, err error)
}

// ChildrenPrefetcher is a ChildParams reader that can load many runs at
// once: params.getFromForeach hands it the iterations it is about to read
// (instances insts of inline workflow wf, run run), so that the reads one by
// one that follow are served from what it loaded.
type ChildrenPrefetcher interface {
	PrefetchChildren(ctx context.Context, wf string, insts []int64, run int64, stepID string) error
}

// WithChildParams gives the decision the reader params.getFromForeach and
// params.getFromSubworkflow use. Without it they fail their expression.
func WithChildParams(r ChildParams) Option { return func(d *decider) { d.childReader = r } }

// MaxForeachReads bounds the iterations params.getFromForeach reads in one
// evaluation: each is a read of the iteration's run.
const MaxForeachReads = 10_000

// childReadFailed records the first failed read of a child run: Decide
// returns it instead of a decision.
func (d *decider) childReadFailed(err error) error {
	if d.loadErr == nil {
		d.loadErr = err
	}
	return err
}

// stepFor returns the state and definition of step stepID, which must be
// of kind want.
func (d *decider) stepFor(fn, stepID string, want model.StepKind) (*StepState, *model.Step, error) {
	i, ok := d.g.index[stepID]
	if !ok {
		return nil, nil, fmt.Errorf("%s: no step %q in this workflow", fn, stepID)
	}
	step := d.g.nodes[i].step
	if step.Kind != want {
		return nil, nil, fmt.Errorf("%s: step %q is a %s step, not a %s step", fn, stepID, orDefault(string(step.Kind), string(model.KindStep)), want)
	}
	if i >= len(d.st.Steps) {
		return nil, nil, fmt.Errorf("%s: the run has not started", fn)
	}
	return &d.st.Steps[i], step, nil
}

// getFromForeach returns param name of inner step stepID in every
// iteration of foreach step foreachID, in iteration order, as an array of
// the param's type; an iteration where the step has not set it gives the
// type's zero value (Maestro's behaviour).
func (d *decider) getFromForeach(ctx context.Context, foreachID, stepID, name string) (any, error) {
	const fn = "params.getFromForeach"
	s, step, err := d.stepFor(fn, foreachID, model.KindForeach)
	if err != nil {
		return nil, err
	}
	if s.Loop == nil || s.Loop.WorkflowID == "" {
		return nil, fmt.Errorf("%s: foreach step %q has not started its iterations (status %s)", fn, foreachID, s.Status)
	}
	if d.childReader == nil {
		return nil, fmt.Errorf("%s: the runtime gave no reader of iterations", fn)
	}
	total := s.Loop.Total
	if total > MaxForeachReads {
		return nil, fmt.Errorf("%s: foreach step %q has %d iterations; reading a param of each is limited to %d", fn, foreachID, total, MaxForeachReads)
	}
	typ := innerParamType(step.Steps, stepID, name)
	if p, ok := d.childReader.(ChildrenPrefetcher); ok {
		insts := make([]int64, 0, min(total, s.Loop.Next))
		for n := int64(1); n <= total && n <= s.Loop.Next; n++ {
			insts = append(insts, n)
		}
		if err := p.PrefetchChildren(ctx, s.Loop.WorkflowID, insts, 1, stepID); err != nil {
			return nil, d.childReadFailed(fmt.Errorf("%s: read the iterations of %q: %w", fn, foreachID, err))
		}
	}
	values := make([]any, total)
	for n := int64(1); n <= total; n++ {
		if n > s.Loop.Next {
			break // never launched
		}
		params, ok, err := d.childReader.ChildStepParams(ctx, s.Loop.WorkflowID, n, 1, stepID)
		if err != nil {
			return nil, d.childReadFailed(fmt.Errorf("%s: read iteration %d of %q: %w", fn, n, foreachID, err))
		}
		if !ok {
			continue
		}
		if v, found := params[name]; found {
			values[n-1] = v
			if typ == "" {
				if t, err := TypeOf(v); err == nil {
					typ = t
				}
			}
		}
	}
	return scalarArray(fn, typ, name, values)
}

// innerParamType returns the declared type of param name of step stepID
// among steps (nested loops' bodies included); "" when undeclared.
func innerParamType(steps []model.Step, stepID, name string) model.ParamType {
	for i := range steps {
		s := &steps[i]
		if s.ID == stepID {
			if def := s.Params.Defs[name]; def != nil {
				return def.Type
			}
			return ""
		}
		if t := innerParamType(s.Steps, stepID, name); t != "" {
			return t
		}
	}
	return ""
}

// scalarArray turns per-iteration values (nil: unset) into an array of
// type typ.
func scalarArray(fn string, typ model.ParamType, name string, values []any) (any, error) {
	switch typ {
	case model.TypeString, "":
		out := make([]string, len(values))
		for i, v := range values {
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: param %q is %T in iteration %d, want a STRING like the others", fn, name, v, i+1)
			}
			out[i] = s
		}
		return out, nil
	case model.TypeLong:
		out := make([]int64, len(values))
		for i, v := range values {
			if v == nil {
				continue
			}
			n, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("%s: param %q is %T in iteration %d, want a LONG like the others", fn, name, v, i+1)
			}
			out[i] = n
		}
		return out, nil
	case model.TypeDouble:
		out := make([]float64, len(values))
		for i, v := range values {
			switch x := v.(type) {
			case nil:
			case float64:
				out[i] = x
			case int64:
				out[i] = float64(x)
			default:
				return nil, fmt.Errorf("%s: param %q is %T in iteration %d, want a DOUBLE like the others", fn, name, v, i+1)
			}
		}
		return out, nil
	case model.TypeBoolean:
		out := make([]bool, len(values))
		for i, v := range values {
			if v == nil {
				continue
			}
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("%s: param %q is %T in iteration %d, want a BOOLEAN like the others", fn, name, v, i+1)
			}
			out[i] = b
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s: param %q is of type %s; only STRING, LONG, DOUBLE and BOOLEAN params can be collected", fn, name, typ)
	}
}

// getFromSubworkflow returns param name of step stepID in the instance
// subworkflow step subID started.
func (d *decider) getFromSubworkflow(ctx context.Context, subID, stepID, name string) (any, error) {
	const fn = "params.getFromSubworkflow"
	s, _, err := d.stepFor(fn, subID, model.KindSubworkflow)
	if err != nil {
		return nil, err
	}
	if s.Child == nil {
		return nil, fmt.Errorf("%s: subworkflow step %q has not started its instance (status %s)", fn, subID, s.Status)
	}
	if d.childReader == nil {
		return nil, fmt.Errorf("%s: the runtime gave no reader of subworkflow instances", fn)
	}
	params, ok, err := d.childReader.ChildStepParams(ctx, s.Child.WorkflowID, s.Child.InstanceID, s.Child.RunID, stepID)
	if err != nil {
		return nil, d.childReadFailed(fmt.Errorf("%s: read %s instance %d: %w", fn, s.Child.WorkflowID, s.Child.InstanceID, err))
	}
	if !ok {
		return nil, fmt.Errorf("%s: step %q of %s instance %d has no params (not reached)", fn, stepID, s.Child.WorkflowID, s.Child.InstanceID)
	}
	v, found := params[name]
	if !found {
		return nil, fmt.Errorf("%s: step %q of %s instance %d has no param %q", fn, stepID, s.Child.WorkflowID, s.Child.InstanceID, name)
	}
	return v, nil
}
