package expression

import (
	"context"
	"strings"
	"time"
)

// Env is the data an evaluation reads: parameter values and the sources of
// Maestro's params.* functions. Every field is optional; a function whose
// source is missing fails with a clear error when it is called. An Env is
// read, never written, by an evaluation, so one Env may serve concurrent
// evaluations.
type Env struct {
	// Vars maps a parameter name to its value: workflow params, the step's
	// params, and upstream step params as "<stepId>__<name>". Values use the
	// canonical Go types of model.ParamDefinition (int64, float64, string,
	// bool, []string, []int64, []float64, []bool, map[string]string,
	// map[string]any).
	Vars map[string]any

	// Step returns param name of step stepID in this workflow instance
	// (params.getFromStep(stepId, name), and "<stepId>__<name>" identifiers
	// missing from Vars).
	Step func(ctx context.Context, stepID, name string) (any, error)
	// StepFields holds the current step's runtime fields read by
	// params.getFromStep(field), e.g. MAESTRO_STEP_ERROR_RETRIES, step_id.
	StepFields map[string]any

	// SignalParams holds the params of the signal(s) that triggered the
	// workflow instance (params.getFromSignal(name)).
	SignalParams map[string]any
	// Signals maps a triggering signal's name to its params
	// (params.getFromSignal(signalName, name)).
	Signals map[string]map[string]any
	// SignalDependencies holds, in declaration order, the params of the
	// signal instance that satisfied each of the step's signal dependencies
	// (params.getFromSignalDependency(index, name)); nil for one not matched.
	SignalDependencies []map[string]any

	// Foreach returns, for every iteration of foreach step foreachStepID in
	// order, the value of param name of inner step stepID; the result must
	// be an array (params.getFromForeach).
	Foreach func(ctx context.Context, foreachStepID, stepID, name string) (any, error)
	// Subworkflow returns param name of step stepID in the instance started
	// by subworkflow step subworkflowStepID (params.getFromSubworkflow).
	Subworkflow func(ctx context.Context, subworkflowStepID, stepID, name string) (any, error)
	// Instance holds the instance fields read by params.getFromInstance,
	// e.g. RUN_POLICY, INITIATOR_TYPE, owner, workflow_id.
	Instance map[string]any

	// Seed makes UUID.randomUUID() deterministic: the n-th call of one
	// evaluation returns a UUID derived from Seed and n. The engine sets it to
	// something unique per evaluation site, e.g. the step instance UUID and
	// attempt. UUID.randomUUID() fails when Seed is empty.
	Seed string
	// Now is the instant SEL's new DateTime() and System.currentTimeMillis() read: the
	// engine gives the decision's time, so that a decision made again
	// reads the same one.
	Now time.Time
}

// stepSeparator joins a step id and a param name in cross-step references.
const stepSeparator = "__"

// lookupVar returns the value of a parameter from Vars, falling back to the
// Step function for "<stepId>__<name>" references.
func (e *Env) lookupVar(ctx context.Context, name string) (any, error) {
	if e == nil {
		return nil, failf(ErrUnknownParam, "parameter %q has no value", name)
	}
	if v, ok := e.Vars[name]; ok {
		return v, nil
	}
	if e.Step != nil {
		if stepID, param, ok := strings.Cut(name, stepSeparator); ok && stepID != "" && param != "" {
			v, err := e.Step(ctx, stepID, param)
			if err != nil {
				return nil, wrapf(err, "cannot read param %q of step %q", param, stepID)
			}
			return v, nil
		}
	}
	return nil, failf(ErrUnknownParam, "parameter %q has no value", name)
}
