package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/maestro-serverless/maestro/store"
)

// purgeBudget is how many items one purge round deletes; a round re-arms
// the next one until nothing is left.
const purgeBudget = 500

// DeleteResult answers a workflow deletion.
type DeleteResult struct {
	WorkflowID string `json:"workflow_id"`
	// Status is DELETING: definitions are gone at once, instances and their
	// history are removed in the background.
	Status string `json:"status"`
}

// DeleteWorkflow deletes a workflow: its head goes at once (the workflow no
// longer exists for reads, starts and pushes), and a deletion job removes
// its versions, instances and their history in rounds on the work queue.
// A workflow with running or queued instances is refused (409): stop or
// kill them first. The id can be pushed again once the purge is done.
func (o *Definitions) DeleteWorkflow(ctx context.Context, wf string) (*DeleteResult, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return nil, err
	}
	holding, queued, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return nil, Internal(err)
	}
	if n := len(holding) + len(queued); n > 0 {
		return nil, Conflict("workflow %s has %d running or queued instances; stop or kill them first (PUT /api/v3/workflows/%s/actions/kill)", wf, n, wf)
	}
	if id, err := o.activeBackfill(ctx, wf); err != nil {
		return nil, Internal(err)
	} else if id != "" {
		// Its runs hold no run slot: the check above does not see them.
		return nil, Conflict("workflow %s has backfill %s going on; cancel it first (PUT /api/v3/workflows/%s/backfills/%s/actions/cancel)", wf, id, wf, id)
	}
	err = o.store.Definitions.DeleteWorkflow(ctx, wf, purgeMessage(wf, 1), o.now(), syncMessage(wf))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, NotFound("workflow %s does not exist", wf)
	case errors.Is(err, store.ErrBusy):
		return nil, Conflict("workflow %s has runs in progress; stop or kill them first", wf)
	case errors.Is(err, store.ErrConflict):
		return nil, Conflict("workflow %s changed while it was being deleted; try again", wf)
	case errors.Is(err, store.ErrDeleting):
		return nil, Conflict("workflow %s is already being deleted", wf)
	case err != nil:
		return nil, Internal(err)
	}
	if _, err := o.store.Gates.DeleteTagPermit(ctx, workflowTag(wf)); err != nil && !errors.Is(err, store.ErrNotFound) {
		o.log.WarnContext(ctx, "removing the step_concurrency permit of a deleted workflow failed", "workflow_id", wf, "error", err)
	}
	return &DeleteResult{WorkflowID: wf, Status: "DELETING"}, nil
}

func purgeMessage(wf string, round int64) store.Message {
	return store.Message{Queue: store.QueueWork, Body: EncodeWork(PurgeWork{WorkflowID: wf, Round: round})}
}

// purge runs one purge round and arms the next while items are left.
func (o *Worker) purge(ctx context.Context, m PurgeWork) error {
	done, n, err := o.store.Definitions.PurgeWorkflow(ctx, m.WorkflowID, purgeBudget)
	if err != nil {
		return err
	}
	o.log.InfoContext(ctx, "purged workflow items", "workflow_id", m.WorkflowID, "round", m.Round, "deleted", n, "done", done)
	if done {
		return nil
	}
	return o.store.Definitions.RearmPurge(ctx, m.WorkflowID, m.Round+1, purgeMessage(m.WorkflowID, m.Round+1))
}

// deletedConflict maps a push of a workflow id being deleted to a 409.
func deletedConflict(wf string, err error) error {
	if errors.Is(err, store.ErrDeleting) {
		return &Error{Status: http.StatusConflict, Message: fmt.Sprintf("workflow %s is being deleted; push it again once its deletion is done", wf)}
	}
	return Internal(err)
}
