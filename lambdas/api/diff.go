package api

import (
	"context"
	"net/http"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/definition/diff"
)

// DiffService compares stored versions of a workflow.
type DiffService interface {
	// DiffVersions compares two versions, each chosen by a selector
	// ("active", "latest", "default" or a number): what changed from the
	// first to the second. A missing workflow or version is a 404.
	DiffVersions(ctx context.Context, workflowID, from, to string) (*diff.Diff, error)
}

// diffAPI serves the version diff route; its handlers reach the server
// through the embedded *server.
type diffAPI struct{ *server }

// versionDiffPath is the path of the version diff.
const versionDiffPath = workflowsPath + "/{id}/versions/{version}/diff/{other}"

func (s diffAPI) register(route func(string, apiFunc)) {
	route("GET "+versionDiffPath, s.diffVersions)
}

// diffGuards are the guards of the diff route: reading two versions is
// reading the workflow.
func diffGuards() map[string]guard {
	return map[string]guard{"GET " + versionDiffPath: onWorkflow(access.Read)}
}

// diffSummaries are the OpenAPI summaries of the diff route.
func diffSummaries() map[string]string {
	return map[string]string{
		"GET " + versionDiffPath: "What changed from one version to another (each active, latest, default or a number): steps added, removed and changed " +
			"(by id, at every nesting level), edges, workflow params, workflow fields and the properties pushed with each version, with JSON paths; " +
			"at most limit entries, truncated when more changed",
	}
}

// diffVersions serves GET .../versions/{version}/diff/{other}.
func (s diffAPI) diffVersions(w http.ResponseWriter, r *http.Request) error {
	from, err := versionSelectorAt(r, "version")
	if err != nil {
		return err
	}
	to, err := versionSelectorAt(r, "other")
	if err != nil {
		return err
	}
	d, err := s.svc.Diffs.DiffVersions(r.Context(), r.PathValue("id"), from, to)
	return answer(w, d, err, "DiffVersions")
}
