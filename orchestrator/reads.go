package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Maestro's read endpoints beyond a run and its steps: a step across
// runs, the steps of one run, a workflow's overview, timeline and
// properties snapshot, and the lookups between a loop's iterations and
// the runs above them.

// ListRunSteps returns the latest attempt of each step that has one in
// run run of an instance, by step id (Maestro's GET
// .../runs/{runId}/steps). Steps a restart carried over from an earlier
// run are not the run's: they are listed under that run.
func (o *Runs) ListRunSteps(ctx context.Context, wf string, inst, run int64) ([]*StepView, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	if run > rec.RunID {
		return nil, NotFound("workflow %s instance %d has no run %d", wf, inst, run)
	}
	return o.stepsOfRun(ctx, wf, inst, run, false)
}

// GetStepView returns a step of an instance across its runs (Maestro's
// GET .../instances/{instanceId}/steps/{stepId}): its latest attempt in
// the latest run, or, for a step a restart carried over, in the run it
// ran in. A step that has not been created is a 404.
func (o *Runs) GetStepView(ctx context.Context, wf string, inst int64, step string) (*StepView, error) {
	views, err := o.ListSteps(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		if v.StepID == step {
			return v, nil
		}
	}
	return nil, NotFound("workflow %s instance %d has no step %s that was created", wf, inst, step)
}

// PropertiesSnapshot is the body of a workflow's properties snapshot:
// Maestro's PropertiesSnapshot, the stored properties with the workflow
// id and the snapshot's create_time (its id).
type PropertiesSnapshot = json.RawMessage

// snapshotView lays workflow_id and create_time over the stored
// properties of head.
func snapshotView(head *store.WorkflowHead) (PropertiesSnapshot, error) {
	fields := map[string]json.RawMessage{}
	if len(head.Properties) > 0 {
		if err := json.Unmarshal(head.Properties, &fields); err != nil {
			return nil, Internal(fmt.Errorf("decode stored properties of %s: %w", head.WorkflowID, err))
		}
	}
	fields["workflow_id"] = mustJSON(head.WorkflowID)
	fields["create_time"] = mustJSON(head.ModifyTime)
	return mustJSON(fields), nil
}

// GetPropertiesSnapshot returns a workflow's properties snapshot by id:
// "latest", or the create_time of the current one. The runtime keeps only
// the current snapshot (the head's properties, changed in place), so an
// older id is a 404 saying so.
func (o *Definitions) GetPropertiesSnapshot(ctx context.Context, wf, snapshotID string) (PropertiesSnapshot, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(snapshotID, "latest") {
		id, err := strconv.ParseInt(snapshotID, 10, 64)
		if err != nil || id <= 0 {
			return nil, Invalid("invalid parameter snapshotId", "snapshotId: must be latest or a snapshot id (its create_time, a positive integer)")
		}
		if id != head.ModifyTime {
			return nil, NotFound("workflow %s has no properties snapshot %d: only the current one (%d) is kept", wf, id, head.ModifyTime)
		}
	}
	return snapshotView(head)
}

// WorkflowOverview is Maestro's WorkflowOverviewResponse: a workflow's
// versions, properties and the instances that have not ended.
type WorkflowOverview struct {
	WorkflowID string `json:"workflow_id"`
	// ActiveVersionID is absent when no version is active.
	ActiveVersionID    *int64             `json:"active_version_id,omitempty"`
	LatestVersionID    int64              `json:"latest_version_id"`
	DefaultVersionID   int64              `json:"default_version_id"`
	PropertiesSnapshot PropertiesSnapshot `json:"properties_snapshot,omitempty"`
	StepConcurrency    *int64             `json:"step_concurrency,omitempty"`
	// NonterminalInstances counts the instances that have not ended by
	// status: those running and those queued by the run strategy.
	NonterminalInstances map[string]int64 `json:"nonterminal_instances"`
	LatestInstanceID     int64            `json:"latest_instance_id"`
}

