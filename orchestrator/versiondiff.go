package orchestrator

import (
	"context"

	"github.com/maestro-serverless/maestro/definition/diff"
)

// DiffVersions compares two stored versions of workflow wf, each chosen by
// a selector as GetWorkflowVersion takes ("active", "latest", "default" or
// a number): the steps, edges, params, workflow fields and pushed
// properties that changed from the first to the second (package diff). A
// missing workflow or version is a 404 naming it.
func (o *Definitions) DiffVersions(ctx context.Context, wf, from, to string) (*diff.Diff, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	a, err := resolveVersion(head, from)
	if err != nil {
		return nil, err
	}
	b, err := resolveVersion(head, to)
	if err != nil {
		return nil, err
	}
	keys := []int64{a, b}
	if a == b { // BatchGetItem refuses a key twice
		keys = keys[:1]
	}
	recs, err := o.store.Definitions.GetVersions(ctx, wf, keys)
	if err != nil {
		return nil, Internal(err)
	}
	for _, v := range []int64{a, b} {
		if recs[v] == nil {
			return nil, NotFound("workflow %s has no version %d", wf, v)
		}
	}
	d, err := diff.Compare(wf, diff.Version{Number: a, Document: recs[a].Definition}, diff.Version{Number: b, Document: recs[b].Definition}, diff.Options{})
	if err != nil {
		return nil, Internal(err)
	}
	return d, nil
}
