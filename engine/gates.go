package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Breakpoint pauses matching step attempts before they evaluate their
// params (Maestro's step breakpoint). Zero fields match every value.
type Breakpoint struct {
	StepID string `json:"step_id"`
	// Version, Instance, Run and Attempt narrow the match to one workflow
	// version, instance, run or step attempt; 0 matches all.
	Version  int64 `json:"workflow_version,omitempty"`
	Instance int64 `json:"workflow_instance_id,omitempty"`
	Run      int64 `json:"workflow_run,omitempty"`
	Attempt  int64 `json:"step_attempt_id,omitempty"`
}

// Matches reports whether b holds attempt of step stepID in run st.
func (b Breakpoint) Matches(st *Instance, stepID string, attempt int64) bool {
	return b.StepID == stepID &&
		(b.Version == 0 || b.Version == st.WorkflowVersion) &&
		(b.Instance == 0 || b.Instance == st.InstanceID) &&
		(b.Run == 0 || b.Run == st.RunID) &&
		(b.Attempt == 0 || b.Attempt == attempt)
}

// PermitRequest asks for the permits one step attempt needs to start.
type PermitRequest struct {
	StepID  string
	Attempt int64
	// Tags are the step's tag names; the Permits implementation decides
	// which of them (and which internal tags) carry a limit.
	Tags []string
	// Lease is how long the attempt may hold its permits: its timeout. A
	// holder that never releases (a lost run) frees them when it expires.
	Lease time.Duration
	// Queue is what the attempt asks of a job queue (the job_queue step
	// param), nil for none.
	Queue *QueueDemand
	// Enqueue asks only to join Queue's waiters, not to be admitted: a
	// decision that starts several steps of one queue admits them after
	// all joined, in the queue's order.
	Enqueue bool
}

// PermitAnswer is the answer to a PermitRequest.
type PermitAnswer struct {
	// OK says the attempt holds its permits now; Tags are those it holds
	// or, without OK, those it waits on.
	OK   bool
	Tags []string
	// Why says why it waits (for the timeline), when it does.
	Why string
	// Err is a request that can never be granted (a job queue that does
	// not exist, a demand larger than its capacity): the attempt fails.
	Err error
}

// Permits hands out the tag permits that bound how many steps run at once
// across runs (Maestro's tag permits and step_concurrency). The engine
// stays pure: an implementation answers from a snapshot that its caller
// commits with the decision, conditionally, and retries on a conflict.
type Permits interface {
	// Acquire takes one permit of every limited tag for the attempt, and
	// its demand of a job queue, all or none (see PermitAnswer).
	Acquire(req PermitRequest) PermitAnswer
	// Release gives back an attempt's permits (held) or stops it waiting
	// for them (!held).
	Release(stepID string, attempt int64, tags []string, held bool)
}

// WithBreakpoints makes step attempts matching any of bps pause.
func WithBreakpoints(bps []Breakpoint) Option {
	return func(d *decider) { d.breakpoints = bps }
}

// BreakpointReader reads the breakpoints a decision meets (an
// implementation that cannot read keeps its error for its caller, which
// then does not commit the decision).
type BreakpointReader interface {
	Breakpoints() []Breakpoint
}

// WithBreakpointReader is WithBreakpoints with the breakpoints read from r
// when a step attempt first starts: a decision that starts none (a run's
// last step ending) reads none. It replaces WithBreakpoints' list.
func WithBreakpointReader(r BreakpointReader) Option {
	return func(d *decider) { d.bpReader = r }
}

// WithPermits makes steps with work acquire tag permits from p before they
// start; without it only instance_step_concurrency bounds them.
func WithPermits(p Permits) Option {
	return func(d *decider) { d.permits = p }
}

// breakpointHolds reports whether a breakpoint pauses step i's attempt.
func (d *decider) breakpointHolds(i int) bool {
	if d.bpReader != nil {
		d.breakpoints, d.bpReader = d.bpReader.Breakpoints(), nil
	}
	s := &d.st.Steps[i]
	for _, b := range d.breakpoints {
		if b.Matches(d.st, s.StepID, s.Attempt) {
			return true
		}
	}
	return false
}

// instanceStepLimit is the run's instance_step_concurrency.
func (d *decider) instanceStepLimit() int {
	if n := d.g.workflow.InstanceStepConcurrency; n != nil && *n > 0 {
		return int(*n)
	}
	return model.DefaultInstanceStepConcurrency
}

// occupying reports whether a step with work holds one of the run's
// instance_step_concurrency slots: it is past its permits and not ended.
func occupying(s *StepState) bool {
	switch s.Status {
	case model.StepStarting, model.StepRunning, model.StepFinishing:
		return true
	}
	return false
}

