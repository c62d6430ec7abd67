package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// flattenIterations serves GET /api/v3/views/flatten/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}
// ?first=N|last=N&cursor=C&statuses=S,T&loopParams=B: Maestro's paged list of a
// step's iterations (loopParams: base64url of a JSON object of loop param
// values, as Maestro takes it).
func (s *server) flattenIterations(w http.ResponseWriter, r *http.Request) error {
	instanceID, runID, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var fq orchestrator.FlattenQuery
	for name, dst := range map[string]*int{"first": &fq.First, "last": &fq.Last} {
		if raw := q.Get(name); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > orchestrator.MaxFlattenPage {
				return invalidParam(name, "must be an integer from 1 to 200")
			}
			*dst = n
		}
	}
	if (fq.First > 0) == (fq.Last > 0) {
		return invalidParam("first", "exactly one of first and last is required")
	}
	fq.Cursor = q.Get("cursor")
	for _, v := range q["statuses"] {
		for _, st := range strings.Split(v, ",") {
			if st = strings.TrimSpace(st); st != "" {
				fq.Statuses = append(fq.Statuses, st)
			}
		}
	}
	if raw := q.Get("loopParams"); raw != "" {
		b, err := base64.URLEncoding.DecodeString(raw)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(raw)
		}
		if err != nil || json.Unmarshal(b, &fq.LoopParams) != nil {
			return invalidParam("loopParams", "must be base64url of a JSON object of strings")
		}
	}
	page, err := s.svc.Runs.FlattenIterations(r.Context(), r.PathValue("id"), instanceID, runID, r.PathValue("stepId"), fq)
	return answer(w, page, err, "FlattenIterations")
}

// flattenIteration serves .../steps/{stepId}/iterations/{iterationId}.
func (s *server) flattenIteration(w http.ResponseWriter, r *http.Request) error {
	instanceID, runID, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	it, err := s.svc.Runs.FlattenIteration(r.Context(), r.PathValue("id"), instanceID, runID, r.PathValue("stepId"), r.PathValue("iterationId"))
	return answer(w, it, err, "FlattenIteration")
}

// flattenSummary serves .../steps/{stepId}/summary?statusCount=&representative=&valueCount=.
func (s *server) flattenSummary(w http.ResponseWriter, r *http.Request) error {
	instanceID, runID, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	sq := orchestrator.SummaryQuery{Representative: true, ValueCount: 5}
	for name, dst := range map[string]*bool{"statusCount": &sq.StatusCount, "representative": &sq.Representative} {
		if raw := q.Get(name); raw != "" {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return invalidParam(name, "must be true or false")
			}
			*dst = b
		}
	}
	if raw := q.Get("valueCount"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > 1000 {
			return invalidParam("valueCount", "must be an integer from 0 to 1000")
		}
		sq.ValueCount = n
	}
	sum, err := s.svc.Runs.FlattenSummary(r.Context(), r.PathValue("id"), instanceID, runID, r.PathValue("stepId"), sq)
	return answer(w, sum, err, "FlattenSummary")
}