// GetWorkflowOverview returns a workflow's overview (Maestro's GET
// /workflows/{id}/overview). The instances that have not ended are those
// in the run strategy's slots and queue (one item), their statuses read
// from their summaries; Maestro's failed_instances would need a read of
// every instance and is not given.
func (o *Definitions) GetWorkflowOverview(ctx context.Context, wf string) (*WorkflowOverview, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	snap, err := snapshotView(head)
	if err != nil {
		return nil, err
	}
	out := &WorkflowOverview{
		WorkflowID: wf, LatestVersionID: head.Latest, DefaultVersionID: head.Latest,
		PropertiesSnapshot: snap, LatestInstanceID: max(head.NextInstance-1, 0),
		NonterminalInstances: map[string]int64{},
	}
	if head.Active != 0 {
		active := head.Active
		out.ActiveVersionID, out.DefaultVersionID = &active, active
	}
	var props struct {
		StepConcurrency *int64 `json:"step_concurrency"`
	}
	if len(head.Properties) > 0 && json.Unmarshal(head.Properties, &props) == nil {
		out.StepConcurrency = props.StepConcurrency
	}
	for _, st := range model.WorkflowStatuses() {
		if !st.IsTerminal() {
			out.NonterminalInstances[string(st)] = 0
		}
	}
	holding, queued, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return nil, Internal(err)
	}
	var insts []int64
	for _, r := range append(holding, queued...) {
		insts = append(insts, r.InstanceID)
	}
	err = chunks(insts, 100, func(part []int64) error {
		recs, err := o.store.Instances.GetInstances(ctx, wf, part)
		for _, r := range recs {
			if !model.WorkflowStatus(r.Status).IsTerminal() {
				out.NonterminalInstances[r.Status]++
			}
		}
		return err
	})
	if err != nil {
		return nil, Internal(err)
	}
	return out, nil
}

// MaxTimelineEvents is how many events a workflow timeline holds at most,
// Maestro's bound (the newest 300).
const MaxTimelineEvents = 300

// WorkflowTimeline is Maestro's WorkflowTimeline: a workflow's change
// history, newest first.
type WorkflowTimeline struct {
	WorkflowID     string                  `json:"workflow_id"`
	TimelineEvents []WorkflowTimelineEvent `json:"timeline_events"`
}

// WorkflowTimelineEvent is one change of a workflow.
type WorkflowTimelineEvent struct {
	Author    *User  `json:"author,omitempty"`
	Log       string `json:"log"`
	Timestamp int64  `json:"timestamp"`
}

// GetWorkflowTimeline returns a workflow's change history (Maestro's GET
// /workflows/{id}/timeline): the push of each of its newest
// MaxTimelineEvents versions, by whom and when, newest first. The runtime
// records no history of activations and properties changes beside the
// versions, so they are not in it.
func (o *Definitions) GetWorkflowTimeline(ctx context.Context, wf string) (*WorkflowTimeline, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	out := &WorkflowTimeline{WorkflowID: wf, TimelineEvents: []WorkflowTimelineEvent{}}
	if head.Latest < 1 {
		return out, nil
	}
	want := ids(max(1, head.Latest-MaxTimelineEvents+1), head.Latest)
	got := map[int64]*store.VersionRecord{}
	err = chunks(want, 100, func(part []int64) error {
		recs, err := o.store.Definitions.GetVersionStamps(ctx, wf, part)
		for v, r := range recs {
			got[v] = r
		}
		return err
	})
	if err != nil {
		return nil, Internal(err)
	}
	for _, v := range want {
		r, ok := got[v]
		if !ok {
			continue
		}
		e := WorkflowTimelineEvent{Log: fmt.Sprintf("Created a new workflow version [%d] for workflow id [%s]", v, wf), Timestamp: r.CreateTime}
		if r.Principal != "" {
			e.Author = &User{Name: r.Principal}
		}
		out.TimelineEvents = append(out.TimelineEvents, e)
	}
	return out, nil
}

// UpstreamInfo is one node of a path through loops: Maestro's
// UpstreamInitiator.Info.
type UpstreamInfo struct {
	WorkflowID    string `json:"workflow_id"`
	InstanceID    int64  `json:"instance_id"`
	RunID         int64  `json:"run_id,omitempty"`
	StepID        string `json:"step_id,omitempty"`
	StepAttemptID int64  `json:"step_attempt_id,omitempty"`
}

