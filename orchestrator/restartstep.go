package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// MaxStepRunParamsBytes bounds the step_run_params of a step restart (their
// JSON): they are kept in the run's state item, which DynamoDB caps at
// 400 KB with every other step's state.
const MaxStepRunParamsBytes = 16 << 10

// Upstream restart modes of a step restart (Maestro's UpstreamRestartMode).
const (
	// RestartFromStep restarts the step itself: in a run in progress a new
	// attempt, in one that ended a new run from that step, climbing
	// through the parents of a loop iteration (the default).
	RestartFromStep = "RESTART_FROM_STEP"
	// RestartFromInlineRoot restarts, instead, the first run above the
	// step that is not a loop iteration (the step's own run when it is
	// not in one) with the request's restart policy.
	RestartFromInlineRoot = "RESTART_FROM_INLINE_ROOT"
)

// stepRuns is what a step restart needs of the runs it reads and
// restarts; *Actions serves it.
type stepRuns interface {
	runState(ctx context.Context, wf string, inst, run int64) (*store.InstanceRecord, *engine.Instance, error)
	graph(ctx context.Context, wf string, version int64) (*engine.Graph, *model.Definition, error)
	// actWith records a RESTART action in a run in progress.
	actWith(ctx context.Context, wf string, inst, run int64, step, action string, restart *engine.StepRestart) (*InstanceView, error)
	// climb restarts an ended iteration through the runs above it.
	climb(ctx context.Context, it *engine.Instance, policy string, inner *engine.InnerRestart) (*InstanceView, error)
	// startNextRun writes and starts the next run of an ended run.
	startNextRun(ctx context.Context, rec *store.InstanceRecord, st, next *engine.Instance, runParams model.Params) (*InstanceView, error)
	RestartInstance(ctx context.Context, wf string, inst int64, req RestartRequest) (*InstanceView, error)
}

// stepRestart is one step restart or skip of an ended step, checked: the
// step it targets, how it restarts and what it asks of the step. Its
// methods decide which run restarts and how, through stepRuns.
type stepRestart struct {
	wf     string
	inst   int64
	policy string // RESTART_FROM_INCOMPLETE or RESTART_FROM_BEGINNING
	root   bool   // RESTART_FROM_INLINE_ROOT
	sr     engine.StepRestart
	now    time.Time
}

// newStepRestart checks req (policy, mode, the size of the step run
// params) before anything is read.
func newStepRestart(wf string, inst int64, step string, req StepRestartRequest, now time.Time) (*stepRestart, error) {
	r := &stepRestart{wf: wf, inst: inst, sr: engine.StepRestart{StepID: step}, now: now}
	switch p := strings.ToUpper(req.RestartPolicy); p {
	case "", engine.RestartFromIncomplete:
		r.policy = engine.RestartFromIncomplete
	case engine.RestartFromBeginning:
		r.policy = p
	default:
		return nil, Invalid("bad restart request", fmt.Sprintf("restart_policy: %q is not %s or %s", req.RestartPolicy, engine.RestartFromIncomplete, engine.RestartFromBeginning))
	}
	switch m := strings.ToUpper(req.UpstreamRestartMode); m {
	case "", RestartFromStep:
	case RestartFromInlineRoot:
		r.root = true
	default:
		return nil, Invalid("bad restart request", fmt.Sprintf("upstream_restart_mode: %q is not %s or %s", req.UpstreamRestartMode, RestartFromStep, RestartFromInlineRoot))
	}
	if len(req.StepRunParams) == 0 {
		return r, nil
	}
	if r.root {
		return nil, Invalid("bad restart request", "step_run_params: not carried by a restart with upstream_restart_mode RESTART_FROM_INLINE_ROOT in this runtime; restart the step with RESTART_FROM_STEP")
	}
	raw, err := json.Marshal(req.StepRunParams)
	if err != nil {
		return nil, Invalid("bad restart request", "step_run_params: "+err.Error())
	}
	if len(raw) > MaxStepRunParamsBytes {
		return nil, Invalid("bad restart request", fmt.Sprintf("step_run_params: %d bytes of JSON; the limit is %d (MaxStepRunParamsBytes)", len(raw), MaxStepRunParamsBytes))
	}
	params, err := decodeParams(req.StepRunParams, "step_run_params")
	if err != nil {
		return nil, err
	}
	r.sr.Params = &params
	return r, nil
}

// checkParams checks the step run params against step's definition: names
// follow the param name rules, a param the definition has keeps its type,
// and its mode must allow a change on restart.
func (r *stepRestart) checkParams(step *model.Step) error {
	if r.sr.Params == nil {
		return nil
	}
	var problems []string
	for _, name := range r.sr.Params.Names {
		for _, p := range model.NameProblems(name, "param name") {
			problems = append(problems, "step_run_params."+name+": "+p)
		}
		def, have := step.Params.Defs[name], r.sr.Params.Defs[name]
		if def != nil && have != nil && def.Type != have.Type {
			problems = append(problems, fmt.Sprintf("step_run_params.%s: type %s does not match the step's param type %s", name, have.Type, def.Type))
		}
	}
	for _, p := range engine.CheckRunParamModes(step.Params, *r.sr.Params, true) {
		problems = append(problems, "step_"+p)
	}
	if len(problems) > 0 {
		return Invalid("bad restart request", problems...)
	}
	return nil
}

