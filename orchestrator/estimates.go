package orchestrator

import (
	"context"
	"fmt"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// DefaultForeachEstimateOver is how many iterations a foreach step attempt
// has past which its view carries an estimate (Config.ForeachEstimateOver).
const DefaultForeachEstimateOver = 1000

// priorLoops is how many of the workflow's latest succeeded instances a
// loop estimate looks through for an earlier run of the same foreach step.
const priorLoops = 5

// LoopEstimate is what a foreach step attempt of many iterations is
// expected to take and cost, from iterations that already ran: this
// attempt's ended ones, or, before any has, those of the same step in the
// workflow's latest succeeded run that has one.
type LoopEstimate struct {
	// Iterations is the loop's; Steps the steps they run (iterations ×
	// the body's top-level steps); Waves ceil(iterations / concurrency).
	Iterations  int64 `json:"iterations"`
	Steps       int64 `json:"steps"`
	Concurrency int64 `json:"concurrency"`
	Waves       int64 `json:"waves"`
	// From says which iterations it was taken from.
	From string `json:"from"`
	// Duration is the iterations' p50 and p90 times the waves; Cost their
	// recorded costs' p50 and p90 times the iterations. Each is nil, with
	// its reason, without a succeeded iteration to take it from.
	Duration       *DurationEstimate `json:"duration"`
	DurationReason string            `json:"duration_reason,omitempty"`
	Cost           *CostEstimate     `json:"cost"`
	CostReason     string            `json:"cost_reason,omitempty"`
}

// estimated reports whether a foreach attempt's view carries an estimate:
// it is past the stack's threshold.
func (o *Runs) estimated(l *engine.LoopSummary) bool {
	return l != nil && l.WorkflowID != "" && o.estimateOver >= 0 && l.Total > o.estimateOver
}

// loopEstimate estimates foreach attempt l of step of run run of instance
// inst of wf (estimated(l) holds).
func (o *Runs) loopEstimate(ctx context.Context, wf string, inst, run int64, step string, l *engine.LoopSummary) (*LoopEstimate, error) {
	conc, body := int64(1), int64(0)
	// The run item alone (not its inbox, as loadState would read).
	runs, err := o.store.Runs.GetRuns(ctx, []store.RunKey{{WorkflowID: wf, InstanceID: inst, RunID: run}})
	if err != nil {
		return nil, Internal(err)
	}
	if rec := runs[store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run}]; rec != nil {
		st, err := decodeState(rec)
		if err != nil {
			return nil, Internal(err)
		}
		if s := st.Step(step); s != nil && s.Loop != nil && s.Loop.WorkflowID == l.WorkflowID {
			conc = max(1, s.Loop.Concurrency)
		}
		if g, _, err := o.graph(ctx, st.WorkflowID, st.WorkflowVersion); err == nil && g.Step(step) != nil {
			body = int64(len(g.Step(step).Steps))
		}
	}
	est := &LoopEstimate{Iterations: l.Total, Steps: l.Total * body}
	recent, err := o.succeededIterations(ctx, l.WorkflowID)
	if err != nil {
		return nil, err
	}
	est.From = fmt.Sprintf("this loop's succeeded iterations (%s)", l.WorkflowID)
	if len(recent) == 0 {
		prior, from, err := o.priorLoop(ctx, wf, inst, step)
		if err != nil {
			return nil, err
		}
		recent, est.From = prior, from
	}
	est.Concurrency, est.Waves = conc, (l.Total+conc-1)/conc
	if est.Duration = durationEstimate(recent, est.Waves); est.Duration == nil {
		est.DurationReason = "no succeeded iteration of this step to estimate from"
	}
	if est.Cost, err = o.costEstimate(ctx, recent, l.Total); err != nil {
		return nil, err
	}
	if est.Cost == nil {
		est.CostReason = "no succeeded iteration of this step to estimate from"
	}
	if len(recent) == 0 {
		est.From = ""
	}
	return est, nil
}

// succeededIterations are the latest succeeded iterations (instances) of
// a loop's inline workflow, at most durationSample.
func (o *Runs) succeededIterations(ctx context.Context, inline string) ([]*store.InstanceRecord, error) {
	recent, _, err := o.store.Instances.ListInstances(ctx, inline, string(model.WorkflowSucceeded), "", durationSample)
	if err != nil {
		return nil, Internal(err)
	}
	return recent, nil
}

// priorLoop finds the same foreach step in the workflow's latest succeeded
// instances (other than inst) and returns its succeeded iterations and
// where they come from; none when no such run has one.
func (o *Runs) priorLoop(ctx context.Context, wf string, inst int64, step string) ([]*store.InstanceRecord, string, error) {
	prior, _, err := o.store.Instances.ListInstances(ctx, wf, string(model.WorkflowSucceeded), "", priorLoops+1)
	if err != nil {
		return nil, "", Internal(err)
	}
	keys := make([]store.RunKey, 0, len(prior))
	for _, r := range prior {
		if r.InstanceID != inst {
			keys = append(keys, store.RunKey{WorkflowID: r.WorkflowID, InstanceID: r.InstanceID, RunID: r.RunID})
		}
	}
	if len(keys) == 0 {
		return nil, "", nil
	}
	runs, err := o.store.Runs.GetRuns(ctx, keys)
	if err != nil {
		return nil, "", Internal(err)
	}
	for _, k := range keys {
		rec := runs[k]
		if rec == nil {
			continue
		}
		st, err := decodeState(rec)
		if err != nil {
			return nil, "", Internal(err)
		}
		s := st.Step(step)
		if s == nil || s.Loop == nil || s.Loop.WorkflowID == "" || s.Loop.While {
			continue
		}
		its, err := o.succeededIterations(ctx, s.Loop.WorkflowID)
		if err != nil || len(its) > 0 {
			return its, fmt.Sprintf("instance %d's loop of step %s (%s)", k.InstanceID, step, s.Loop.WorkflowID), err
		}
	}
	return nil, "", nil
}
