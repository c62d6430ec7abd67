package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// Deferred starts.
//
// A step that runs on a worker (Http, and any type a runner executes) used
// to have its attempt item written three times: RUNNING in the decision's
// transaction (two write units per KB), claimed by its worker (one), and
// ended in the transaction that applies its outcome (two). Its start write
// only repeats what its work message carries: the step, the attempt, its
// params and the instant it was created and started. So when an attempt is
// created and started in one decision — its timeline is the five statuses
// CREATED … RUNNING at one instant — the decision leaves the item out and
// the work message says when it started (StepWork.StartTime); the
// worker's claim (store.ClaimAttempt with a start) creates the item as the
// decision would have written it, in the write the claim costs anyway. A
// worker that runs the step its own commit started (runAndContinue) does not
// claim it: it writes the item once, start and end, when the step succeeds
// (store.FinishDeferredAttempt).
//
// The decision defers a start only after checking that what the worker
// will write from the message, decoded as the worker decodes it, is byte
// for byte the item it would have written itself. Until the claim, readers
// derive the attempt from the run's state (pendingAttempt). A commit that
// ends an attempt whose start may have been deferred carries the start
// (store.Attempt.Start), written first should the item still not exist —
// an attempt stopped, or timed out, before any worker claimed it.

// startStatuses is the timeline of a step attempt created and started in
// one instant.
func startStatuses() []model.StepStatus {
	return []model.StepStatus{model.StepCreated, model.StepInitialized, model.StepEvaluatingParams,
		model.StepStarting, model.StepRunning}
}

// startEntries are the timeline entries of a step attempt created and
// started at t (unix ms).
func startEntries(stepID string, attempt, t int64) [][]byte {
	statuses := startStatuses()
	out := make([][]byte, len(statuses))
	for i, s := range statuses {
		out[i] = storeEntry(engine.TimelineEntry{Time: t, StepID: stepID, Attempt: attempt, Status: string(s)})
	}
	return out
}

// startedInOne reports whether attempt ss was created and started in one
// instant: the attempts whose start a decision may defer.
func startedInOne(ss *engine.StepState) bool {
	return ss != nil && ss.Attempt > 0 && ss.StartTime != 0 && ss.CreateTime == ss.StartTime
}

// stateStart is the start item of attempt ss of run st as its start wrote
// it, or would have: RUNNING, its view as then, its start entries. Nil when
// ss was not created and started in one instant.
func stateStart(st *engine.Instance, ss *engine.StepState) *store.AttemptStart {
	if !startedInOne(ss) {
		return nil
	}
	at := *ss
	at.Status, at.Outputs, at.External, at.EndTime, at.Message = model.StepRunning, nil, nil, 0, ""
	return &store.AttemptStart{Body: mustJSON(bodyOf(st, &at)), Timeline: startEntries(ss.StepID, ss.Attempt, ss.StartTime)}
}

// workerStart is the start item a worker's claim writes for work message m
// (see store.ClaimAttempt), nil when m carries no start time.
func workerStart(m StepWork) *store.AttemptStart {
	if m.StartTime == 0 {
		return nil
	}
	st := &engine.Instance{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID}
	ss := &engine.StepState{StepID: m.StepID, Attempt: m.Attempt, Status: model.StepRunning, Params: m.Params,
		CreateTime: m.StartTime, StartTime: m.StartTime}
	return &store.AttemptStart{Body: mustJSON(bodyOf(st, ss)), Timeline: startEntries(m.StepID, m.Attempt, m.StartTime)}
}

// deferrable reports whether write — attempt a's write in a commit that
// also sends msg, the attempt's work message — may be left to the worker's
// claim: it is the attempt's first write, RUNNING, and exactly what the
// worker writes from msg as it will decode it.
func deferrable(a store.Attempt, msg store.Message) bool {
	w, err := DecodeWork([]byte(msg.Body))
	m, ok := w.(*StepWork)
	if err != nil || !ok {
		return false
	}
	return claimStart(a, *m) != nil
}

// claimStart returns the start a worker's claim writes from work message m
// when it is write a — the attempt's first write, RUNNING, unclaimed — byte
// for byte; nil otherwise.
func claimStart(a store.Attempt, m StepWork) *store.AttemptStart {
	if a.Status != string(model.StepRunning) || a.Claim != "" || m.StepID != a.StepID || m.Attempt != a.Attempt {
		return nil
	}
	ws := workerStart(m)
	if ws == nil || !bytes.Equal(ws.Body, a.Body) || !slices.EqualFunc(ws.Timeline, a.Timeline, bytes.Equal) {
		return nil
	}
	return ws
}

