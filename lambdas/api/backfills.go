package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// BackfillService creates, reads and operates backfills
// (orchestrator.Backfills).
type BackfillService interface {
	// CreateBackfill creates a backfill of the workflow's active version.
	CreateBackfill(ctx context.Context, wf string, req orchestrator.BackfillRequest) (*orchestrator.BackfillView, error)

	// EstimateBackfill answers a dry run; it writes nothing.
	EstimateBackfill(ctx context.Context, wf string, req orchestrator.BackfillRequest) (*orchestrator.BackfillEstimate, error)

	// GetBackfill and ListBackfills read backfills and their progress.
	GetBackfill(ctx context.Context, wf, id string) (*orchestrator.BackfillView, error)

	ListBackfills(ctx context.Context, wf string) (*orchestrator.BackfillList, error)

	// ActOnBackfill pauses, resumes or cancels a backfill.
	ActOnBackfill(ctx context.Context, wf, id, action string) (*orchestrator.BackfillView, error)

	// SetBackfillPriority changes a backfill's priority.
	SetBackfillPriority(ctx context.Context, wf, id, priority string) (*orchestrator.BackfillView, error)
}

// backfillsPath is the prefix of a workflow's backfill routes.
const backfillsPath = workflowsPath + "/{id}/backfills"

// backfillAPI serves the backfill routes.
type backfillAPI struct{ *server }

// register adds the routes.
func (s backfillAPI) register(route func(string, apiFunc)) {
	route("POST "+backfillsPath, s.create)
	route("GET "+backfillsPath, s.list)
	route("GET "+backfillsPath+"/{bid}", s.get)
	route("PUT "+backfillsPath+"/{bid}", s.update)
	route("PUT "+backfillsPath+"/{bid}/actions/{action}", s.act)
}

// backfillGuards are the routes' guards: reading needs a reader, creating
// and operating an operator (as starting the workflow does).
func backfillGuards() map[string]guard {
	return map[string]guard{
		"POST " + backfillsPath:                            onWorkflow(access.Start),
		"GET " + backfillsPath:                             onWorkflow(access.Read),
		"GET " + backfillsPath + "/{bid}":                  onWorkflow(access.Read),
		"PUT " + backfillsPath + "/{bid}":                  onWorkflow(access.Start),
		"PUT " + backfillsPath + "/{bid}/actions/{action}": onWorkflow(access.Start),
	}
}

// backfillSummaries are the OpenAPI summaries of the routes.
func backfillSummaries() map[string]string {
	return map[string]string{
		"POST " + backfillsPath: "Backfill the active version's time-trigger firings in [from, to): " +
			`{"from", "to" (RFC 3339), "concurrency" (1-100, default 1), "priority" ("normal" or "low"), "dry_run"}; ` +
			"a dry run creates nothing and answers the instances, steps, waves and expected duration",
		"GET " + backfillsPath:                             "The workflow's newest backfills (at most 100) and their progress",
		"GET " + backfillsPath + "/{bid}":                  "A backfill's progress: counts by status, running, pending, next firing, ETA",
		"PUT " + backfillsPath + "/{bid}":                  `Change a backfill's priority: {"priority": "normal" or "low"}`,
		"PUT " + backfillsPath + "/{bid}/actions/{action}": "Pause, resume or cancel a backfill (cancel stops its running instances)",
	}
}

// parseBackfill reads a backfill request strictly: from and to are
// required strings, concurrency a positive integer (default 1), priority a
// string, dry_run a boolean; nothing else is allowed.
func parseBackfill(body []byte) (orchestrator.BackfillRequest, error) {
	req := orchestrator.BackfillRequest{Concurrency: 1}
	fields, err := requiredBody(body, "invalid backfill")
	if err != nil {
		return req, err
	}
	var errs []string
	for _, f := range fields {
		switch f.name {
		case "from":
			errs = append(errs, stringField(f, &req.From)...)
		case "to":
			errs = append(errs, stringField(f, &req.To)...)
		case "priority":
			errs = append(errs, stringField(f, &req.Priority)...)
		case "concurrency":
			n, err := strconv.Atoi(strings.TrimSpace(string(f.value)))
			if err != nil {
				errs = append(errs, "concurrency: must be an integer from 1 to "+strconv.Itoa(orchestrator.MaxBackfillConcurrency))
				continue
			}
			req.Concurrency = n
		case "dry_run":
			if err := json.Unmarshal(f.value, &req.DryRun); err != nil {
				errs = append(errs, "dry_run: must be a boolean")
			}
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown field", fieldName(f.name)))
		}
	}
	errs = append(errs, missingFields(fields, "from", "to")...)
	if len(errs) > 0 {
		return req, orchestrator.Invalid("invalid backfill", errs...)
	}
	return req, nil
}

func (s backfillAPI) create(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	req, err := parseBackfill(body)
	if err != nil {
		return err
	}
	wf := r.PathValue("id")
	if req.DryRun {
		est, err := s.svc.Backfills.EstimateBackfill(r.Context(), wf, req)
		return answer(w, est, err, "EstimateBackfill")
	}
	v, err := s.svc.Backfills.CreateBackfill(r.Context(), wf, req)
	if err != nil {
		return err
	}
	if err := present(v, "CreateBackfill"); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, v)
}

func (s backfillAPI) list(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Backfills.ListBackfills(r.Context(), r.PathValue("id"))
	return answer(w, v, err, "ListBackfills")
}

func (s backfillAPI) get(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Backfills.GetBackfill(r.Context(), r.PathValue("id"), r.PathValue("bid"))
	return answer(w, v, err, "GetBackfill")
}

func (s backfillAPI) act(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Backfills.ActOnBackfill(r.Context(), r.PathValue("id"), r.PathValue("bid"), r.PathValue("action"))
	return answer(w, v, err, "ActOnBackfill")
}

// update changes a backfill's priority: {"priority": "normal" | "low"},
// nothing else.
func (s backfillAPI) update(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	fields, err := requiredBody(body, "invalid backfill update")
	if err != nil {
		return err
	}
	var priority string
	var errs []string
	for _, f := range fields {
		if f.name != "priority" {
			errs = append(errs, fmt.Sprintf("%s: unknown field", fieldName(f.name)))
			continue
		}
		errs = append(errs, stringField(f, &priority)...)
	}
	errs = append(errs, missingFields(fields, "priority")...)
	if len(errs) > 0 {
		return orchestrator.Invalid("invalid backfill update", errs...)
	}
	v, err := s.svc.Backfills.SetBackfillPriority(r.Context(), r.PathValue("id"), r.PathValue("bid"), priority)
	return answer(w, v, err, "SetBackfillPriority")
}
