package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// runStrategy is a workflow's rule and how many of its runs may be in
// progress at once.
type runStrategy struct {
	rule  model.RunStrategyRule
	limit int64
}

// defaultParallelism is Maestro's default workflow_concurrency for PARALLEL.
const defaultParallelism = 20

// strategy reads the workflow's run strategy from its properties snapshot:
// SEQUENTIAL by default; only PARALLEL admits more than one run at a time.
func (o *Rounds) strategy(ctx context.Context, wf string) (runStrategy, error) {
	head, err := o.store.Definitions.GetHead(ctx, wf)
	if err != nil {
		return runStrategy{}, fmt.Errorf("run strategy of %s: %w", wf, err)
	}
	return strategyOf(head), nil
}

// strategyOf reads the run strategy from head's properties snapshot.
func strategyOf(head *store.WorkflowHead) runStrategy {
	rs := runStrategy{rule: model.RunSequential, limit: 1}
	var props struct {
		RunStrategy *model.RunStrategy `json:"run_strategy"`
	}
	if len(head.Properties) > 0 && json.Unmarshal(head.Properties, &props) == nil && props.RunStrategy != nil {
		rs.rule = props.RunStrategy.Rule
		if rs.rule == model.RunParallel {
			rs.limit = defaultParallelism
			if props.RunStrategy.WorkflowConcurrency > 0 {
				rs.limit = props.RunStrategy.WorkflowConcurrency
			}
		}
	}
	return rs
}

// slotWrites adds the run-strategy bookkeeping to a commit, from what
// readSlots read: a created run that starts takes a slot (and fails the
// commit with ErrNoSlot when none is free; slotWrites itself returns
// ErrNoSlot while an older instance waits in the queue); a run that ends
// gives its slot back and wakes the oldest queued instance; a run leaving
// the queue removes its queue item.
func (o *Rounds) slotWrites(c *store.Commit, before, after *engine.Instance, sr slotReads) error {
	if holdsNoSlot(after) {
		return nil
	}
	if sr.admitted {
		if sr.queued && sr.oldestInst < after.InstanceID {
			return fmt.Errorf("%s/%d waits behind instance %d: %w", after.WorkflowID, after.InstanceID, sr.oldestInst, store.ErrNoSlot)
		}
		c.Admit, c.SlotLimit = true, sr.limit
		c.SlotDelta++
	}
	if sr.released {
		c.CheckQueue, c.QueueVersion = true, sr.queueVersion
		c.SlotDelta--
		if sr.queued {
			c.WakeOther = &store.RunEvent{InstanceID: sr.oldestInst, RunID: sr.oldestRun, Event: store.Event{
				ID: queueEventID(o.now().UnixMilli()), Body: mustJSON(engine.Continue{}),
			}}
		}
	}
	c.Dequeue = before.Status == model.WorkflowCreated && after.Status != model.WorkflowCreated
	return nil
}

// displace applies LAST_ONLY (a new run stops every older run, running or
// queued) and SERIAL_LATEST_ONLY (it stops the older queued ones; the
// running one goes on) by putting a STOP action into their inboxes. The
// event id is derived from the newcomer, so retries put each once; a run
// that has already ended ignores it.
func (o *Rounds) displace(ctx context.Context, w store.Wake, rule model.RunStrategyRule) error {
	if rule != model.RunLastOnly && rule != model.RunSerialLatestOnly {
		return nil
	}
	holding, queued, err := o.store.Instances.ActiveRuns(ctx, w.WorkflowID, w.InstanceID)
	if err != nil {
		return err
	}
	targets := queued
	if rule == model.RunLastOnly {
		targets = append(holding, queued...)
	}
	stop := mustJSON(engine.Action{Action: string(model.WorkflowActionStop)})
	for _, t := range targets {
		if t.InstanceID > w.InstanceID {
			continue // only older runs give way to a newer one
		}
		ev := store.Event{ID: lastOnlyEventID(w.InstanceID), Body: stop}
		if err := o.store.Runs.PutEvent(ctx, w.WorkflowID, t.InstanceID, t.RunID, ev); err != nil {
			return err
		}
	}
	return nil
}