// pendingAttempt returns attempt (0: the current one) of step of run st when
// it is RUNNING and its item may not exist yet (a deferred start no worker
// claimed): what the claim will write. Nil otherwise.
func pendingAttempt(st *engine.Instance, step string, attempt int64) *store.Attempt {
	if st == nil {
		return nil
	}
	ss := st.Step(step)
	if ss == nil || ss.Status != model.StepRunning || (attempt != 0 && attempt != ss.Attempt) {
		return nil
	}
	s := stateStart(st, ss)
	if s == nil {
		return nil
	}
	return &store.Attempt{StepID: ss.StepID, Attempt: ss.Attempt, Status: string(model.StepRunning), Body: s.Body, Timeline: s.Timeline}
}

// Worker-written ends (see store.FinishAttempt).
//
// A worker whose step succeeded while its run is contended writes the
// attempt's end itself when it knows all of it: the attempt's start was
// deferred to it (the work message carries the start, so the worker holds
// what the decision's state holds of the attempt), and the end is what
// engine.SucceededAttempt says the decision will make of the outcome. The
// decision that applies the outcome compares its own write with the stored
// one and leaves the item alone when they are equal (sameEnd), or rewrites
// it with the worker's timeline entries replaced by its own.

// workerEnd is the end a worker writes for the success res of work message
// m's attempt, nil when it cannot know it.
func workerEnd(m StepWork, res engine.StepFinished) *store.AttemptEnd {
	if m.StartTime == 0 {
		return nil
	}
	st := &engine.Instance{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID}
	start := engine.StepState{StepID: m.StepID, Attempt: m.Attempt, Status: model.StepRunning, Params: m.Params,
		CreateTime: m.StartTime, StartTime: m.StartTime}
	end, entries, ok := engine.SucceededAttempt(start, res)
	if !ok {
		return nil
	}
	tl := make([][]byte, len(entries))
	for i, e := range entries {
		tl[i] = storeEntry(e)
	}
	return &store.AttemptEnd{Status: string(end.Status), Body: mustJSON(bodyOf(st, &end)), Timeline: tl}
}

// withWorkerEnd adapts decision write a of an attempt whose worker wrote
// its end (f): it reports false when the write is the stored item already
// (the commit leaves it out); otherwise the write replaces the worker's
// timeline entries with the decision's.
func withWorkerEnd(a *store.Attempt, f *store.FinishedAttempt) (write bool) {
	stored := f.Attempt.Timeline
	before, worker := stored[:len(stored)-f.WorkerEntries], stored[len(stored)-f.WorkerEntries:]
	if a.Status == f.Attempt.Status && a.Body != nil && bytes.Equal(a.Body, f.Attempt.Body) &&
		slices.EqualFunc(a.Timeline, worker, bytes.Equal) {
		return false
	}
	a.Timeline = append(slices.Clip(before), a.Timeline...)
	a.ReplaceTimeline, a.Start = true, nil
	return true
}

// endOutcome is the outcome a worker's end f says (see workerEnd): the
// success, with its outputs, message and instant, that the end is of.
func endOutcome(f *store.FinishedAttempt) (engine.StepFinished, error) {
	var v StepView
	if err := jsonnum.Decode(f.Attempt.Body, &v); err != nil {
		return engine.StepFinished{}, fmt.Errorf("decode the end's body: %w", err)
	}
	if f.Attempt.Status != string(model.StepSucceeded) || v.RuntimeState.EndTime <= 0 {
		return engine.StepFinished{}, fmt.Errorf("a worker's end is SUCCEEDED with an end time, not %s at %d", f.Attempt.Status, v.RuntimeState.EndTime)
	}
	var last storedEntry
	if err := json.Unmarshal(f.Attempt.Timeline[len(f.Attempt.Timeline)-1], &last); err != nil {
		return engine.StepFinished{}, fmt.Errorf("decode the end's timeline entry: %w", err)
	}
	var outputs map[string]any
	if v.Outputs != nil {
		outputs = map[string]any(v.Outputs)
	}
	// What the attempt was billed for is in the body (attemptBody.Compute),
	// not in its view.
	var billed struct {
		Compute pricing.Usage `json:"compute"`
	}
	if err := json.Unmarshal(f.Attempt.Body, &billed); err != nil {
		return engine.StepFinished{}, fmt.Errorf("decode the end's compute: %w", err)
	}
	return engine.StepFinished{StepID: f.Ref.StepID, Attempt: f.Ref.Attempt, Outcome: engine.OutcomeSucceeded,
		Outputs: outputs, Message: last.Message, FinishedAt: v.RuntimeState.EndTime, Compute: billed.Compute}, nil
}
