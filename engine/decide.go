package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// Decide is the engine's decider: given a compiled graph, an instance's state,
// an event and the current time it returns the instance's new state, the
// commands the change causes, and the timeline and transitions describing it.
//
// Decide is pure and deterministic: it never modifies st, reads no clock but
// now, uses no randomness and iterates in definition order, so the same
// (graph, state, event, now) always gives the same decision. It is eager: every
// step that can progress without waiting (NoOp steps, unsatisfied steps, their
// successors) is advanced within the same decision.
//
// Events that do not apply to the current state (a second StartRun, a
// StepFinished or TimerFired for an attempt that is not the current RUNNING
// one, anything after the instance ended) yield a decision without commands,
// timeline or transitions whose State equals st. Errors are reserved for
// misuse: nil arguments, a state that does not belong to the graph, unknown
// steps, outcomes or timer purposes.
//
// Options bound the work of one decision (see WithMaxStarts); a decision cut
// short says so in Decision.Continue, and a Continue event resumes it.
func Decide(ctx context.Context, g *Graph, st *Instance, ev Event, now time.Time, opts ...Option) (*Decision, error) {
	if g == nil {
		return nil, errors.New("decide: nil graph")
	}
	if st == nil {
		return nil, errors.New("decide: nil instance state")
	}
	if ev == nil {
		return nil, errors.New("decide: nil event")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("decide: %w", err)
	}
	if !st.Status.Valid() {
		return nil, fmt.Errorf("decide: instance status %q is not a workflow status", st.Status)
	}
	d := newDecider(ctx, g, st.Clone(), now)
	for _, o := range opts {
		o(d)
	}
	if d.budget == nil {
		d.budget = expression.NewBudget(0, 0)
	}
	d.ctx = expression.WithBudget(d.ctx, d.budget)
	var err error
	switch ev.(type) {
	case Continue, *Continue:
		err = d.resume()
	case Abort:
		err = d.abort(ev.(Abort))
	default:
		if d.st.Ending != nil && d.st.Status == model.WorkflowInProgress {
			// The run is being ended: nothing else applies until it has.
			err = d.continueEnding()
			break
		}
		err = d.apply(ev)
	}
	if err == nil {
		d.drainChildStops()
	}
	if err == nil && d.loadErr != nil {
		// An expression saw no params where the store holds some: the
		// decision may be wrong, so none is returned.
		err = d.loadErr
	}
	if err != nil {
		return nil, fmt.Errorf("decide %s for %s instance %d run %d: %w", ev.Kind(), st.WorkflowID, st.InstanceID, st.RunID, err)
	}
	d.out.Spent = Spent{Starts: d.starts, LightStarts: d.lightTotal, Ends: d.ends}
	if d.lightStarts > 0 {
		d.out.Spent.Starts++
	}
	return d.out, nil
}

// apply dispatches an event other than Continue.
func (d *decider) apply(ev Event) error {
	var err error
	switch e := ev.(type) {
	case StartRun:
		err = d.startRun(e)
	case *StartRun:
		err = d.startRun(*e)
	case StepFinished:
		err = d.stepFinished(e)
	case *StepFinished:
		err = d.stepFinished(*e)
	case TimerFired:
		err = d.timerFired(e)
	case *TimerFired:
		err = d.timerFired(*e)
	case OutputData:
		err = d.outputData(e)
	case *OutputData:
		err = d.outputData(*e)
	case SignalArrived:
		err = d.signalArrived(e)
	case *SignalArrived:
		err = d.signalArrived(*e)
	case Action:
		err = d.act(e)
	case *Action:
		err = d.act(*e)
	case Redrive:
		err = d.redrive(e)
	case *Redrive:
		err = d.redrive(*e)
	case ChildEnded:
		err = d.childEnded(e)
	case *ChildEnded:
		err = d.childEnded(*e)
	case TaskWaiting:
		err = d.taskWaiting(e)
	case *TaskWaiting:
		err = d.taskWaiting(*e)
	case TaskHeartbeat:
		err = d.taskHeartbeat(e)
	case *TaskHeartbeat:
		err = d.taskHeartbeat(*e)
	case ChildStarted:
		err = d.childStarted(e)
	case *ChildStarted:
		err = d.childStarted(*e)
	default:
		err = fmt.Errorf("unsupported event %T", ev)
	}
	return err
}

