// Package engine is the functional core of the orchestrator: a pure,
// deterministic decider for workflow instances, with no AWS dependencies.
//
// Compile turns a workflow definition into a Graph (steps, edges with
// compiled conditions, compiled params, topological order). Decide takes the
// graph, an instance's state (Instance), an Event (StartRun, StepFinished,
// TimerFired) and the current time, and returns a Decision: the new state,
// the Commands the change causes (RunStep, StartTimer, InstanceDone), and a
// TimelineEntry and Transition for every status change. The caller stores the
// state and the commands in one transaction; Decide itself does no I/O.
//
// # Semantics
//
// The DAG follows Maestro: a step is considered once all its predecessors are
// terminal; it runs if it has no predecessors or if any predecessor that ran
// to a successful end (SUCCEEDED, COMPLETED_WITH_ERROR, SKIPPED) has a true
// edge condition, evaluated with that predecessor's params and the workflow
// params; otherwise it ends UNSATISFIED, with the reason in the timeline.
// A running step walks CREATED, INITIALIZED, EVALUATING_PARAMS, STARTING,
// RUNNING, then, when its work is done, FINISHING and a terminal status. NoOp
// (and Join) steps have no work and finish in the same decision, as do their
// successors: Decide advances every step as far as it can without waiting.
// Sleep steps start a timer of sleep_seconds (default 3); every other step
// kind and type is handed to a worker with a RunStep command and waits for
// StepFinished.
//
// Step params are evaluated at EVALUATING_PARAMS: the default step params
// (workflow_instance_id, step_instance_uuid, step_attempt_id, step_id) under
// the definition's params; expressions see the workflow params and every
// evaluated step's params as <stepid>__<param>. Workflow params are
// evaluated at StartRun: system params (see model.SystemParams) under the
// definition's params under the run params. An evaluation error ends the step
// FATALLY_FAILED (or the run FAILED, for workflow params).
//
// Failures follow FAIL_AFTER_RUNNING, whatever the step's failure_mode: the
// not-yet-started steps downstream of a failed step end UNSATISFIED, the
// other branches run to their end, and the instance then ends FAILED.
// Retries are not applied: USER_FAILED and PLATFORM_FAILED are final.
//
// Events that do not apply (duplicates, late or stale attempts, anything
// after the end) give a decision that changes nothing.
package engine