// maxInlineDepth bounds the climb from an iteration to the run above its
// loops: deeper than any nesting a definition may have.
const maxInlineDepth = 64

// GetInlinePath returns the path from the first run above a loop
// iteration that is not itself an iteration, through the loop steps, to
// the iteration (Maestro's GET .../instances/{instanceId}/inline-path):
// each node above names the run and the loop step attempt, the last one
// the iteration's workflow and instance. An instance that is not a loop's
// iteration is a 400.
func (o *Runs) GetInlinePath(ctx context.Context, wf string, inst int64) ([]UpstreamInfo, error) {
	if !model.IsInlineWorkflowID(wf) {
		return nil, Invalid("not an inline workflow", fmt.Sprintf("id: %s is not a loop's inline workflow; only the iterations of foreach and while steps have an inline path", wf))
	}
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	_, st, err := o.loadRun(ctx, wf, inst, rec.RunID)
	if err != nil {
		return nil, err
	}
	path := []UpstreamInfo{{WorkflowID: wf, InstanceID: inst}}
	for p := st.Parent; ; {
		if p == nil {
			return nil, Internal(fmt.Errorf("iteration %s/%d: a run above it has no parent", wf, inst))
		}
		path = append(path, UpstreamInfo{WorkflowID: p.WorkflowID, InstanceID: p.InstanceID, RunID: p.RunID, StepID: p.StepID, StepAttemptID: p.Attempt})
		if !model.IsInlineWorkflowID(p.WorkflowID) {
			break
		}
		if len(path) > maxInlineDepth {
			return nil, Internal(fmt.Errorf("iteration %s/%d: more than %d loops above it", wf, inst, maxInlineDepth))
		}
		_, up, err := o.loadRun(ctx, p.WorkflowID, p.InstanceID, p.RunID)
		if err != nil {
			return nil, err
		}
		p = up.Parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

// GetInlineWorkflowID returns the inline workflow of the innermost loop
// around a step (Maestro's GET /workflows/instances/inline-workflow-id):
// nodes[0] names the run above the loops (workflow and instance, its
// latest run), each following node the iteration (instance) to descend
// into, and the last one the step. The loop steps on the way are found
// in the definitions.
func (o *Runs) GetInlineWorkflowID(ctx context.Context, nodes []UpstreamInfo) (string, error) {
	if len(nodes) < 2 {
		return "", Invalid("invalid node path", "request body: must list at least the run above the loops and the step")
	}
	root, target := nodes[0], nodes[len(nodes)-1]
	wf, inst := root.WorkflowID, root.InstanceID
	var stepPath []string
	for depth := range len(nodes) - 1 {
		rec, err := o.instance(ctx, wf, inst)
		if err != nil {
			return "", err
		}
		_, st, err := o.loadRun(ctx, wf, inst, rec.RunID)
		if err != nil {
			return "", err
		}
		if depth == 0 {
			_, def, err := o.graph(ctx, wf, st.WorkflowVersion)
			if err != nil {
				return "", Internal(err)
			}
			stepPath = pathToStep(def.Workflow.Steps, target.StepID)
			if len(stepPath) != len(nodes) {
				return "", Invalid("invalid node path", fmt.Sprintf("request body: step %s is inside %d loops of workflow %s; the path names %d", target.StepID, max(len(stepPath)-1, 0), root.WorkflowID, len(nodes)-1))
			}
		}
		ss := st.Step(stepPath[depth])
		if ss == nil || ss.Loop == nil {
			return "", NotFound("loop step %s of workflow %s instance %d has not started its iterations", stepPath[depth], wf, inst)
		}
		wf, inst = ss.Loop.WorkflowID, nodes[depth+1].InstanceID
	}
	return wf, nil
}

// pathToStep returns the ids of the loop steps around step target and the
// target itself, outermost first; nil when steps do not hold it.
func pathToStep(steps []model.Step, target string) []string {
	for i := range steps {
		s := &steps[i]
		if s.ID == target {
			return []string{s.ID}
		}
		if s.Kind == model.KindForeach || s.Kind == model.KindWhile {
			if inner := pathToStep(s.Steps, target); inner != nil {
				return append([]string{s.ID}, inner...)
			}
		}
	}
	return nil
}