// decider holds the working state of one Decide call.
type decider struct {
	ctx context.Context
	// budget bounds the expression work of the decision.
	budget *expression.Budget
	// runBytes is the JSON size of the run's evaluated params, -1 until
	// checkParamsSize first needs it.
	runBytes int64
	g        *Graph
	st       *Instance // the new state, changed in place
	now      int64     // unix ms
	out      *Decision

	// remaining counts each step's non-terminal predecessors; valid once
	// counting is true, after which every step reaching a terminal status
	// decrements its successors.
	remaining []int
	counting  bool
	queue     []int

	// condVars caches, per step, the variables its edge conditions see
	// (workflow params overridden by the step's params).
	condVars map[int]map[string]any
	// instance holds the fields params.getFromInstance reads; built on first
	// use.
	instance map[string]any
	// stepFn is d.getFromStep as a func value, allocated once.
	stepFn func(context.Context, string, string) (any, error)

	// maxEnds bounds the steps a run's ending ends in this decision (0 = no
	// bound); ends counts them.
	maxEnds, ends int
	// maxStarts bounds the steps started in this decision (0 = no bound);
	// starts counts them.
	maxStarts, starts int
	// enqueued is set when a step joined a job queue's waiters in this
	// decision: advance then admits the queue's waiters in its order.
	enqueued bool
	// iterationStarts, when set, is what one iteration of a loop step
	// counts against maxStarts (WithIterationStarts); strictStarts lets no
	// iteration past maxStarts, not even a first (WithStrictMaxStarts).
	iterationStarts func(*model.Step) int
	strictStarts    bool
	// lightPer, when above 1, makes the start of a step that runs on a
	// worker count 1/lightPer of a start (WithLightWorkerStarts);
	// lightStarts counts them toward the next.
	lightPer, lightStarts int
	// lightTotal counts every worker start that counted light.
	lightTotal int

	// breakpoints pause matching attempts; permits bounds steps across
	// runs (nil: no tag permits).
	breakpoints []Breakpoint
	// bpReader, when set, reads breakpoints when a step attempt first
	// needs them (WithBreakpointReader).
	bpReader BreakpointReader
	permits  Permits
	signals  Signals

	// paramsReader reads offloaded step params; loaded caches them per
	// step and loadErr is the first read that failed (the decision then
	// fails: its result may be wrong).
	paramsReader StepParams
	loaded       map[int]Values
	loadErr      error
	// childReader reads child runs' step params (getFromForeach,
	// getFromSubworkflow).
	childReader ChildParams
}

// Option tunes one Decide call.
type Option func(*decider)

// WithMaxStarts bounds how many steps one decision starts. Eager execution
// can otherwise start every step of a large NoOp DAG at once; the runtime
// bounds it so that a decision's writes fit in one DynamoDB transaction.
// When the bound stops a decision, Decision.Continue is set and the caller
// feeds a Continue event to go on.
func WithMaxStarts(n int) Option { return func(d *decider) { d.maxStarts = n } }

// WithStrictMaxStarts bounds the starts of one decision as WithMaxStarts
// does, n ≥ 1, without letting a first iteration through when it alone
// costs more than n (WithIterationStarts): a caller filling the rest of a
// transaction asks for nothing past it, and goes on with the Continue
// event the decision asks for.
func WithStrictMaxStarts(n int) Option {
	return func(d *decider) { d.maxStarts, d.strictStarts = max(n, 1), true }
}

// WithIterationStarts sets what starting one iteration of loop step s
// counts against WithMaxStarts: f(s), at least 1 (default 2, for the three
// items an iteration's creation writes). A caller that writes more for
// some iterations (an iteration born finished writes its whole run) says
// so here, so that a decision launches no more than its transaction holds.
func WithIterationStarts(f func(s *model.Step) int) Option {
	return func(d *decider) { d.iterationStarts = f }
}

// WithLightWorkerStarts makes the start of a step that runs on a worker
// (Graph.OnWorker) count 1/per of a start against WithMaxStarts: a caller
// whose commit writes no item for such a start (the worker's claim writes
// it) lets a decision start per times more of them — a fan-out of 250 Http
// steps in one commit rather than seven.
func WithLightWorkerStarts(per int) Option {
	return func(d *decider) { d.lightPer = max(per, 1) }
}

// WithMaxEnds bounds how many steps in flight one decision ends when the
// run ends early (stop, kill, workflow timeout, FAIL_IMMEDIATELY): each is a
// write, and a decision's writes must fit one DynamoDB transaction. Past the
// bound the state keeps the Ending, Decision.Continue is set, and the
// caller's Continue event (or any event) goes on with it.
func WithMaxEnds(n int) Option { return func(d *decider) { d.maxEnds = n } }

// StepParams reads the params (outputs applied) of a settled step attempt
// whose state holds none (StepState.Offloaded), from the attempt's item of
// run run. An error aborts the decision: Decide returns it.
type StepParams interface {
	StepParams(ctx context.Context, stepID string, attempt, run int64) (Values, error)
}

// WithStepParams gives the decision the reader of offloaded step params.
// Without it, an expression that needs them fails the decision.
func WithStepParams(p StepParams) Option { return func(d *decider) { d.paramsReader = p } }

// WithBudget makes the decision's expressions charge b (one decision, one
// budget). Without it each decision gets a default expression.Budget: at
// most DefaultBudgetCPU units of expression work, so a decision spends at
// most about half a second of CPU on expressions whatever the definition;
// an expression past it fails its step with an error naming the budget.
func WithBudget(b *expression.Budget) Option { return func(d *decider) { d.budget = b } }

