package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Callbacks (Step Functions' .waitForTaskToken).
//
// A worker may hand a step attempt to an external system with a task token
// instead of returning its outcome: a Callback step, a Lambda step invoked
// asynchronously. It then reports TaskWaiting; the attempt stays RUNNING
// until the token's holder ends it (a StepFinished the API puts in the
// run's inbox), the step's timeout fires or, when the step sets the
// heartbeat_timeout param, no TaskHeartbeat arrives for that long: the
// attempt then fails TIMEOUT_FAILED, retried per timeout_retry_limit, then
// TIMED_OUT.

// ParamHeartbeatTimeout is the step param that bounds the time between a
// waiting attempt's heartbeats: seconds, or a duration such as "5m".
const ParamHeartbeatTimeout = "heartbeat_timeout"

// PurposeHeartbeat checks a waiting attempt's heartbeats.
const PurposeHeartbeat TimerPurpose = "heartbeat"

// Event kinds of callbacks.
const (
	KindTaskWaiting   EventKind = "task_waiting"
	KindTaskHeartbeat EventKind = "task_heartbeat"
)

// TaskWaiting reports that a worker handed a step attempt to an external
// system, which ends it through its task token.
type TaskWaiting struct {
	StepID  string `json:"step_id"`
	Attempt int64  `json:"step_attempt_id"`
	// At is when the attempt was handed over (unix ms, the worker's clock).
	At int64 `json:"at"`
	// Target names where the token went (a topic, a queue, a function),
	// for the timeline.
	Target string `json:"target,omitempty"`
	// Job names the external job the attempt is now ("ecs:<task arn>",
	// "batch:<job id>"), empty for none: an attempt that ends otherwise
	// than by the job's own end cancels it (CancelJob).
	Job string `json:"job,omitempty"`
}

// KindCancelJob tags the JSON form of a CancelJob command.
const KindCancelJob CommandKind = "cancel_job"

// CancelJob asks the step type's runner to stop an external job whose
// attempt ended otherwise than by the job's own end (stopped, killed,
// timed out, its run ended).
type CancelJob struct {
	StepID   string         `json:"step_id"`
	Attempt  int64          `json:"step_attempt_id"`
	StepType model.StepType `json:"step_type"`
	Job      string         `json:"job"`
	// Reason says why, for the job's records.
	Reason string `json:"reason,omitempty"`
}

// Kind returns KindCancelJob.
func (CancelJob) Kind() CommandKind { return KindCancelJob }

func (CancelJob) isCommand() {}

// MarshalJSON writes the command with its "kind".
func (c CancelJob) MarshalJSON() ([]byte, error) {
	type plain CancelJob
	return withKind(c.Kind(), plain(c))
}

// cancelJob cancels step i's external job as its attempt leaves RUNNING
// for status to; the job's own end (StepFinished) clears the job first.
func (d *decider) cancelJob(i int, to model.StepStatus, msg string) {
	s := &d.st.Steps[i]
	if s.Job == "" || to == model.StepRunning {
		return
	}
	step := d.g.nodes[i].step
	d.out.Commands = append(d.out.Commands, CancelJob{StepID: s.StepID, Attempt: s.Attempt, StepType: step.Type, Job: s.Job,
		Reason: orDefault(msg, string(to))})
	s.Job = ""
}

// TaskHeartbeat reports that the holder of a waiting attempt's task token
// said it is still at work.
type TaskHeartbeat struct {
	StepID  string `json:"step_id"`
	Attempt int64  `json:"step_attempt_id"`
	// At is when the heartbeat arrived (unix ms).
	At int64 `json:"at"`
}

// Kind returns KindTaskWaiting.
func (TaskWaiting) Kind() EventKind { return KindTaskWaiting }

// Kind returns KindTaskHeartbeat.
func (TaskHeartbeat) Kind() EventKind { return KindTaskHeartbeat }

func (TaskWaiting) isEvent()   {}
func (TaskHeartbeat) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e TaskWaiting) MarshalJSON() ([]byte, error) {
	type plain TaskWaiting
	return withKind(e.Kind(), plain(e))
}

// MarshalJSON writes the event with its "kind".
func (e TaskHeartbeat) MarshalJSON() ([]byte, error) {
	type plain TaskHeartbeat
	return withKind(e.Kind(), plain(e))
}

