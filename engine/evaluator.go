package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// Evaluator compiles the expressions of a workflow for the engine: edge
// conditions and parameter definitions. Compile uses it once per definition;
// Decide evaluates the compiled forms. Implementations must be deterministic:
// the same compiled form and Env give the same result. Scopes passed to it
// are shared and must be treated as read-only. NewEvaluator adapts the
// expression language (engine/expression) to it.
type Evaluator interface {
	// CompileCondition compiles a BOOLEAN successor condition whose variables
	// are typed by scope.
	CompileCondition(src string, scope model.Scope) (Condition, error)
	// CompileParams compiles a set of parameter definitions whose expressions
	// and interpolated literals may reference each other by name and, through
	// scope, the values outside the set.
	CompileParams(params model.Params, scope model.Scope) (ParamSet, error)
}

// Condition is a compiled edge condition.
type Condition interface {
	// Eval evaluates the condition in env.
	Eval(ctx context.Context, env *Env) (bool, error)
}

// ParamSet is a compiled set of parameter definitions.
type ParamSet interface {
	// Eval evaluates every param of the set in env: expressions evaluated,
	// literal strings interpolated, results converted to the declared types.
	// Params of the set shadow env's Vars.
	Eval(ctx context.Context, env *Env) (map[string]any, error)
}

// Env is what an expression evaluated by the engine can see. Evaluators must
// treat every map reachable from it as read-only.
type Env struct {
	// Vars are the visible params by name: workflow params, overridden by the
	// params of the step being evaluated (or, for an edge condition, of the
	// predecessor).
	Vars map[string]any
	// Step resolves params.getFromStep(stepID, name) and "<stepid>__<name>"
	// identifiers: the evaluated param name of step stepID.
	Step func(ctx context.Context, stepID, name string) (any, error)
	// StepFields holds the runtime fields of the step being evaluated, read by
	// params.getFromStep(field) (step_id, step_attempt_id, step_instance_uuid,
	// workflow_instance_id).
	StepFields map[string]any
	// Instance holds the instance fields read by params.getFromInstance(field)
	// (workflow_id, workflow_instance_id, owner, RUN_POLICY, INITIATOR_TYPE ...).
	Instance map[string]any
	// Seed makes "random" helpers (UUID.randomUUID) deterministic: the same
	// seed gives the same values. The engine derives it from the instance
	// uuid, the step and the attempt.
	Seed string
	// Now is the instant SEL's new DateTime() and System.currentTimeMillis() read: the
	// decision's time.
	Now time.Time
	// SignalParams and Signals are the params of the signals that
	// triggered the run (params.getFromSignal); SignalDependencies those of
	// the signals that satisfied the step's dependencies, by index
	// (params.getFromSignalDependency).
	SignalParams       map[string]any
	Signals            map[string]map[string]any
	SignalDependencies []map[string]any
	// Foreach and Subworkflow resolve params.getFromForeach and
	// params.getFromSubworkflow (nil: not available where evaluated).
	Foreach     func(ctx context.Context, foreachStepID, stepID, name string) (any, error)
	Subworkflow func(ctx context.Context, subworkflowStepID, stepID, name string) (any, error)
}

// NewEvaluator returns an Evaluator backed by the expression language l
// (engine/expression). Conditions are compiled once, as BOOLEAN programs.
func NewEvaluator(l *expression.Language) Evaluator {
	return &langEvaluator{lang: l}
}

type langEvaluator struct {
	lang *expression.Language
}

type langCondition struct {
	src  string
	prog *expression.Program
}

// CompileCondition compiles src as a BOOLEAN expression in scope.
func (e *langEvaluator) CompileCondition(src string, scope model.Scope) (Condition, error) {
	prog, err := e.lang.Compile(src, model.TypeBoolean, scope)
	if err != nil {
		return nil, fmt.Errorf("compile condition: %w", err)
	}
	return &langCondition{src: src, prog: prog}, nil
}

// CompileParams compiles params with the expression language.
func (e *langEvaluator) CompileParams(params model.Params, scope model.Scope) (ParamSet, error) {
	set, err := e.lang.CompileParams(params, scope)
	if err != nil {
		return nil, fmt.Errorf("compile params: %w", err)
	}
	return langParamSet{set}, nil
}

type langParamSet struct {
	set *expression.ParamSet
}

// Bytes estimates the memory of the compiled set.
func (p langParamSet) Bytes() int64 { return p.set.Bytes() }

// Bytes estimates the memory of the compiled condition.
func (c *langCondition) Bytes() int64 { return c.prog.Bytes() + int64(len(c.src)) }

// Eval evaluates the set.
func (p langParamSet) Eval(ctx context.Context, env *Env) (map[string]any, error) {
	return p.set.Eval(ctx, exprEnv(env))
}

// Eval evaluates the condition; a non-boolean result is an error.
func (c *langCondition) Eval(ctx context.Context, env *Env) (bool, error) {
	v, err := c.prog.Eval(ctx, exprEnv(env))
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("condition %q gave %T, want a boolean", c.src, v)
	}
	return b, nil
}

func exprEnv(env *Env) *expression.Env {
	if env == nil {
		return &expression.Env{}
	}
	return &expression.Env{
		Vars:       env.Vars,
		Step:       env.Step,
		StepFields: env.StepFields,
		Instance:   env.Instance,
		Seed:       env.Seed,
		Now:        env.Now,

		SignalParams:       env.SignalParams,
		Signals:            env.Signals,
		SignalDependencies: env.SignalDependencies,
		Foreach:            env.Foreach,
		Subworkflow:        env.Subworkflow,
	}
}