// resume continues a decision that WithMaxStarts cut short.
func (d *decider) resume() error {
	if d.st.Status != model.WorkflowInProgress {
		return nil
	}
	if d.st.Ending != nil {
		return d.continueEnding()
	}
	if err := d.checkSteps(); err != nil {
		return err
	}
	d.startCounting()
	d.resumeLoops()
	return d.advance()
}

func newDecider(ctx context.Context, g *Graph, st *Instance, now time.Time) *decider {
	d := &decider{ctx: ctx, g: g, st: st, now: now.UnixMilli(), runBytes: -1}
	d.out = &Decision{State: st}
	d.stepFn = d.getFromStep
	return d
}

// startRun evaluates the workflow params and starts the root steps.
func (d *decider) startRun(e StartRun) error {
	if d.st.Status != model.WorkflowCreated {
		return nil // duplicate or late start
	}
	restart := len(d.st.Steps) != 0 // steps carried over by RestartState
	if restart {
		if err := d.checkSteps(); err != nil {
			return err
		}
	}
	ini := e.Initiator
	ini.Type = strings.ToUpper(ini.Type)
	if ini.Type == "" {
		ini.Type = "MANUAL"
	}
	d.st.Initiator = ini
	params, err := d.workflowParams(e)
	if err == nil {
		err = d.checkParamsSize("the workflow params", params, excludeWorkflowParams)
	}
	if err != nil {
		msg := fmt.Sprintf("evaluating workflow params: %v", err)
		d.st.Message = msg
		d.setInstanceStatus(model.WorkflowFailed, msg)
		d.out.Commands = append(d.out.Commands, InstanceDone{Status: model.WorkflowFailed})
		return nil
	}
	d.st.Params = params
	if !restart {
		d.st.Steps = make([]StepState, len(d.g.nodes))
		for i := range d.g.nodes {
			d.st.Steps[i] = StepState{StepID: d.g.nodes[i].step.ID, Status: model.StepNotCreated}
		}
	}
	// Room for the eager case: every step walks its seven statuses.
	n := 2 + 7*len(d.g.nodes)
	d.out.Transitions = make([]Transition, 0, n)
	d.out.Timeline = make([]TimelineEntry, 0, n)
	d.setInstanceStatus(model.WorkflowInProgress, "")
	if err := d.startWorkflowTimeout(); err != nil {
		msg := fmt.Sprintf("workflow timeout: %v", err)
		d.st.Message = msg
		d.setInstanceStatus(model.WorkflowFailed, msg)
		d.out.Commands = append(d.out.Commands, InstanceDone{Status: model.WorkflowFailed})
		return nil
	}
	d.startCounting()
	if err := d.advance(); err != nil {
		return err
	}
	d.armWorkflowTimeout()
	return nil
}

// stepFinished applies a worker's report for the current RUNNING attempt.
func (d *decider) stepFinished(e StepFinished) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err
	}
	var to model.StepStatus
	switch e.Outcome {
	case OutcomeSucceeded:
		to = model.StepSucceeded
	case OutcomeUserError:
		to = model.StepUserFailed
	case OutcomePlatformError:
		to = model.StepPlatformFailed
	case OutcomeFatalError:
		to = model.StepFatallyFailed
	default:
		return fmt.Errorf("step %q: unknown outcome %q", e.StepID, e.Outcome)
	}
	d.startCounting()
	s := &d.st.Steps[i]
	s.Job = "" // ended by itself: nothing to cancel
	s.Cost = s.Cost.Add(e.Compute)
	d.st.Cost = d.st.Cost.Add(e.Compute)
	if to != model.StepSucceeded {
		// What an external job reported belongs to this attempt: a
		// retry starts without it.
		s.Signals, s.External = nil, nil
		d.fail(i, to, e.Message)
		return d.advance()
	}
	outputs, err := checkedOutputs(e.Outputs)
	if err == nil {
		err = CheckDynamicSignals(e.Signals)
	}
	if err != nil {
		s.Signals, s.External = nil, nil
		d.endStep(i, model.StepFatallyFailed, fmt.Sprintf("invalid outputs: %v", err))
		return d.advance()
	}
	if s.Signals == nil {
		// Dynamic signal outputs reported as output data override the
		// worker's.
		s.Signals = cloneSignals(e.Signals)
	}
	if len(s.External) > 0 {
		// Output data an external job reported overrides the worker's.
		if outputs == nil {
			outputs = Values{}
		}
		for k, v := range s.External {
			outputs[k] = v
		}
		s.External = nil
	}
	if outputs != nil {
		s.Outputs = outputs
		params := withOutputs(s.Params, outputs)
		if err := d.checkParamsSize("the step's params with its outputs", params, i); err != nil {
			d.endStep(i, model.StepFatallyFailed, err.Error())
			return d.advance()
		}
		s.Params = params
		d.noteStepParams(i)
	}
	if t := e.FinishedAt; t >= s.StartTime && t > 0 && t <= d.now {
		// The attempt ends when its worker finished it; what the end
		// releases starts at the decision's time.
		now := d.now
		d.now = t
		d.succeed(i, e.Message)
		d.now = now
	} else {
		d.succeed(i, e.Message)
	}
	return d.advance()
}

