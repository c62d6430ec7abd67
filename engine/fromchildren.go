package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// params.getFromForeach and params.getFromSubworkflow read the params of
// steps of other runs — a foreach step's iterations, a subworkflow step's
// child — through a ChildParams reader the runtime gives the decision.

// ChildParams reads a param of a step in a run other than the decided one.
type ChildParams interface {
	// ChildStepParam returns param name of step stepID (outputs applied) in
	// run run of instance inst of workflow wf. An error aborts the
	// decision, as a failed read of offloaded params does: its result could
	// be wrong.
	ChildStepParam(ctx context.Context, wf string, inst, run int64, stepID, name string) (ChildParam, error)
}

// ChildParam is what ChildStepParam found.
type ChildParam struct {
	// Value is the param's value; nil when not Found.
	Value any
	// Reached is false when the run or the step has no params yet (not
	// created, not reached); Found is false when the step has params but
	// not this one.
	Reached, Found bool
	// Read is the bytes the call read from storage (0 when it was served
	// from what PrefetchChildren loaded); the decision charges them.
	Read int64
}

// ChildrenPrefetcher is a ChildParams reader that can load many runs at
// once: params.getFromForeach hands it the iterations it is about to read
// (instances insts of inline workflow wf, run run), at most
// ForeachReadChunk at a time, so that the reads one by one that follow are
// served from what it loaded. It keeps param name of step stepID of the
// last chunk only, and calls charge with the bytes it read as it reads
// them — before it decodes them — stopping at the first error charge
// returns (the decision's budget is spent), which it returns as is.
type ChildrenPrefetcher interface {
	PrefetchChildren(ctx context.Context, wf string, insts []int64, run int64, stepID, name string, charge func(read int64) error) error
}

// ForeachReadChunk is how many iterations params.getFromForeach hands a
// ChildrenPrefetcher at once: what one batch read of DynamoDB takes.
const ForeachReadChunk = 100

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
// type's zero value (Maestro's behaviour). It reads the iterations a chunk
// at a time and charges the decision's budget what it reads as it reads
// it; the values it collects may hold at most MaxStepParamsBytes as JSON,
// what one step's params may hold.
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
	charge := func(read int64) error { return d.budget.Charge(read, 0) }
	launched := min(total, s.Loop.Next) // later iterations never launched
	values := make([]any, total)
	var size int64
	for lo := int64(1); lo <= launched; lo += ForeachReadChunk {
		hi := min(lo+ForeachReadChunk-1, launched)
		if p, ok := d.childReader.(ChildrenPrefetcher); ok {
			insts := make([]int64, 0, hi-lo+1)
			for n := lo; n <= hi; n++ {
				insts = append(insts, n)
			}
			if err := p.PrefetchChildren(ctx, s.Loop.WorkflowID, insts, 1, stepID, name, charge); err != nil {
				if errors.Is(err, expression.ErrLimit) {
					return nil, fmt.Errorf("%s: read the iterations of %q: %w", fn, foreachID, err)
				}
				return nil, d.childReadFailed(fmt.Errorf("%s: read the iterations of %q: %w", fn, foreachID, err))
			}
		}
		for n := lo; n <= hi; n++ {
			p, err := d.childReader.ChildStepParam(ctx, s.Loop.WorkflowID, n, 1, stepID, name)
			if err != nil {
				return nil, d.childReadFailed(fmt.Errorf("%s: read iteration %d of %q: %w", fn, n, foreachID, err))
			}
			if err := charge(p.Read); err != nil {
				return nil, fmt.Errorf("%s: read iteration %d of %q: %w", fn, n, foreachID, err)
			}
			if !p.Found {
				continue
			}
			vs, over := jsonSizeUpTo(p.Value, MaxStepParamsBytes-size)
			if size += vs; over {
				return nil, fmt.Errorf("%s: param %q of step %q over the first %d iterations of %q is more than %d bytes as JSON, "+
					"over the limit of a step's params", fn, name, stepID, n, foreachID, MaxStepParamsBytes)
			}
			// What is collected is built into the result: charged as the
			// expressions charge the arrays and strings they build.
			if err := d.budget.Charge(vs, vs/16+1); err != nil {
				return nil, fmt.Errorf("%s: %w", fn, err)
			}
			values[n-1] = p.Value
			if typ == "" {
				if t, err := TypeOf(p.Value); err == nil {
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
		return typedArray[string](fn, name, model.TypeString, values)
	case model.TypeLong:
		return typedArray[int64](fn, name, model.TypeLong, values)
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
		return typedArray[bool](fn, name, model.TypeBoolean, values)
	default:
		return nil, fmt.Errorf("%s: param %q is of type %s; only STRING, LONG, DOUBLE and BOOLEAN params can be collected", fn, name, typ)
	}
}

// typedArray turns per-iteration values of Go type T (nil: unset) into an
// array of them; a value of another type is an error naming typ.
func typedArray[T any](fn, name string, typ model.ParamType, values []any) (any, error) {
	out := make([]T, len(values))
	for i, v := range values {
		if v == nil {
			continue
		}
		x, ok := v.(T)
		if !ok {
			return nil, fmt.Errorf("%s: param %q is %T in iteration %d, want a %s like the others", fn, name, v, i+1, typ)
		}
		out[i] = x
	}
	return out, nil
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
	p, err := d.childReader.ChildStepParam(ctx, s.Child.WorkflowID, s.Child.InstanceID, s.Child.RunID, stepID, name)
	if err != nil {
		return nil, d.childReadFailed(fmt.Errorf("%s: read %s instance %d: %w", fn, s.Child.WorkflowID, s.Child.InstanceID, err))
	}
	if err := d.budget.Charge(p.Read, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	if !p.Reached {
		return nil, fmt.Errorf("%s: step %q of %s instance %d has no params (not reached)", fn, stepID, s.Child.WorkflowID, s.Child.InstanceID)
	}
	if !p.Found {
		return nil, fmt.Errorf("%s: step %q of %s instance %d has no param %q", fn, stepID, s.Child.WorkflowID, s.Child.InstanceID, name)
	}
	return p.Value, nil
}
