package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Breakpoint is a step breakpoint, as Maestro's StepBreakpoint: 0 in a
// number field matches every value.
type Breakpoint struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	Version    int64  `json:"workflow_version"`
	Instance   int64  `json:"workflow_instance_id"`
	Run        int64  `json:"workflow_run"`
	Attempt    int64  `json:"step_attempt_id"`
	CreateTime int64  `json:"create_time,omitempty"`
}

// PausedAttempt is a step attempt a breakpoint holds.
type PausedAttempt struct {
	WorkflowID string `json:"workflow_id"`
	Version    int64  `json:"workflow_version_id"`
	Instance   int64  `json:"workflow_instance_id"`
	Run        int64  `json:"workflow_run_id"`
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
}

// TagPermit is a tag's permit: at most MaxAllowed step attempts carrying
// the tag run at once.
type TagPermit struct {
	Tag        string `json:"tag"`
	MaxAllowed int64  `json:"max_allowed"`
	// Held and Waiting count the attempts holding a permit and waiting.
	Held       int   `json:"held"`
	Waiting    int   `json:"waiting"`
	CreateTime int64 `json:"create_time,omitempty"`
	ModifyTime int64 `json:"modify_time,omitempty"`
	// ExtraInfo is the permit's extra info; its keys are written beside
	// the fields above (see MarshalJSON).
	ExtraInfo map[string]json.RawMessage `json:"-"`
}

// AddBreakpoint stores a breakpoint on a step of a workflow's latest
// version. Step attempts that start after it pause in PAUSED.
func (o *Gates) AddBreakpoint(ctx context.Context, b Breakpoint) (*Breakpoint, error) {
	head, err := o.head(ctx, b.WorkflowID)
	if err != nil {
		return nil, err
	}
	_, def, err := o.graph(ctx, b.WorkflowID, head.Latest)
	if err != nil {
		return nil, Internal(err)
	}
	if !hasStep(def.Workflow.Steps, b.StepID) {
		return nil, NotFound("workflow %s (version %d) has no step %s", b.WorkflowID, head.Latest, b.StepID)
	}
	if b.Version > head.Latest {
		return nil, NotFound("workflow %s has no version %d", b.WorkflowID, b.Version)
	}
	b.CreateTime = o.now().UnixMilli()
	sb := store.Breakpoint{StepID: b.StepID, Version: b.Version, Instance: b.Instance, Run: b.Run, Attempt: b.Attempt, CreateTime: b.CreateTime}
	if err := o.store.Gates.PutBreakpoint(ctx, b.WorkflowID, sb); err != nil {
		return nil, Internal(err)
	}
	return &b, nil
}

// hasStep reports whether steps, loop bodies included, have a step id: a
// breakpoint on a step inside a foreach or while pauses it in every
// iteration.
func hasStep(steps []model.Step, id string) bool {
	for i := range steps {
		if steps[i].ID == id || hasStep(steps[i].Steps, id) {
			return true
		}
	}
	return false
}

// ListBreakpoints returns a workflow's breakpoints, of one step when step
// is not empty.
func (o *Gates) ListBreakpoints(ctx context.Context, wf, step string) ([]Breakpoint, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return nil, err
	}
	list, err := o.store.Gates.ListBreakpoints(ctx, wf, step, true)
	if err != nil {
		return nil, Internal(err)
	}
	out := make([]Breakpoint, len(list))
	for i, b := range list {
		out[i] = Breakpoint{WorkflowID: wf, StepID: b.StepID, Version: b.Version, Instance: b.Instance,
			Run: b.Run, Attempt: b.Attempt, CreateTime: b.CreateTime}
	}
	return out, nil
}