// SucceededAttempt returns running attempt s as the decision that applies
// success e ends it when nothing else of the run bears on it — no output
// data reported meanwhile, no dynamic signal outputs in e, params within their limit,
// e.FinishedAt between its start and the decision: SUCCEEDED at
// e.FinishedAt, its outputs over its params, and the timeline entries of
// the end. A worker writes that end itself (see the orchestrator's
// worker-written ends); the decision compares, and rewrites what differs.
// ok is false when e is no success, has no FinishedAt or bad outputs.
func SucceededAttempt(s StepState, e StepFinished) (end StepState, entries []TimelineEntry, ok bool) {
	t := e.FinishedAt
	if e.Outcome != OutcomeSucceeded || t <= 0 || t < s.StartTime || s.Status != model.StepRunning || len(e.Signals) > 0 {
		return StepState{}, nil, false
	}
	outputs, err := checkedOutputs(e.Outputs)
	if err != nil {
		return StepState{}, nil, false
	}
	if outputs != nil {
		s.Outputs, s.Params = outputs, withOutputs(s.Params, outputs)
	}
	s.Status, s.EndTime, s.Message = model.StepSucceeded, t, e.Message
	s.Cost = s.Cost.Add(e.Compute)
	return s, []TimelineEntry{
		{Time: t, StepID: s.StepID, Attempt: s.Attempt, Status: string(model.StepFinishing)},
		{Time: t, StepID: s.StepID, Attempt: s.Attempt, Status: string(model.StepSucceeded), Message: e.Message},
	}, true
}

// timerFired ends a Sleep step whose timer is due.
func (d *decider) timerFired(e TimerFired) error {
	switch e.Purpose {
	case PurposeRetry:
		return d.retryDue(e)
	case PurposeTimeout:
		return d.stepTimedOut(e)
	case PurposeWorkflowTimeout:
		return d.workflowTimedOut()
	case PurposeSignalCheck:
		return d.signalCheck(e)
	case PurposeHeartbeat:
		return d.heartbeatDue(e)
	}
	if e.Purpose != PurposeSleep {
		return fmt.Errorf("step %q: unknown timer purpose %q", e.StepID, e.Purpose)
	}
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err
	}
	if !isSleep(d.g.nodes[i].step) {
		return nil // not a timer this engine started
	}
	d.startCounting()
	d.succeed(i, "")
	return d.advance()
}

// current returns the index of stepID when the instance is running and the
// step's current attempt is attempt and RUNNING; ok is false otherwise (the
// event is a duplicate or late).
func (d *decider) current(stepID string, attempt int64) (idx int, ok bool, err error) {
	return d.attemptIf(stepID, attempt, func(s *StepState) bool { return s.Status == model.StepRunning })
}

// attemptIf returns the index of stepID when the instance is running and
// the step's current attempt is attempt and satisfies want; ok is false
// otherwise (the event is a duplicate or late).
func (d *decider) attemptIf(stepID string, attempt int64, want func(*StepState) bool) (idx int, ok bool, err error) {
	i, known := d.g.index[stepID]
	if !known {
		return 0, false, fmt.Errorf("unknown step %q", stepID)
	}
	if d.st.Status != model.WorkflowInProgress {
		return 0, false, nil
	}
	if err := d.checkSteps(); err != nil {
		return 0, false, err
	}
	s := &d.st.Steps[i]
	if s.Attempt != attempt || !want(s) {
		return 0, false, nil
	}
	return i, true, nil
}

// checkSteps verifies that the state's steps are the graph's.
func (d *decider) checkSteps() error {
	if len(d.st.Steps) != len(d.g.nodes) {
		return fmt.Errorf("state has %d steps, the definition %d", len(d.st.Steps), len(d.g.nodes))
	}
	for i := range d.g.nodes {
		if d.st.Steps[i].StepID != d.g.nodes[i].step.ID {
			return fmt.Errorf("state step %d is %q, the definition's is %q", i, d.st.Steps[i].StepID, d.g.nodes[i].step.ID)
		}
	}
	return nil
}

// startCounting computes the remaining-predecessor counts from the state.
func (d *decider) startCounting() {
	d.remaining = make([]int, len(d.g.nodes))
	for i := range d.g.nodes {
		for _, k := range d.g.nodes[i].preds {
			if !d.st.Steps[d.g.edges[k].from].settled() {
				d.remaining[i]++
			}
		}
	}
	d.counting = true
}

