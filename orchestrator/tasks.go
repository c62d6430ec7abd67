package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// Task tokens (Step Functions' .waitForTaskToken; see engine's callbacks).
//
// A CallbackRunner's step is not run by its worker: the worker hands it, with a
// fresh task token, to an external system (a queue, a topic, a Lambda
// function invoked asynchronously), which ends it through the token
// (CompleteTask): success with outputs, failure (the retry policy
// applies), or heartbeats while it works. The worker records the token's
// hash (store.PutTaskToken) before it hands the token over, so that a
// system that answers at once finds it; then it marks the attempt as
// waiting and tells the run (store.WaitForTask), so that no later delivery
// of the step's work hands it over again. A worker that dies between the
// two leaves the attempt claimed: once the claim's lease ends, a
// redelivery hands it over again with another token — at least once, as
// Step Functions does; the first token used ends the attempt.

// CallbackRunner is a StepRunner whose steps, or some of them, are handed to
// an external system with a task token instead of run.
type CallbackRunner interface {
	StepRunner
	// Waits reports whether m's attempt is handed over (Dispatch) rather
	// than run (RunStep).
	Waits(m StepWork) bool
	// Dispatch hands m's attempt with token to an external system and
	// says where it went. A non-nil res ends the attempt at once instead
	// (the system refused it); an error is a platform error.
	Dispatch(ctx context.Context, m StepWork, token string) (h Handover, res *engine.StepFinished, err error)
}

// Handover says where a CallbackRunner handed a step attempt.
type Handover struct {
	// Target names where the token went, for the step's timeline.
	Target string
	// Job names the external job the attempt now is, "<kind>:<id>" (a
	// JobRunner's), empty for none: its end arrives as a job event, and an
	// attempt that ends otherwise cancels it.
	Job string
}

// taskTokenBytes is the size of a task token's random part: 256 bits, in
// 43 characters of unpadded base64url.
const taskTokenBytes = 32

// TaskTokenLength is the length of a task token:
// base64.RawURLEncoding.EncodedLen(taskTokenBytes).
const TaskTokenLength = (taskTokenBytes*8 + 5) / 6