// RemoveBreakpoints deletes every breakpoint of a workflow's step and, with
// resume, resumes the attempts they paused. It returns how many it resumed.
func (o *Gates) RemoveBreakpoints(ctx context.Context, wf, step string, resume bool) (int, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return 0, err
	}
	if _, err := o.store.Gates.DeleteBreakpoints(ctx, wf, step); err != nil {
		return 0, Internal(err)
	}
	if !resume {
		return 0, nil
	}
	paused, err := o.pausedAttempts(ctx, wf, step)
	if err != nil {
		return 0, Internal(err)
	}
	for _, p := range paused {
		ev := store.Event{ID: actionEventID(o.newUUID()), Body: mustJSON(engine.Action{StepID: p.StepID, Action: string(model.StepActionResume)})}
		if err := o.store.Runs.PutEvent(ctx, p.WorkflowID, p.Instance, p.Run, ev); err != nil {
			return 0, Internal(err)
		}
	}
	return len(paused), nil
}

// PausedAttempts lists the step attempts of a workflow paused at a
// breakpoint, of one step when step is not empty.
func (o *Gates) PausedAttempts(ctx context.Context, wf, step string) ([]PausedAttempt, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return nil, err
	}
	out, err := o.pausedAttempts(ctx, wf, step)
	if err != nil {
		return nil, Internal(err)
	}
	return out, nil
}