// advance considers every step whose predecessors are all terminal, in
// definition order and then in the order they become ready, until nothing can
// progress without waiting; then it ends the instance if every step is
// terminal.
func (d *decider) advance() error {
	if d.st.Status != model.WorkflowInProgress || d.st.Ending != nil {
		// The run ended, or is being ended: nothing more starts.
		d.queue = d.queue[:0]
		return nil
	}
	d.retryWaiting()
	for i := range d.g.nodes {
		if d.remaining[i] == 0 && d.st.Steps[i].Status == model.StepNotCreated {
			d.queue = append(d.queue, i)
		}
	}
	for head := 0; head < len(d.queue); head++ {
		i := d.queue[head]
		if d.st.Steps[i].Status != model.StepNotCreated {
			continue
		}
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if d.maxStarts > 0 && d.starts >= d.maxStarts {
			d.out.Continue = true
			break
		}
		d.consider(i)
	}
	d.queue = d.queue[:0]
	if d.enqueued {
		d.enqueued = false
		d.retryWaiting()
	}
	d.finish()
	return nil
}

// consider runs step i if it is satisfied, else ends it UNSATISFIED.
func (d *decider) consider(i int) {
	ok, why, err := d.satisfied(i)
	s := &d.st.Steps[i]
	if s.Attempt == 0 {
		s.Attempt = 1
	}
	if err != nil {
		s.CreateTime = d.now
		d.setStepStatus(i, model.StepCreated, "")
		d.endStep(i, model.StepFatallyFailed, err.Error())
		return
	}
	if !ok {
		d.endStep(i, model.StepUnsatisfied, why)
		return
	}
	d.start(i)
}

// satisfied reports whether step i may run: it has no predecessors, or a
// predecessor that ran to a successful terminal status has a true edge
// condition. why explains a false result.
func (d *decider) satisfied(i int) (ok bool, why string, err error) {
	preds := d.g.nodes[i].preds
	if len(preds) == 0 {
		return true, "", nil
	}
	var notes []string
	for _, k := range preds {
		e := &d.g.edges[k]
		p := &d.st.Steps[e.from]
		if !stepRanOK(p.Status) {
			notes = append(notes, fmt.Sprintf("%s ended %s", p.StepID, p.Status))
			continue
		}
		if e.cond == nil {
			return true, "", nil
		}
		ok, err := e.cond.Eval(d.ctx, d.conditionEnv(e.from))
		if err != nil {
			return false, "", fmt.Errorf("evaluating condition %q of edge %s -> %s: %w", e.src, p.StepID, d.g.nodes[i].step.ID, err)
		}
		if ok {
			return true, "", nil
		}
		notes = append(notes, fmt.Sprintf("%s -> %s condition %q is false", p.StepID, d.g.nodes[i].step.ID, e.src))
	}
	return false, "not satisfied: " + strings.Join(notes, "; "), nil
}

// start walks a satisfied step through CREATED and INITIALIZED; unless a
// breakpoint pauses it there, it goes on to evaluate its params.
func (d *decider) start(i int) {
	if d.lightPer > 1 && onWorker(d.g.nodes[i].step) {
		d.lightTotal++
		if d.lightStarts++; d.lightStarts >= d.lightPer {
			d.starts, d.lightStarts = d.starts+1, 0
		}
	} else {
		d.starts++
	}
	s := &d.st.Steps[i]
	s.CreateTime = d.now
	d.setStepStatus(i, model.StepCreated, "")
	if d.skipOnStart(i) {
		return
	}
	d.setStepStatus(i, model.StepInitialized, "")
	if d.breakpointHolds(i) {
		d.setStepStatus(i, model.StepPaused, "paused at a breakpoint")
		return
	}
	if !d.gateSignals(i) {
		return
	}
	d.evaluate(i)
}

// evaluate evaluates step i's params and, once it holds the permits it
// needs, launches it.
func (d *decider) evaluate(i int) {
	s := &d.st.Steps[i]
	d.setStepStatus(i, model.StepEvaluatingParams, "")
	params, err := d.stepParams(i)
	if err == nil {
		err = d.checkParamsSize("the step's params", params, i)
	}
	if err != nil {
		d.endStep(i, model.StepFatallyFailed, fmt.Sprintf("evaluating params: %v", err))
		return
	}
	s.Params = params
	d.noteStepParams(i)
	if !d.acquire(i) {
		return
	}
	d.launch(i)
}

// launch walks step i from STARTING to RUNNING and, for steps with no
// external work, on to their terminal status.
func (d *decider) launch(i int) {
	s := &d.st.Steps[i]
	params := s.Params
	d.setStepStatus(i, model.StepStarting, "")
	step := d.g.nodes[i].step
	var sleep time.Duration
	var err error
	if isSleep(step) {
		sleep, err = sleepDuration(params)
		if err != nil {
			d.endStep(i, model.StepFatallyFailed, err.Error())
			return
		}
	}
	s.StartTime = d.now
	s.WaitingSince, s.HeartbeatAt, s.Job = 0, 0, ""
	d.setStepStatus(i, model.StepRunning, "")
	if !isNoWork(step) && !d.startStepTimeout(i) {
		return
	}
	switch {
	case isNoWork(step):
		d.succeed(i, "")
	case isForeach(step):
		d.startLoop(i)
	case isWhile(step):
		d.startWhile(i)
	case isSubworkflow(step):
		d.startSubworkflow(i)
	case isSleep(step):
		d.out.Commands = append(d.out.Commands, StartTimer{
			StepID:  s.StepID,
			Attempt: s.Attempt,
			Purpose: PurposeSleep,
			FireAt:  time.UnixMilli(d.now + sleep.Milliseconds()).UTC(),
		})
	default:
		if !d.checkHeartbeatTimeout(i) {
			return
		}
		rs := d.runStep(i)
		rs.Params = rs.Params.Clone()
		d.out.Commands = append(d.out.Commands, rs)
	}
}

