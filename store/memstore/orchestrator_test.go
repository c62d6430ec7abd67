package memstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store/memstore"
)

// chain is a workflow of n NoOp steps, each the next's predecessor, whose
// last step reads a param of the first.
func chain(id string, n int) []byte {
	var steps []string
	for i := range n {
		next := ""
		if i < n-1 {
			next = fmt.Sprintf(`, "transition": {"successors": {"s%d": "true"}}`, i+1)
		}
		params := `"params": {"v": {"value": 1, "type": "LONG"}}`
		if i == n-1 {
			params = `"params": {"v": {"expression": "s0__v + 1;", "type": "LONG"}}`
		}
		steps = append(steps, fmt.Sprintf(`{"step": {"id": "s%d", "type": "NoOp", %s%s}}`, i, params, next))
	}
	return []byte(fmt.Sprintf(`{"properties": {"owner": "unit", "run_strategy": "parallel"}, "workflow": {"id": %q, "steps": [%s]}}`,
		id, strings.Join(steps, ", ")))
}

// TestOrchestratorRunsOnMemstore: the orchestrator's roles run on the
// memstore, no emulator: a push, starts whose NoOp steps run to their end
// in the start's own decisions (a run of more steps than a state page
// holds among them), the views and a restart.
func TestOrchestratorRunsOnMemstore(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1_900_000_000_000)
	ms := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	st := stores(ms)
	o := orchestrator.New(orchestrator.Config{Stores: &st, Now: func() time.Time { return now }})
	for _, n := range []int{3, 100} {
		wf := fmt.Sprint("chain-", n)
		if _, err := o.Definitions.CreateWorkflow(ctx, chain(wf, n), orchestrator.FormatJSON); err != nil {
			t.Fatalf("push %s: %v", wf, err)
		}
		r, err := o.Runs.StartWorkflow(ctx, wf, "active", orchestrator.StartRequest{RequestID: "once"})
		if err != nil {
			t.Fatalf("start %s: %v", wf, err)
		}
		again, err := o.Runs.StartWorkflow(ctx, wf, "active", orchestrator.StartRequest{RequestID: "once"})
		if err != nil || again.Created || again.WorkflowInstanceID != r.WorkflowInstanceID {
			t.Fatalf("start %s again: %+v, %v", wf, again, err)
		}
		view, err := o.Runs.GetInstance(ctx, wf, r.WorkflowInstanceID)
		if err != nil || view.Status != "SUCCEEDED" {
			t.Fatalf("instance of %s: %+v, %v", wf, view, err)
		}
		steps, err := o.Runs.ListSteps(ctx, wf, r.WorkflowInstanceID)
		if err != nil || len(steps) != n {
			t.Fatalf("steps of %s: %d, %v", wf, len(steps), err)
		}
		last := steps[len(steps)-1]
		if last.RuntimeState.Status != "SUCCEEDED" || fmt.Sprint(last.Params["v"]) != "2" {
			t.Errorf("last step of %s: %s, v = %v", wf, last.RuntimeState.Status, last.Params["v"])
		}
		view, err = o.Actions.RestartInstance(ctx, wf, r.WorkflowInstanceID, orchestrator.RestartRequest{RestartPolicy: "RESTART_FROM_BEGINNING"})
		if err != nil || view.WorkflowRunID != 2 {
			t.Fatalf("restart %s: %+v, %v", wf, view, err)
		}
		view, err = o.Runs.GetInstance(ctx, wf, r.WorkflowInstanceID)
		if err != nil || view.WorkflowRunID != 2 || view.Status != "SUCCEEDED" {
			t.Fatalf("restarted instance of %s: %+v, %v", wf, view, err)
		}
	}
}
