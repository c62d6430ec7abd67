package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/maestro-serverless/maestro/engine"
)

// The inbox event ids, one function per kind of event. An id is the event's
// key in its run's inbox: an event is stored once per id (a redelivered
// report overwrites itself), and the events waiting together are applied in
// id order, so an id's prefix decides when its kind applies among them:
//
//	a-   actions on the run or a step (a user's, a parent's), first
//	c-   a round's Continue (the rest of a long decision)
//	ce-  a child run's end reported to its parent
//	cs-  a subworkflow's start reported to its step
//	e-   a task token handed out (a job launched): the attempt waits
//	f-   a step attempt's outcome (a worker's, a job's, a task's)
//	h-   a task token's heartbeat
//	j-   a hand-off to the decider (a Continue)
//	k-   a task token's report (success, failure)
//	l-   LAST_ONLY stopping an older run
//	o-   external output data
//	p-   permits released: a waiter's Continue
//	q-   the queue moved on: a queued run's Continue
//	r-   the sweeper's Redrive
//	s-   a signal arrived
//	t-   a timer fired
//	u-   a run unblocked: the next run's Continue
//	w-   an action on every run of the workflow
//
// A user's action thus applies before the outcomes that arrived with it,
// and outcomes before timers; an attempt's wait (its job and target)
// applies before its outcome, so a job that ended before its worker's
// wait was applied keeps its timeline entry (an inbox item written with
// the wait's former prefix, v-, applies where v- sorts, as it did). New
// kinds take an unused prefix here.

// actionEventID is a user's action on a run or a step (unique per request).
func actionEventID(uuid string) string { return "a-" + uuid }

// parentActionEventID is a parent run's action passed to a child.
func parentActionEventID(action string) string { return "a-parent-" + action }

// continueEventID is the Continue a commit at version v+1 leaves: unique per
// commit, since a round that only launches iterations changes no status
// (and so not the state's Seq), and the event it consumes must not be the
// one it puts.
func continueEventID(st *engine.Instance, v int64) string {
	return fmt.Sprintf("c-%012d-%d", st.Seq, v+1)
}

// childEndedEventID is a child run's report to its parent: one per
// iteration of a step attempt, so a report is stored once.
func childEndedEventID(step string, attempt, index int64) string {
	return fmt.Sprintf("ce-%s-%d-%d", step, attempt, index)
}

// childStartedEventID is a subworkflow step attempt's start report: one per
// attempt.
func childStartedEventID(step string, attempt int64) string {
	return fmt.Sprintf("cs-%s-%d", step, attempt)
}

// outcomeEventID is a step attempt's outcome: one per attempt, whoever
// reports it.
func outcomeEventID(step string, attempt int64) string {
	return fmt.Sprintf("f-%s-%06d", step, attempt)
}

// heartbeatEventID is a task token holder's heartbeat (unique per request).
func heartbeatEventID(uuid string) string { return "h-" + uuid }

// handOffEventID is the Continue that hands a run to the decider (unique
// per hand-off).
func handOffEventID(uuid string) string { return "j-" + uuid }

// taskReportEventID is a task token holder's report: one per attempt.
func taskReportEventID(step string, attempt int64) string {
	return fmt.Sprintf("k-%s-%06d", step, attempt)
}

// lastOnlyEventID is LAST_ONLY's stop of an older run, for the newer
// instance inst that displaced it.
func lastOnlyEventID(inst int64) string { return fmt.Sprintf("l-%012d", inst) }

// outputDataEventID is an external job's output data (unique per request).
func outputDataEventID(uuid string) string { return "o-" + uuid }

// permitsEventID is the Continue that wakes a run waiting for permits, at
// unix ms nowMilli.
func permitsEventID(nowMilli int64) string { return fmt.Sprintf("p-%013d", nowMilli) }

// queueEventID is the Continue that wakes a queued run, at unix ms nowMilli.
func queueEventID(nowMilli int64) string { return fmt.Sprintf("q-%013d", nowMilli) }

// redriveEventID is the sweeper's Redrive of a run due at unix ms at: one
// per due time.
func redriveEventID(at int64) string { return fmt.Sprintf("r-%013d", at) }

// signalEventID is the arrival of instance seq of signal name: one per
// signal instance.
func signalEventID(name string, seq int64) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("s-%s-%012d", hex.EncodeToString(sum[:6]), seq)
}

// timerEventID is a timer of a step attempt firing: one per purpose.
func timerEventID(step string, attempt int64, purpose engine.TimerPurpose) string {
	return fmt.Sprintf("t-%s-%06d-%s", step, attempt, purpose)
}

// unblockEventID is the Continue that starts the next run of an unblocked
// instance.
func unblockEventID(run int64) string { return fmt.Sprintf("u-%06d", run) }

// taskWaitingEventID says a step attempt handed out its task token and
// waits: one per attempt.
func taskWaitingEventID(step string, attempt int64) string {
	return fmt.Sprintf("e-%s-%06d", step, attempt)
}

// workflowActionEventID is an action on every run of a workflow (unique per
// request, the same in each run).
func workflowActionEventID(uuid string) string { return "w-" + uuid }

// backfillStopEventID is a backfill's cancel stopping one of its runs: one
// per backfill, so every pump that finds the run still going puts it once.
func backfillStopEventID(backfill string) string { return "w-bf-" + backfill }