// runStep is the command that has a worker run step i's current attempt. Its
// Params are the state's own: a command that leaves the decision gets a
// copy.
func (d *decider) runStep(i int) RunStep {
	s := &d.st.Steps[i]
	step := d.g.nodes[i].step
	kind := step.Kind
	if kind == "" {
		kind = model.KindStep
	}
	rs := RunStep{StepID: s.StepID, Attempt: s.Attempt, StepKind: kind, SubType: step.SubType, Params: s.Params}
	if kind == model.KindStep {
		rs.StepType = step.Type
	}
	if step.SubType != "" {
		rs.TemplateVersion = templateVersion(step.SubTypeVersion, d.st.Params)
	}
	return rs
}

// endStep moves step i to a terminal status: a failure makes the steps
// downstream of it UNSATISFIED (FAIL_AFTER_RUNNING), then the successors'
// counts drop and ready successors are queued.
func (d *decider) endStep(i int, to model.StepStatus, msg string) {
	d.st.Steps[i].Message = msg
	d.setStepStatus(i, to, msg)
	if isStepFailure(to) {
		d.failDownstream(i)
	}
	d.releaseSuccessors(i)
}

func (d *decider) releaseSuccessors(i int) {
	if !d.counting {
		return
	}
	for _, k := range d.g.nodes[i].succs {
		to := d.g.edges[k].to
		d.remaining[to]--
		if d.remaining[to] == 0 && d.st.Steps[to].Status == model.StepNotCreated {
			d.queue = append(d.queue, to)
		}
	}
}

// failDownstream ends every not-yet-created step reachable from the failed
// step i UNSATISFIED, in breadth-first definition order. Branches not
// downstream of the failure keep running.
func (d *decider) failDownstream(i int) {
	failed := &d.st.Steps[i]
	msg := fmt.Sprintf("not run: upstream step %q ended %s", failed.StepID, failed.Status)
	var todo []int
	for _, k := range d.g.nodes[i].succs {
		todo = append(todo, d.g.edges[k].to)
	}
	for head := 0; head < len(todo); head++ {
		j := todo[head]
		s := &d.st.Steps[j]
		if s.Status != model.StepNotCreated {
			continue
		}
		if s.Attempt == 0 {
			s.Attempt = 1
		}
		s.Message = msg
		d.setStepStatus(j, model.StepUnsatisfied, msg)
		d.releaseSuccessors(j)
		for _, k := range d.g.nodes[j].succs {
			todo = append(todo, d.g.edges[k].to)
		}
	}
}

// finish ends a running instance once every step is terminal: FAILED when a
// step failed, SUCCEEDED otherwise.
func (d *decider) finish() {
	if d.st.Status != model.WorkflowInProgress {
		return
	}
	// A run whose only unsuccessful steps were stopped by a user ends
	// STOPPED; any other failure makes it FAILED.
	var failed, stopped *StepState
	for i := range d.st.Steps {
		s := &d.st.Steps[i]
		if !s.settled() {
			return
		}
		switch {
		case s.Status == model.StepStopped:
			if stopped == nil {
				stopped = s
			}
		case failed == nil && isStepFailure(s.Status):
			failed = s
		}
	}
	status, msg := model.WorkflowSucceeded, ""
	if failed == nil && stopped == nil {
		d.st.Feedback = d.feedback()
	}
	switch {
	case failed != nil:
		status = model.WorkflowFailed
		msg = fmt.Sprintf("step %q ended %s", failed.StepID, failed.Status)
		d.st.Message = msg
	case stopped != nil:
		status = model.WorkflowStopped
		msg = fmt.Sprintf("step %q was stopped", stopped.StepID)
		d.st.Message = msg
	}
	d.setInstanceStatus(status, msg)
	d.out.Commands = append(d.out.Commands, InstanceDone{Status: status})
}

// setStepStatus records a status change of step i.
func (d *decider) setStepStatus(i int, to model.StepStatus, msg string) {
	s := &d.st.Steps[i]
	from := s.Status
	if from == model.StepRunning {
		d.cancelJob(i, to, msg)
	}
	s.Status = to
	if isStepTerminal(to) {
		s.EndTime = d.now
		d.releasePermits(i, from)
		d.stopChildren(i, to)
		d.stopSubworkflow(i, to)
	}
	d.st.Seq++
	d.out.Transitions = append(d.out.Transitions, Transition{
		Seq: d.st.Seq, StepID: s.StepID, Attempt: s.Attempt, From: string(from), To: string(to), Time: d.now,
	})
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{
		Time: d.now, StepID: s.StepID, Attempt: s.Attempt, Status: string(to), Message: msg,
	})
}