// RestartStep restarts a step that has ended (Maestro's step restart): in
// a run in progress the step starts a new attempt and the steps downstream
// of it run again; in a run that has ended, a new run
// (RESTART_FROM_SPECIFIC) runs the step and its downstream again and keeps
// the rest as a restart from incomplete does. A step of a loop iteration
// that has ended restarts through the loop's run, as a restart of that
// iteration does: the run above it takes a new run in which the iteration
// restarts from the step. The step run params are merged over the step's
// params for the restarted attempt. With RESTART_FROM_INLINE_ROOT the run
// above every loop around the step restarts instead, with the policy.
func (o *Actions) RestartStep(ctx context.Context, wf string, inst int64, step string, req StepRestartRequest) (*InstanceView, error) {
	r, err := newStepRestart(wf, inst, step, req, o.now())
	if err != nil {
		return nil, err
	}
	return r.run(ctx, o)
}

// skipEnded serves a skip of a step that has already ended, as Maestro
// does: the step restarts, and its new attempt ends SKIPPED at once with
// engine.SkippedByUser in its timeline; the steps after it then run. It
// reports false for a step that has not ended (a plain skip action).
func skipEnded(ctx context.Context, o stepRuns, now time.Time, wf string, inst int64, step string) (*InstanceView, bool, error) {
	_, st, err := o.runState(ctx, wf, inst, 0)
	if err != nil {
		return nil, true, err
	}
	ss := st.Step(step)
	if ss == nil || ss.Status == "" || ss.Status == model.StepNotCreated {
		return nil, false, nil // the plain action answers (404, 409)
	}
	if st.Status == model.WorkflowInProgress && !ss.Status.IsTerminal() {
		return nil, false, nil
	}
	if !slices.Contains(model.AllowedStepActions(ss.Status), model.StepActionRestart) {
		return nil, false, nil // retrying: the plain skip ends it
	}
	r := &stepRestart{wf: wf, inst: inst, policy: engine.RestartFromIncomplete, sr: engine.StepRestart{StepID: step, Skip: true}, now: now}
	v, err := r.run(ctx, o)
	return v, true, err
}

// run carries the restart out on the step's latest run.
func (r *stepRestart) run(ctx context.Context, o stepRuns) (*InstanceView, error) {
	step := r.sr.StepID
	rec, stp, err := o.runState(ctx, r.wf, r.inst, 0)
	if err != nil {
		return nil, err
	}
	st := *stp
	g, _, err := o.graph(ctx, r.wf, st.WorkflowVersion)
	if err != nil {
		return nil, Internal(err)
	}
	def := g.Step(step)
	if def == nil {
		return nil, NotFound("workflow %s instance %d has no step %s", r.wf, r.inst, step)
	}
	if err := r.checkParams(def); err != nil {
		return nil, err
	}
	if st.Status.IsTerminal() || r.root {
		if err := restartableStep(&st, step); err != nil {
			return nil, err
		}
	}
	iteration := st.Parent != nil && !st.Parent.Subworkflow
	switch {
	case r.root:
		return r.restartRoot(ctx, o, &st)
	case !st.Status.IsTerminal():
		if err := engine.CheckStepRestart(g, &st, step); err != nil {
			return nil, &Error{Status: http.StatusConflict, Message: err.Error()}
		}
		return o.actWith(ctx, r.wf, r.inst, st.RunID, step, string(model.StepActionRestart), &r.sr)
	case iteration:
		// The iteration's run restarts from the step when its loop's run
		// restarts it (Maestro's restart path up through the parents).
		return o.climb(ctx, &st, "", &engine.InnerRestart{Step: &r.sr})
	}
	next, err := engine.RestartStepRun(g, &st, r.sr, r.now)
	if err != nil {
		return nil, Internal(err)
	}
	return o.startNextRun(ctx, rec, &st, next, model.Params{})
}

// restartableStep answers 409 unless step of st, a run that has ended (or
// whose inline root restarts), is in a status a restart applies to.
func restartableStep(st *engine.Instance, step string) error {
	status := model.StepNotCreated
	if ss := st.Step(step); ss != nil && ss.Status != "" {
		status = ss.Status
	}
	if slices.Contains(model.AllowedStepActions(status), model.StepActionRestart) && status.IsTerminal() {
		return nil
	}
	return &Error{Status: http.StatusConflict, Message: (&engine.ActionError{
		Action: string(model.StepActionRestart), StepID: step, Status: string(status),
		Allowed: actionNames(model.AllowedStepActions(status)),
	}).Error()}
}

// restartRoot restarts the first run above st that is not a loop
// iteration (st itself when it is not one) with the request's policy, as
// an instance restart of it does (Maestro's RESTART_FROM_INLINE_ROOT).
func (r *stepRestart) restartRoot(ctx context.Context, o stepRuns, st *engine.Instance) (*InstanceView, error) {
	if !st.Status.IsTerminal() {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"upstream_restart_mode RESTART_FROM_INLINE_ROOT: workflow %s instance %d is %s; restart it once it has ended", st.WorkflowID, st.InstanceID, st.Status)}
	}
	wf, inst := st.WorkflowID, st.InstanceID
	for p := st.Parent; p != nil && !p.Subworkflow; {
		wf, inst = p.WorkflowID, p.InstanceID
		_, parent, err := o.runState(ctx, wf, inst, 0)
		if err != nil {
			return nil, err
		}
		p = parent.Parent
	}
	return o.RestartInstance(ctx, wf, inst, RestartRequest{RestartPolicy: r.policy})
}
