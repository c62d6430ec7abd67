package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// listItems is an ItemsReader over items held in memory (the engine's own
// interface; the S3 one is package loopitems'). Its cursor offsets are item
// indices; scanErr and readErr make its calls fail.
type listItems struct {
	items   []Values
	scanErr error
	readErr error
	scans   []ItemsSource
	reads   [][]int64
}

func (r *listItems) StepParams(context.Context, string, int64, int64) (Values, error) {
	return nil, errors.New("no offloaded params here")
}

func (r *listItems) ScanItems(_ context.Context, src ItemsSource) (ItemsObject, error) {
	r.scans = append(r.scans, src)
	if r.scanErr != nil {
		return ItemsObject{}, r.scanErr
	}
	return ItemsObject{Total: int64(len(r.items)), ETag: "v1", First: ItemsCursor{Line: 1}}, nil
}

func (r *listItems) ReadItems(_ context.Context, _ ItemsSource, obj ItemsObject, at ItemsCursor, want []int64) ([]Values, ItemsCursor, error) {
	r.reads = append(r.reads, want)
	if r.readErr != nil {
		return nil, at, r.readErr
	}
	if obj.ETag != "v1" || want[0] < at.Index {
		return nil, at, fmt.Errorf("read %v from %+v of %+v", want, at, obj)
	}
	var out []Values
	for _, k := range want {
		out = append(out, r.items[k].Clone())
	}
	last := want[len(want)-1]
	return out, ItemsCursor{Index: last + 1, Offset: last + 1, Line: last + 2}, nil
}

// itemsWorkflow has a foreach step fed by items_from uri, with the given
// concurrency, followed by a NoOp.
func itemsWorkflow(uri string, concurrency int64) *model.Workflow {
	return &model.Workflow{ID: "items", Steps: []model.Step{
		{Kind: model.KindForeach, ID: "loop", Concurrency: &concurrency,
			ItemsFrom:  &model.ItemsFrom{S3URI: uri},
			Params:     params("day", literal(model.TypeString, "2026-11-28")),
			Steps:      []model.Step{{Kind: model.KindStep, ID: "body", Type: model.StepNoOp}},
			Transition: model.Transition{Successors: []model.Successor{{StepID: "after", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "after", Type: model.StepNoOp},
	}}
}

func someItems(n int) []Values {
	out := make([]Values, n)
	for i := range out {
		out[i] = Values{"file": fmt.Sprintf("f%d", i), "size": int64(10 * i)}
	}
	return out
}

func TestItemsFromLaunchesIterationsFromTheObjectsCursor(t *testing.T) {
	r := &listItems{items: someItems(5)}
	g, d := startRun(t, itemsWorkflow("s3://lake/in/${day}.jsonl", 2), WithStepParams(r))
	ctx := context.Background()
	require.Len(t, r.scans, 1)
	assert.Equal(t, ItemsSource{URI: "s3://lake/in/2026-11-28.jsonl", Format: model.ItemsJSONL}, r.scans[0], "the step's param put into the URI, the format from its ending")
	create := commandsOf[CreateLoop](d.Commands)
	require.Len(t, create, 1)
	assert.Equal(t, "f0", create[0].Params["file"], "the inline workflow declares the first item's fields")
	starts := commandsOf[StartChild](d.Commands)
	require.Len(t, starts, 2)
	for k, sc := range starts {
		assert.Equal(t, int64(k), sc.Params[LoopIndexName])
		assert.Equal(t, fmt.Sprintf("f%d", k), sc.Params["file"])
		assert.Equal(t, int64(10*k), sc.Params["size"])
		assert.Equal(t, "2026-11-28", sc.Params["day"], "the step's own params are passed down")
	}
	st := d.State
	l := st.Step("loop").Loop
	assert.Equal(t, int64(5), l.Total)
	assert.Equal(t, ItemsCursor{Index: 2, Offset: 2, Line: 3}, l.Items.At)

	for idx := int64(0); idx < 5; idx++ {
		d, err := Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: model.WorkflowSucceeded}, t0, WithStepParams(r))
		require.NoError(t, err)
		st = d.State
		if idx < 3 {
			starts := commandsOf[StartChild](d.Commands)
			require.Len(t, starts, 1)
			assert.Equal(t, idx+2, starts[0].Index)
			assert.Equal(t, fmt.Sprintf("f%d", idx+2), starts[0].Params["file"])
		}
	}
	assert.Equal(t, [][]int64{{0}, {0, 1}, {2}, {3}, {4}}, r.reads, "the first item read for the inline definition, then each launch from the cursor")
	assert.Len(t, r.scans, 1, "the object is scanned once, at the start")
	assert.Equal(t, model.StepSucceeded, st.Step("loop").Status)
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	assert.Equal(t, int64(5), st.Step("loop").Loop.Summary().Counts[model.WorkflowSucceeded])
}

func TestItemsFromTheObjectsFaultFailsTheStepAReadFailureTheDecision(t *testing.T) {
	bad := &listItems{items: someItems(3), scanErr: &ItemsError{Msg: "items_from s3://lake/in.jsonl line 3: not a JSON object"}}
	_, d := startRun(t, itemsWorkflow("s3://lake/in.jsonl", 2), WithStepParams(bad))
	s := d.State.Step("loop")
	assert.Equal(t, model.StepFatallyFailed, s.Status)
	assert.Contains(t, s.Message, "line 3: not a JSON object")
	assert.Equal(t, model.WorkflowFailed, d.State.Status)

	g, err := Compile(itemsWorkflow("s3://lake/in.jsonl", 2), newEvaluator(t))
	require.NoError(t, err)
	down := &listItems{items: someItems(3), readErr: errors.New("connection reset")}
	_, err = Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithStepParams(down))
	require.ErrorContains(t, err, "connection reset", "a failed read fails the decision, to be tried again, not the step")

	_, err = Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.ErrorContains(t, err, "no reader of S3 objects")

	empty := &listItems{}
	_, d = startRun(t, itemsWorkflow("s3://lake/in.jsonl", 2), WithStepParams(empty))
	assert.Equal(t, model.StepSucceeded, d.State.Step("loop").Status)
	assert.Empty(t, empty.reads)
}