// setInstanceStatus records a status change of the instance.
func (d *decider) setInstanceStatus(to model.WorkflowStatus, msg string) {
	from := d.st.Status
	d.st.Status = to
	switch {
	case to == model.WorkflowInProgress:
		d.st.StartTime = d.now
	case isWorkflowTerminal(to):
		d.st.EndTime = d.now
	}
	d.st.Seq++
	d.out.Transitions = append(d.out.Transitions, Transition{
		Seq: d.st.Seq, From: string(from), To: string(to), Time: d.now,
	})
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{Time: d.now, Status: string(to), Message: msg})
}

// workflowParams evaluates the workflow params of a run: system defaults <
// definition params < run params.
func (d *decider) workflowParams(e StartRun) (Values, error) {
	wf := d.g.workflow
	sys, err := systemParams(wf, d.st, d.st.Initiator, time.UnixMilli(d.now))
	if err != nil {
		return nil, err
	}
	set, err := d.g.wfParams, d.g.wfParamsErr
	defs := wf.Params
	if len(e.RunParams.Names) > 0 {
		defs = wf.Params.Merged(e.RunParams)
		set, err = d.g.eval.CompileParams(defs, d.g.systemScope())
	}
	if err != nil {
		return nil, err
	}
	if set == nil {
		return sys, nil
	}
	env := &Env{Vars: sys, Instance: d.instanceFields(), Seed: d.st.UUID + "/workflow-params", Now: d.clock()}
	d.signalEnv(env, -1)
	res, err := set.Eval(d.ctx, env)
	if err != nil {
		return nil, err
	}
	out := make(Values, len(sys)+len(defs.Names))
	for k, v := range sys {
		out[k] = v
	}
	if err := mergeResults(out, defs.Names, res); err != nil {
		return nil, err
	}
	return out, nil
}