// pendingAction is an action to apply to a run that cannot start; id is
// its inbox event id ("" for one the runtime adds, FIRST_ONLY's stop).
type pendingAction struct {
	id string
	ev engine.Action
}

// pendingActions returns the Action events among a run's pending events.
func pendingActions(pending []store.Event) []pendingAction {
	var out []pendingAction
	for _, p := range pending {
		if ev, err := engine.UnmarshalEvent(p.Body); err == nil {
			if a, ok := ev.(engine.Action); ok {
				out = append(out, pendingAction{id: p.ID, ev: a})
			}
		}
	}
	return out
}

// withoutStart applies actions to a created run that found no free slot.
// Their events are consumed; if the run ended (stopped or killed), every
// pending event goes with them and it leaves the queue, else its start stays
// pending for when a slot frees.
func (o *Rounds) withoutStart(ctx context.Context, g *engine.Graph, rec *store.RunRecord, before *engine.Instance,
	pending []store.Event, acts []pendingAction, now time.Time) (*engine.Instance, bool, error) {
	acc := decisionSet{g: g}
	cur := before
	var consumed []string
	for _, a := range acts {
		d, err := engine.Decide(ctx, g, cur, a.ev, now)
		if err != nil {
			return nil, false, err
		}
		acc.add(d)
		cur = d.State
		if a.id != "" {
			consumed = append(consumed, a.id)
		}
	}
	ended := cur.Status.IsTerminal()
	if ended {
		consumed = consumed[:0]
		for _, p := range pending {
			consumed = append(consumed, p.ID)
		}
	}
	rd, err := o.gather(ctx, cur, &acc, now, nil)
	if err != nil {
		return nil, false, err
	}
	commit, err := o.buildCommit(ctx, g, rec, before, cur, &acc, consumed, &rd, now)
	if err != nil {
		return nil, false, err
	}
	commit.Dequeue = ended
	// What the events it consumes carried is the run's now.
	for _, p := range pending {
		if slices.Contains(consumed, p.ID) {
			commit.Ops = metering.Sum(commit.Ops, p.Ops)
		}
	}
	if err := o.store.Runs.CommitRun(ctx, commit); err != nil {
		return nil, false, err
	}
	return cur, false, nil
}

// ActOnWorkflow stops or kills every run of a workflow that holds a slot or
// waits for one, by putting the action into each run's inbox; the runs
// apply it asynchronously (as Maestro's workflow-wide actions do). UNBLOCK
// releases the slots that failed STRICT_SEQUENTIAL runs keep.
func (o *Actions) ActOnWorkflow(ctx context.Context, wf, action string) (int, error) {
	a, ok := model.ParseWorkflowAction(action)
	if !ok || (a != model.WorkflowActionStop && a != model.WorkflowActionKill && a != model.WorkflowActionUnblock) {
		return 0, Invalid("bad action", fmt.Sprintf("action: %q is not a workflow action (stop, kill, unblock)", action))
	}
	if _, err := o.head(ctx, wf); err != nil {
		return 0, err
	}
	if a == model.WorkflowActionUnblock {
		return o.unblockWorkflow(ctx, wf)
	}
	holding, queued, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return 0, Internal(err)
	}
	id := workflowActionEventID(o.newUUID())
	body := mustJSON(engine.Action{Action: string(a), Principal: caller.From(ctx)})
	runs := append(holding, queued...)
	for _, r := range runs {
		if err := o.store.Runs.PutEvent(ctx, wf, r.InstanceID, r.RunID, store.Event{ID: id, Body: body}); err != nil {
			return 0, Internal(err)
		}
	}
	return len(runs), nil
}