// acquire lets step i (params evaluated) past WAITING_FOR_PERMITS: it
// reports true when the step may start now. Steps without work (NoOp,
// Join) never wait. A step that must wait is left WAITING_FOR_PERMITS with
// the tags it waits on; advance retries it.
func (d *decider) acquire(i int) bool {
	step := d.g.nodes[i].step
	if isNoWork(step) {
		return true
	}
	s := &d.st.Steps[i]
	running := 0
	for j := range d.st.Steps {
		if j != i && occupying(&d.st.Steps[j]) && !isNoWork(d.g.nodes[j].step) {
			running++
		}
	}
	wait := func(tags []string, why string) bool {
		if s.Status != model.StepWaitingForPermits {
			s.Permits = tags
			d.setStepStatus(i, model.StepWaitingForPermits, why)
		} else if !slices.Equal(s.Permits, tags) {
			if d.permits != nil && len(s.Permits) > 0 {
				d.permits.Release(s.StepID, s.Attempt, s.Permits, false)
			}
			s.Permits = tags
		}
		return false
	}
	if running >= d.instanceStepLimit() {
		return wait(s.Permits, "waiting: instance_step_concurrency reached")
	}
	demand, err := queueDemand(s.Params)
	if err != nil {
		d.endStep(i, model.StepFatallyFailed, err.Error())
		return false
	}
	if d.permits == nil {
		if demand != nil {
			d.endStep(i, model.StepFatallyFailed, "param "+ParamJobQueue+": this runtime has no job queues")
			return false
		}
		return true
	}
	first := s.Status != model.StepWaitingForPermits
	if !first && len(s.Permits) > 0 {
		// Stop waiting on the old set before asking again: the answer
		// names the tags to wait on now.
		d.permits.Release(s.StepID, s.Attempt, s.Permits, false)
		s.Permits = nil
	}
	ans := d.permits.Acquire(PermitRequest{
		StepID: s.StepID, Attempt: s.Attempt, Tags: d.permitTags(stepTags(step)), Lease: d.stepLease(i),
		Queue: demand, Enqueue: demand != nil && first,
	})
	if ans.Err != nil {
		d.endStep(i, model.StepFatallyFailed, ans.Err.Error())
		return false
	}
	if !ans.OK {
		if demand != nil && first {
			d.enqueued = true
		}
		s.Permits = nil
		why := ans.Why
		if why == "" {
			why = "waiting for tag permits: " + joinTags(ans.Tags)
		}
		return wait(ans.Tags, why)
	}
	s.Permits = ans.Tags
	return true
}

// retryWaiting starts the steps waiting for permits that can now get them:
// in definition order, and again while one started (a job queue admits its
// waiters in its own order, so a step passed over may be next).
func (d *decider) retryWaiting() {
	for progress := true; progress; {
		progress = false
		for i := range d.st.Steps {
			if d.st.Status != model.WorkflowInProgress {
				return
			}
			if d.st.Steps[i].Status != model.StepWaitingForPermits {
				continue
			}
			if d.maxStarts > 0 && d.starts >= d.maxStarts {
				d.out.Continue = true
				return
			}
			if d.acquire(i) {
				d.starts++
				d.launch(i)
				progress = true
			}
		}
	}
}

// releasePermits returns step i's permits, or withdraws its wait, as its
// attempt leaves the status that needed them.
func (d *decider) releasePermits(i int, from model.StepStatus) {
	s := &d.st.Steps[i]
	if len(s.Permits) == 0 {
		return
	}
	if d.permits != nil {
		d.permits.Release(s.StepID, s.Attempt, s.Permits, from != model.StepWaitingForPermits)
	}
	s.Permits = nil
}

// stepLease is how long step i's attempt may hold permits: its timeout, or
// the default timeout.
func (d *decider) stepLease(i int) time.Duration {
	s := &d.st.Steps[i]
	t, ok, err := d.timeoutOf(d.g.nodes[i].step.Timeout, d.stepLookup(s))
	if err != nil || !ok {
		return model.DefaultTimeout
	}
	return t
}

// stepLookup resolves names against a step's params, then the run's.
func (d *decider) stepLookup(s *StepState) func(string) (any, bool) {
	return func(name string) (any, bool) {
		if v, ok := s.Params[name]; ok {
			return v, true
		}
		v, ok := d.st.Params[name]
		return v, ok
	}
}

func stepTags(s *model.Step) []string {
	if len(s.Tags) == 0 {
		return nil
	}
	out := make([]string, len(s.Tags))
	for i, t := range s.Tags {
		out[i] = t.Name
	}
	return out
}

func joinTags(tags []string) string {
	if len(tags) == 0 {
		return "(none)"
	}
	return strings.Join(tags, ", ")
}

// resumePaused continues a PAUSED step attempt (the RESUME action).
func (d *decider) resumePaused(i int) {
	d.starts++
	if d.gateSignals(i) {
		d.evaluate(i)
	}
}

// HasWork reports whether step s has work: it is neither NoOp nor Join
// (a foreach, while or subworkflow step has work).
func HasWork(s *model.Step) bool { return !isNoWork(s) }

// HasWork reports whether any step of the graph has work (is neither NoOp
// nor Join): only such steps take permits.
func (g *Graph) HasWork() bool {
	for i := range g.nodes {
		if !isNoWork(g.nodes[i].step) {
			return true
		}
	}
	return false
}