// pausedAttempts lists the paused attempts of a workflow's running runs —
// only running runs have paused steps, and only runs holding a slot run —
// and of the iterations their loops have in flight, nested ones included,
// since a breakpoint on a step inside a loop pauses it in each iteration.
func (o *Gates) pausedAttempts(ctx context.Context, wf, step string) ([]PausedAttempt, error) {
	holding, _, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return nil, err
	}
	out := []PausedAttempt{}
	for _, r := range holding {
		if err := o.pausedIn(ctx, wf, r.InstanceID, r.RunID, step, 0, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pausedIn adds the paused attempts of run run of wf/inst, and of its
// loops' running iterations, to out.
func (o *Gates) pausedIn(ctx context.Context, wf string, inst, run int64, step string, depth int, out *[]PausedAttempt) error {
	rec, _, err := o.store.Runs.LoadRun(ctx, wf, inst, run)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := decodeState(rec)
	if err != nil {
		return err
	}
	for _, s := range st.Steps {
		if s.Status == model.StepPaused && (step == "" || s.StepID == step) {
			*out = append(*out, PausedAttempt{WorkflowID: wf, Version: st.WorkflowVersion, Instance: st.InstanceID,
				Run: st.RunID, StepID: s.StepID, Attempt: s.Attempt})
		}
		if s.Loop == nil || s.Status != model.StepRunning || depth >= model.WorkflowDepthLimit {
			continue
		}
		for _, idx := range s.Loop.Running {
			it, err := o.store.Instances.GetInstance(ctx, s.Loop.WorkflowID, idx+1)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := o.pausedIn(ctx, s.Loop.WorkflowID, idx+1, it.RunID, step, depth+1, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResumeAttempt resumes one paused step attempt. The attempt must be the
// step's current one and PAUSED.
func (o *Actions) ResumeAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*InstanceView, error) {
	_, st, err := o.runState(ctx, wf, inst, run)
	if err != nil {
		return nil, err
	}
	s := st.Step(step)
	if s == nil {
		return nil, NotFound("workflow %s instance %d has no step %s", wf, inst, step)
	}
	if s.Attempt != attempt {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"step %s of workflow %s instance %d run %d is at attempt %d, not %d", step, wf, inst, run, s.Attempt, attempt)}
	}
	return o.act(ctx, wf, inst, run, step, string(model.StepActionResume))
}

// PutTagPermit creates a tag permit or changes its limit. Tags starting
// with "maestro_" are the runtime's own.
func (o *Gates) PutTagPermit(ctx context.Context, tag string, maxAllowed int64) (*TagPermit, error) {
	if strings.HasPrefix(tag, InternalTagPrefix) {
		return nil, Invalid("invalid tag permit", fmt.Sprintf("tag: %q starts with the reserved prefix %q", tag, InternalTagPrefix))
	}
	p, err := o.store.Gates.PutTagPermit(ctx, tag, maxAllowed, o.now().UnixMilli())
	if err != nil {
		return nil, Internal(err)
	}
	return wakeAndView(ctx, o, p, o.permitView)
}

// GetTagPermit returns a tag permit with its current use.
func (o *Gates) GetTagPermit(ctx context.Context, tag string) (*TagPermit, error) {
	p, err := o.store.Gates.GetTagPermit(ctx, tag)
	if err != nil {
		return nil, notFoundOr(err, "no tag permit for tag %q", tag)
	}
	return o.permitView(p), nil
}

// DeleteTagPermit removes a tag permit; the steps waiting on it go on.
func (o *Gates) DeleteTagPermit(ctx context.Context, tag string) (*TagPermit, error) {
	if strings.HasPrefix(tag, InternalTagPrefix) {
		return nil, Invalid("invalid tag permit", fmt.Sprintf("tag: %q is managed through the workflow's step_concurrency", tag))
	}
	p, err := o.store.Gates.DeleteTagPermit(ctx, tag)
	if err != nil {
		return nil, notFoundOr(err, "no tag permit for tag %q", tag)
	}
	return wakeAndView(ctx, o, p, o.permitView)
}

// wakeAndView wakes the runs waiting on p, a permit or job queue a write
// just changed (a raised limit lets waiting steps start; a removed one lets
// them go on, or fail), and returns p's view.
func wakeAndView[V any](ctx context.Context, o *Gates, p *store.TagPermit, view func(*store.TagPermit) *V) (*V, error) {
	if err := o.wakeWaiters(ctx, p); err != nil {
		return nil, Internal(err)
	}
	return view(p), nil
}

// wakeWaiters puts a continue event into every run waiting on p.
func (o *Gates) wakeWaiters(ctx context.Context, p *store.TagPermit) error {
	seen := map[string]bool{}
	order := oldestFirst(p.Waiters)
	if p.Queue != nil {
		order = admissionOrder(p.Waiters, p.Queue.AgingMillis, o.now().UnixMilli())
	}
	for _, k := range order {
		h, err := store.ParsePermitKey(k)
		if err != nil {
			return err
		}
		rk := fmt.Sprintf("%s#%d#%d", h.WorkflowID, h.InstanceID, h.RunID)
		if seen[rk] {
			continue
		}
		seen[rk] = true
		ev := store.Event{ID: permitsEventID(o.now().UnixMilli()), Body: mustJSON(engine.Continue{})}
		if err := o.store.Runs.PutEvent(ctx, h.WorkflowID, h.InstanceID, h.RunID, ev); err != nil {
			return err
		}
	}
	return nil
}

// syncStepConcurrency keeps the internal permit of a workflow in line with
// its properties' step_concurrency: set, it is the permit's limit; unset,
// there is no permit (no limit).
func (o *Gates) syncStepConcurrency(ctx context.Context, wf string, props []byte) error {
	var p struct {
		StepConcurrency *int64 `json:"step_concurrency"`
	}
	if len(props) > 0 {
		if err := json.Unmarshal(props, &p); err != nil {
			return fmt.Errorf("decode properties of %s: %w", wf, err)
		}
	}
	tag := workflowTag(wf)
	if p.StepConcurrency == nil {
		old, err := o.store.Gates.DeleteTagPermit(ctx, tag)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return o.wakeWaiters(ctx, old)
	}
	cur, err := o.store.Gates.GetTagPermit(ctx, tag)
	if err == nil && cur.MaxAllowed == *p.StepConcurrency {
		return nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	np, err := o.store.Gates.PutTagPermit(ctx, tag, *p.StepConcurrency, o.now().UnixMilli())
	if err != nil {
		return err
	}
	return o.wakeWaiters(ctx, np)
}

// permitView counts the holders whose lease has not expired.
func (o *Gates) permitView(p *store.TagPermit) *TagPermit {
	held, now := 0, o.now().UnixMilli()
	for _, exp := range p.Holders {
		if exp >= now {
			held++
		}
	}
	return &TagPermit{Tag: p.Tag, MaxAllowed: p.MaxAllowed, Held: held, Waiting: len(p.Waiters),
		CreateTime: p.CreateTime, ModifyTime: p.ModifyTime, ExtraInfo: extraInfoOf(p.ExtraInfo)}
}