func TestItemsFromRestartReadsThePendingItemsFromTheStart(t *testing.T) {
	r := &listItems{items: someItems(4)}
	g, d := startRun(t, itemsWorkflow("s3://lake/in.jsonl", 4), WithStepParams(r))
	st := d.State
	for idx, status := range []model.WorkflowStatus{model.WorkflowSucceeded, model.WorkflowFailed, model.WorkflowSucceeded, model.WorkflowFailed} {
		d, err := Decide(context.Background(), g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status}, t0, WithStepParams(r))
		require.NoError(t, err)
		st = d.State
	}
	require.Equal(t, model.WorkflowFailed, st.Status)
	next, err := RestartState(st, RestartFromIncomplete, t0)
	require.NoError(t, err)
	d, err = Decide(context.Background(), g, next, StartRun{}, t0, WithStepParams(r))
	require.NoError(t, err)
	rc := commandsOf[RestartChild](d.Commands)
	require.Len(t, rc, 2)
	assert.Equal(t, "f1", rc[0].Params["file"])
	assert.Equal(t, "f3", rc[1].Params["file"])
	assert.Equal(t, []int64{1, 3}, r.reads[len(r.reads)-1])
	assert.Equal(t, int64(4), d.State.Step("loop").Loop.Items.PendingAt.Index)
}

func TestItemsFromRestartAfterAStopSeeksTheItemsNeverLaunched(t *testing.T) {
	r := &listItems{items: someItems(5)}
	g, d := startRun(t, itemsWorkflow("s3://lake/in.jsonl", 1), WithStepParams(r))
	st := d.State
	for idx, status := range []model.WorkflowStatus{model.WorkflowSucceeded, model.WorkflowFailed} {
		d, err := Decide(context.Background(), g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status}, t0, WithStepParams(r))
		require.NoError(t, err)
		st = d.State
	}
	require.Equal(t, model.WorkflowFailed, st.Status)
	require.Equal(t, int64(2), st.Step("loop").Loop.Next, "the failure stopped the launches")
	next, err := RestartState(st, RestartFromIncomplete, t0)
	require.NoError(t, err)
	d, err = Decide(context.Background(), g, next, StartRun{}, t0, WithStepParams(r))
	require.NoError(t, err)
	st = d.State
	rc := commandsOf[RestartChild](d.Commands)
	require.Len(t, rc, 1)
	assert.Equal(t, "f1", rc[0].Params["file"])
	for _, idx := range []int64{1, 2, 3} {
		d, err := Decide(context.Background(), g, st, ChildEnded{StepID: "loop", Attempt: st.Step("loop").Attempt, Index: idx, Status: model.WorkflowSucceeded}, t0, WithStepParams(r))
		require.NoError(t, err)
		st = d.State
		sc := commandsOf[StartChild](d.Commands)
		require.Len(t, sc, 1, "after %d", idx)
		assert.Equal(t, fmt.Sprintf("f%d", idx+1), sc[0].Params["file"], "the cursor sought item %d from the first", idx+1)
	}
}