// HeartbeatTimeout returns the heartbeat_timeout a step's params set: ok is
// false when they set none; err reports a value that is not a duration in
// (0, 120 days].
func HeartbeatTimeout(params Values) (t time.Duration, ok bool, err error) {
	v, set := params[ParamHeartbeatTimeout]
	if !set || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int64:
		t = time.Duration(x) * time.Second
	case float64:
		t = time.Duration(x * float64(time.Second))
	case string:
		if t, err = model.ParseDuration(x); err != nil {
			return 0, true, fmt.Errorf("param %s: %w", ParamHeartbeatTimeout, err)
		}
	default:
		return 0, true, fmt.Errorf("param %s: %T is not a duration", ParamHeartbeatTimeout, v)
	}
	if t <= 0 || t > model.MaxTimeout {
		return 0, true, fmt.Errorf("param %s: %s is outside (0, %s]", ParamHeartbeatTimeout, t, model.MaxTimeout)
	}
	return t, true, nil
}

// checkHeartbeatTimeout fails step i when its heartbeat_timeout param is
// set but invalid; it reports whether the step may go on.
func (d *decider) checkHeartbeatTimeout(i int) bool {
	if _, _, err := HeartbeatTimeout(d.st.Steps[i].Params); err != nil {
		d.endStep(i, model.StepFatallyFailed, err.Error())
		return false
	}
	return true
}

// taskWaiting records that the current attempt waits for its task token
// and arms its heartbeat check.
func (d *decider) taskWaiting(e TaskWaiting) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil {
		return err
	}
	if !ok {
		// The attempt ended (stopped, timed out, its run ended) while its
		// worker handed it over: the job it started has no step left.
		if j, known := d.g.index[e.StepID]; known && e.Job != "" {
			d.out.Commands = append(d.out.Commands, CancelJob{StepID: e.StepID, Attempt: e.Attempt,
				StepType: d.g.nodes[j].step.Type, Job: e.Job, Reason: "its step attempt ended before the job started"})
		}
		return nil
	}
	s := &d.st.Steps[i]
	if s.WaitingSince != 0 {
		return nil // a duplicate
	}
	at := e.At
	if at < s.StartTime || at > d.now {
		at = d.now
	}
	s.WaitingSince, s.Job = at, e.Job
	msg := "waiting for its task token"
	switch {
	case e.Job != "":
		msg = "running as " + orDefault(e.Target, e.Job)
	case e.Target != "":
		msg += " (sent to " + e.Target + ")"
	}
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{Time: at, StepID: s.StepID, Attempt: s.Attempt, Status: string(s.Status), Message: msg})
	if t, ok := d.heartbeatTimer(s); ok {
		d.out.Commands = append(d.out.Commands, t)
	}
	return nil
}

// taskHeartbeat records a waiting attempt's heartbeat.
func (d *decider) taskHeartbeat(e TaskHeartbeat) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err
	}
	s := &d.st.Steps[i]
	at := min(e.At, d.now)
	if at > s.HeartbeatAt {
		s.HeartbeatAt = at
	}
	return nil
}

// heartbeatTimer is the timer that checks waiting attempt s's heartbeats:
// due heartbeat_timeout after it began waiting or last beat. ok is false
// when s is not waiting or sets no heartbeat_timeout.
func (d *decider) heartbeatTimer(s *StepState) (StartTimer, bool) {
	if s.WaitingSince == 0 {
		return StartTimer{}, false
	}
	t, ok, err := HeartbeatTimeout(s.Params)
	if err != nil || !ok {
		return StartTimer{}, false
	}
	last := max(s.WaitingSince, s.HeartbeatAt)
	return StartTimer{StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeHeartbeat,
		FireAt: time.UnixMilli(last + t.Milliseconds()).UTC()}, true
}

// heartbeatDue fails a waiting attempt whose holder has not beaten within
// its heartbeat_timeout; an attempt that beat since is checked again later.
func (d *decider) heartbeatDue(e TimerFired) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err
	}
	s := &d.st.Steps[i]
	t, ok := d.heartbeatTimer(s)
	if !ok {
		return nil
	}
	if t.FireAt.UnixMilli() > d.now {
		d.out.Commands = append(d.out.Commands, t)
		return nil
	}
	timeout, _, _ := HeartbeatTimeout(s.Params)
	d.startCounting()
	d.fail(i, model.StepTimeoutFailed, "no heartbeat for "+formatSeconds(timeout)+" ("+ParamHeartbeatTimeout+")")
	return d.advance()
}

// formatSeconds writes t as whole seconds ("300s").
func formatSeconds(t time.Duration) string {
	return strconv.FormatInt(int64(t/time.Second), 10) + "s"
}