func newTaskToken() (string, error) {
	b := make([]byte, taskTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("task token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// callbackRunnerFor returns the CallbackRunner that hands m's attempt over, if any.
func callbackRunnerFor(m StepWork, runners map[model.StepType]StepRunner) (CallbackRunner, bool) {
	if m.StepKind != model.KindStep {
		return nil, false
	}
	d, ok := runners[m.StepType].(CallbackRunner)
	if !ok || !d.Waits(m) {
		return nil, false
	}
	return d, true
}

// dispatchStep hands claimed attempt m (claimed with claim) to its external
// system with a new task token.
func (o *Worker) dispatchStep(ctx context.Context, m StepWork, d CallbackRunner, claim string) error {
	ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
	m, refused, err := o.templated(ctx, m)
	if err != nil {
		return err
	}
	if refused != nil {
		refused.FinishedAt = o.now().UnixMilli()
		ev := store.Event{ID: outcomeEventID(m.StepID, m.Attempt), Body: mustJSON(*refused), Covered: true}
		return o.handResult(ctx, m, claim, *refused, ev, nil, m.Apart)
	}
	token, err := newTaskToken()
	if err != nil {
		return err
	}
	hash := store.HashTaskToken(token)
	if err := o.store.Tasks.PutTaskToken(ctx, hash, ref); err != nil {
		return err
	}
	h, res, err := d.Dispatch(ctx, m, token)
	if err != nil {
		res = &engine.StepFinished{Outcome: engine.OutcomePlatformError, Message: err.Error()}
	}
	if res != nil {
		res.StepID, res.Attempt = m.StepID, m.Attempt
		if res.FinishedAt == 0 {
			res.FinishedAt = o.now().UnixMilli()
		}
		ev := store.Event{ID: outcomeEventID(m.StepID, m.Attempt), Body: mustJSON(*res), Covered: true}
		return o.handResult(ctx, m, claim, *res, ev, nil, m.Apart)
	}
	ev := store.Event{ID: taskWaitingEventID(m.StepID, m.Attempt), Covered: true, Body: mustJSON(engine.TaskWaiting{
		StepID: m.StepID, Attempt: m.Attempt, At: o.now().UnixMilli(), Target: h.Target, Job: h.Job,
	})}
	err = o.store.Tasks.WaitForTask(ctx, ref, claim, hash, h.Job, ev)
	if errors.Is(err, store.ErrClaimLost) {
		// Ended meanwhile (its token's holder was quick, or the step was
		// stopped), or another worker took it after this one's lease. A
		// job this worker launched is then no attempt's: nothing would
		// cancel it on a stop, so it is cancelled now (a no-op for a job
		// that already ended).
		o.log.InfoContext(ctx, "a handed-over step attempt is no longer this worker's", "attempt", ref.String())
		if jr, ok := d.(JobRunner); ok && h.Job != "" {
			if err := jr.CancelJob(ctx, h.Job, "its step attempt ended, or another delivery launched it again, before this launch was recorded"); err != nil {
				o.log.ErrorContext(ctx, "cancel an unrecorded job", "attempt", ref.String(), "job", h.Job, "err", err)
			}
		}
		return nil
	}
	return err
}

// Task actions (POST /api/v3/tasks/{action} with the token in the body, or
// POST /api/v3/tasks/{token}/{action}).
const (
	TaskSuccess   = "success"
	TaskFailure   = "failure"
	TaskHeartbeat = "heartbeat"
)

// WellFormedTaskToken reports whether token has the shape of a task token:
// TaskTokenLength characters of unpadded base64url. It says nothing of
// whether the token was handed out.
func WellFormedTaskToken(token string) bool {
	return len(token) == TaskTokenLength &&
		strings.Trim(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}

// TaskCompletion is what the holder of a task token reports.
type TaskCompletion struct {
	// Action is TaskSuccess, TaskFailure or TaskHeartbeat.
	Action string
	// Outputs are a success's output params.
	Outputs map[string]any
	// Signals are a success's dynamic signal outputs (a job's
	// maestro_dynamic_output artifact), announced as it ends.
	Signals []engine.DynamicSignal
	// Error is a failure's kind: USER_ERROR (retried per the step's retry
	// policy), PLATFORM_ERROR (retried per its platform retries) or
	// FATAL_ERROR (not retried); Message says what failed.
	Error   engine.Outcome
	Message string
	// Compute is what the job's compute was billed for (a JobRunner's
	// reading of its end); a token holder's report over the API has none.
	Compute pricing.Usage
}

// TaskView says which step attempt a task token belongs to and where it
// stands after the report.
type TaskView struct {
	WorkflowID string           `json:"workflow_id"`
	InstanceID int64            `json:"workflow_instance_id"`
	RunID      int64            `json:"workflow_run_id"`
	StepID     string           `json:"step_id"`
	Attempt    int64            `json:"step_attempt_id"`
	Action     string           `json:"action"`
	Status     model.StepStatus `json:"status"`
	// Recorded is false for a heartbeat of a step that sets no
	// heartbeat_timeout: there is nothing to record.
	Recorded bool `json:"recorded"`
}

// CompleteTask applies a task token holder's report to the step attempt
// the token belongs to. A token that is malformed is a 400, one that is
// unknown a 404; one already used, or whose attempt is no longer running,
// is a 409, and nothing changes.
func (o *Actions) CompleteTask(ctx context.Context, token string, c TaskCompletion) (*TaskView, error) {
	if !WellFormedTaskToken(token) {
		return nil, Invalid("invalid task token", fmt.Sprintf("token: must be %d characters of base64url", TaskTokenLength))
	}
	switch c.Action {
	case TaskSuccess, TaskHeartbeat:
	case TaskFailure:
		switch c.Error {
		case "":
			c.Error = engine.OutcomeUserError
		case engine.OutcomeUserError, engine.OutcomePlatformError, engine.OutcomeFatalError:
		default:
			return nil, Invalid("invalid task failure", fmt.Sprintf("error: must be USER_ERROR, PLATFORM_ERROR or FATAL_ERROR, not %q", c.Error))
		}
	default:
		return nil, NotFound("no task action %q (want success, failure or heartbeat)", c.Action)
	}
	if err := engine.CheckOutputs(c.Outputs); err != nil {
		return nil, Invalid("invalid task outputs", "outputs: "+err.Error())
	}
	c.Compute = nil // only a job's own end reports what it was billed for
	if c.Action == TaskFailure {
		c.Message = "task failed: " + c.Message
		if c.Message == "task failed: " {
			c.Message += string(c.Error)
		}
	}
	return o.completeTask(ctx, store.HashTaskToken(token), c)
}

// completeTask applies report c to the step attempt of the task token
// hashed as hash (see CompleteTask).
func (o *Actions) completeTask(ctx context.Context, hash string, c TaskCompletion) (*TaskView, error) {
	tt, err := o.store.Tasks.GetTaskToken(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFound("unknown task token")
	}
	if err != nil {
		return nil, Internal(err)
	}
	ref := tt.Ref
	view := &TaskView{WorkflowID: ref.WorkflowID, InstanceID: ref.InstanceID, RunID: ref.RunID, StepID: ref.StepID, Attempt: ref.Attempt, Action: c.Action}
	if tt.Used != 0 {
		return nil, Conflict("the task token was already used: %s reported at %s", tt.Result, time.UnixMilli(tt.Used).UTC().Format(time.RFC3339Nano))
	}
	_, st, err := o.runState(ctx, ref.WorkflowID, ref.InstanceID, ref.RunID)
	if err != nil {
		return nil, err
	}
	s := st.Step(ref.StepID)
	if s == nil || s.Attempt != ref.Attempt || s.Status != model.StepRunning || st.Status != model.WorkflowInProgress {
		status, attempt := model.StepStatus("NOT_CREATED"), int64(0)
		if s != nil {
			status, attempt = s.Status, s.Attempt
		}
		return nil, Conflict("the task token's step attempt no longer runs: step %s of workflow %s instance %d run %d is at attempt %d, %s (run %s)",
			ref.StepID, ref.WorkflowID, ref.InstanceID, ref.RunID, attempt, status, st.Status)
	}
	now := o.now()
	if c.Action == TaskHeartbeat {
		view.Status = s.Status
		if _, ok, _ := engine.HeartbeatTimeout(s.Params); !ok {
			return view, nil
		}
		ev := store.Event{ID: heartbeatEventID(o.newUUID()), Body: mustJSON(engine.TaskHeartbeat{StepID: ref.StepID, Attempt: ref.Attempt, At: now.UnixMilli()})}
		if err := o.store.Runs.PutEvent(ctx, ref.WorkflowID, ref.InstanceID, ref.RunID, ev); err != nil {
			return nil, Internal(err)
		}
		view.Recorded = true
		return view, nil
	}
	res := engine.StepFinished{StepID: ref.StepID, Attempt: ref.Attempt, Outcome: engine.OutcomeSucceeded, Outputs: c.Outputs,
		Signals: c.Signals, Message: c.Message, FinishedAt: now.UnixMilli(), Compute: c.Compute}
	if c.Action == TaskFailure {
		res.Outcome, res.Outputs, res.Signals = c.Error, nil, nil
		if res.Message == "" {
			res.Message = string(c.Error)
		}
	}
	ev := store.Event{ID: taskReportEventID(ref.StepID, ref.Attempt), Body: mustJSON(res)}
	err = o.store.Tasks.UseTaskToken(ctx, hash, c.Action, ref, ev)
	if errors.Is(err, store.ErrTaskTokenUsed) {
		return nil, Conflict("the task token was already used")
	}
	if err != nil {
		return nil, Internal(err)
	}
	view.Recorded = true
	w := store.Wake{WorkflowID: ref.WorkflowID, InstanceID: ref.InstanceID, RunID: ref.RunID}
	if _, err := o.rounds.Process(ctx, w); err != nil {
		o.log.WarnContext(ctx, "inline decision of a task's report failed; the decision queue will retry", "workflow_id", ref.WorkflowID,
			"instance_id", ref.InstanceID, "error", err)
	}
	view.Status = model.StepRunning
	if _, st, err := o.runState(ctx, ref.WorkflowID, ref.InstanceID, ref.RunID); err == nil {
		if s := st.Step(ref.StepID); s != nil && s.Attempt == ref.Attempt {
			view.Status = s.Status
		}
	}
	return view, nil
}