// stepParams evaluates step i's params: default step params < definition
// params.
func (d *decider) stepParams(i int) (Values, error) {
	s := &d.st.Steps[i]
	defaults := defaultStepParams(d.st, s.StepID, s.Attempt)
	n := &d.g.nodes[i]
	set, setErr, defs := n.params, n.paramsErr, n.step.Params
	if merged, ok := d.stepParamDefs(i); ok {
		defs = merged
		set, setErr = d.g.eval.CompileParams(defs, model.Scope{Vars: d.g.scope})
	}
	if setErr != nil {
		return nil, setErr
	}
	if set == nil {
		return defaults, nil
	}
	env := &Env{
		Vars:        overlay(d.st.Params, defaults),
		Step:        d.stepFn,
		StepFields:  stepFields(s, defaults),
		Instance:    d.instanceFields(),
		Seed:        defaults[ParamStepInstanceUUID].(string),
		Now:         d.clock(),
		Foreach:     d.getFromForeach,
		Subworkflow: d.getFromSubworkflow,
	}
	d.signalEnv(env, i)
	res, err := set.Eval(d.ctx, env)
	if err != nil {
		return nil, err
	}
	out := make(Values, len(defaults)+len(defs.Names))
	for k, v := range defaults {
		out[k] = v
	}
	if err := mergeResults(out, defs.Names, res); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeResults stores evaluated results in out, normalised, in names order.
func mergeResults(out Values, names []string, res map[string]any) error {
	for _, n := range names {
		v, ok := res[n]
		if !ok {
			continue
		}
		nv, err := Normalize(v)
		if err != nil {
			return fmt.Errorf("param %q: %w", n, err)
		}
		out[n] = nv
	}
	return nil
}

// conditionEnv is the environment of an edge condition leaving step from.
func (d *decider) conditionEnv(from int) *Env {
	p := &d.st.Steps[from]
	if d.condVars == nil {
		d.condVars = make(map[int]map[string]any)
	}
	params := d.paramsOf(from)
	vars, ok := d.condVars[from]
	if !ok {
		vars = overlay(d.st.Params, params)
		d.condVars[from] = vars
	}
	return &Env{
		Vars:        vars,
		Step:        d.stepFn,
		StepFields:  stepFields(p, params),
		Instance:    d.instanceFields(),
		Seed:        stepUUID(d.st.UUID, p.StepID, p.Attempt) + "/conditions",
		Now:         d.clock(),
		Foreach:     d.getFromForeach,
		Subworkflow: d.getFromSubworkflow,
	}
}

// overlay returns base's entries overridden by top's, in a new map.
func overlay(base, top Values) map[string]any {
	out := make(map[string]any, len(base)+len(top))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range top {
		out[k] = v
	}
	return out
}

// noteStepParams drops cached variables after step i's params changed.
func (d *decider) noteStepParams(i int) {
	delete(d.condVars, i)
}

// getFromStep resolves params.getFromStep(stepID, name) and
// <stepid>__<name> references.
func (d *decider) getFromStep(_ context.Context, stepID, name string) (any, error) {
	i, ok := d.g.index[stepID]
	if !ok {
		return nil, fmt.Errorf("params.getFromStep: unknown step %q", stepID)
	}
	s := &d.st.Steps[i]
	switch name {
	case FieldStepStatus:
		if s.Status == "" || s.Status == model.StepNotCreated {
			return nil, fmt.Errorf("params.getFromStep: step %q has not been created yet", stepID)
		}
		return string(s.Status), nil
	case FieldStepEndTime:
		if s.EndTime == 0 {
			return nil, fmt.Errorf("params.getFromStep: step %q's %s is not set yet (status %s)", stepID, name, s.Status)
		}
		return s.EndTime, nil
	}
	params := d.paramsOf(i)
	if params == nil {
		if d.loadErr != nil {
			return nil, d.loadErr
		}
		return nil, fmt.Errorf("params.getFromStep: step %q has not evaluated its params (status %s)", stepID, s.Status)
	}
	v, ok := params[name]
	if !ok {
		return nil, fmt.Errorf("params.getFromStep: step %q has no param %q", stepID, name)
	}
	return v, nil
}

// paramsOf returns step i's params: from the state, or, offloaded, read
// once per decision through the StepParams reader (nil when that fails,
// with loadErr set).
func (d *decider) paramsOf(i int) Values {
	s := &d.st.Steps[i]
	if !s.Offloaded {
		return s.Params
	}
	if v, ok := d.loaded[i]; ok {
		return v
	}
	run := s.ItemRun(d.st.RunID)
	var v Values
	var err error
	if d.paramsReader == nil {
		err = fmt.Errorf("the params of step %q are not in the run's state and no reader was given", s.StepID)
	} else if v, err = d.paramsReader.StepParams(d.ctx, s.StepID, s.Attempt, run); err != nil {
		err = fmt.Errorf("read the params of step %q attempt %d: %w", s.StepID, s.Attempt, err)
	}
	if err != nil {
		if d.loadErr == nil {
			d.loadErr = err
		}
		return nil
	}
	if d.loaded == nil {
		d.loaded = map[int]Values{}
	}
	d.loaded[i] = v
	return v
}

// instanceFields returns the fields params.getFromInstance reads.
func (d *decider) instanceFields() map[string]any {
	if d.instance != nil {
		return d.instance
	}
	st := d.st
	f := map[string]any{
		"workflow_id":          st.WorkflowID,
		"workflow_instance_id": st.InstanceID,
		"workflow_run_id":      st.RunID,
		"workflow_uuid":        st.UUID,
		"workflow_version_id":  st.WorkflowVersion,
		"owner":                st.Owner,
		"RUN_POLICY":           runPolicy(st),
		"INITIATOR_TYPE":       st.Initiator.Type,
	}
	if st.Initiator.Timezone != "" {
		f["INITIATOR_TIMEZONE"] = st.Initiator.Timezone
	}
	if tt := d.g.workflow.TimeTriggers; len(tt) > 0 && tt[0].Timezone != "" {
		f["FIRST_TIME_TRIGGER_TIMEZONE"] = tt[0].Timezone
	}
	d.instance = f
	return f
}

// checkedOutputs is normalizeOutputs within CheckOutputs' limit.
func checkedOutputs(in map[string]any) (Values, error) {
	outputs, err := normalizeOutputs(in)
	if err == nil {
		err = CheckOutputs(outputs)
	}
	return outputs, err
}

// withOutputs returns a copy of params with outputs over them.
func withOutputs(params, outputs Values) Values {
	out := params.Clone()
	if out == nil {
		out = Values{}
	}
	for k, v := range outputs {
		out[k] = cloneValue(v)
	}
	return out
}

// normalizeOutputs converts worker outputs to canonical values (nil when
// empty), reporting the first bad one in name order.
func normalizeOutputs(in map[string]any) (Values, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out, err := normalizeEach(in, "output %q")
	return Values(out), err
}

func isSleep(s *model.Step) bool {
	return isTyped(s) && strings.EqualFold(string(s.Type), string(model.StepSleep))
}

// isNoWork reports whether a step has no external work: NoOp, and Join (a
// synchronisation point that does nothing itself).
func isNoWork(s *model.Step) bool {
	return isTyped(s) && (strings.EqualFold(string(s.Type), string(model.StepNoOp)) ||
		strings.EqualFold(string(s.Type), string(model.StepJoin)))
}

func isTyped(s *model.Step) bool { return s.Kind == model.KindStep || s.Kind == "" }

// clock is the decision's time, which SEL's new DateTime() and System.currentTimeMillis() read.
func (d *decider) clock() time.Time { return time.UnixMilli(d.now).UTC() }
