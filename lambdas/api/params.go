package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// Paging bounds of GET /api/v3/workflows/{id}/instances.
const (
	defaultPageLimit = 20
	maxPageLimit     = 100
)

// invalidParam is the 400 answer naming a path or query parameter.
func invalidParam(name, rule string) *orchestrator.Error {
	return orchestrator.Invalid("invalid parameter "+name, name+": "+rule)
}

// maxTagKeyBytes bounds a {tag} path parameter: longer than any tag stored
// (user tags ≤ maxTagLength, internal maestro_<workflow id> ones), far below
// DynamoDB's key limits.
const maxTagKeyBytes = 512

// idRules are the checks of the path parameters that name stored things:
// an id the model would refuse cannot exist, and one over DynamoDB's key
// limits must not reach the store (it would fail there as a 500).
var idRules = []struct {
	param string
	check func(string) error
}{
	{"id", model.CheckWorkflowID},
	{"stepId", model.CheckStepID},
	{"name", signals.CheckName},
	{"tag", checkTagKey},
	{"bid", orchestrator.CheckBackfillID},
}

// checkPathIDs answers 400 naming the first path parameter of r that breaks
// its id rule.
func checkPathIDs(r *http.Request) error {
	for _, rule := range idRules {
		v := r.PathValue(rule.param)
		if v == "" {
			continue // not a parameter of this route (empty segments do not match)
		}
		if rule.param == "id" && model.IsInlineWorkflowID(v) && inlineAllowed(r) {
			// The iterations of a loop are instances of an inline
			// workflow: readable, restartable one by one (or from one
			// of their steps), their steps skippable, and their
			// attempts a breakpoint paused can be resumed; never
			// changed otherwise through its id.
			continue
		}
		if err := rule.check(v); err != nil {
			return invalidParam(rule.param, err.Error())
		}
	}
	return nil
}

func checkTagKey(tag string) error {
	if len(tag) > maxTagKeyBytes {
		return fmt.Errorf("tag is %d bytes long; the limit is %d", len(tag), maxTagKeyBytes)
	}
	return nil
}

// idField reads a required string body field holding an id and checks it
// with check (model.CheckWorkflowID, model.CheckStepID).
func idField(f rawField, dst *string, check func(string) error) []string {
	if errs := requiredString(f, dst); errs != nil {
		return errs
	}
	if err := check(*dst); err != nil {
		*dst = ""
		return []string{f.name + ": " + err.Error()}
	}
	return nil
}

// versionSelector reads the {version} path parameter: "active",
// "latest", "default" (any case, passed on in lower case) or a positive
// version number (passed on in canonical decimal form).
func versionSelector(r *http.Request) (string, error) {
	return versionSelectorAt(r, "version")
}

// versionSelectorAt is versionSelector of the path parameter name.
func versionSelectorAt(r *http.Request, name string) (string, error) {
	raw := r.PathValue(name)
	switch v := strings.ToLower(raw); v {
	case "active", "latest", "default":
		return v, nil
	}
	n, err := parsePositive(raw)
	if err != nil {
		return "", invalidParam(name, "must be active, latest, default or a positive version number")
	}
	return strconv.FormatInt(n, 10), nil
}

// positiveInt reads a numeric path parameter that must be a positive int64.
func positiveInt(r *http.Request, name string) (int64, error) {
	n, err := parsePositive(r.PathValue(name))
	if err != nil {
		return 0, invalidParam(name, "must be a positive integer")
	}
	return n, nil
}

// instanceAndRun reads the {instanceId} and {runId} path parameters.
func instanceAndRun(r *http.Request) (int64, int64, error) {
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return 0, 0, err
	}
	runID, err := positiveInt(r, "runId")
	if err != nil {
		return 0, 0, err
	}
	return instanceID, runID, nil
}

// attemptSelector reads {attempt}: a positive attempt number, or "latest"
// (any case), which the service takes as 0.
func attemptSelector(r *http.Request) (int64, error) {
	raw := r.PathValue("attempt")
	if strings.EqualFold(raw, "latest") {
		return 0, nil
	}
	n, err := parsePositive(raw)
	if err != nil {
		return 0, invalidParam("attempt", "must be latest or a positive integer")
	}
	return n, nil
}

// pageLimit reads the limit query parameter: 1..100, 20 when absent.
func pageLimit(raw string) (int, error) {
	if raw == "" {
		return defaultPageLimit, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxPageLimit {
		return 0, invalidParam("limit", "must be an integer from 1 to 100")
	}
	return n, nil
}

// parsePositive parses a decimal int64 greater than zero. Signs are not
// accepted, so "+1" and "-1" are both rejected.
func parsePositive(s string) (int64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, strconv.ErrRange
	}
	return n, nil
}

// inlineAllowed reports whether request r may name an inline workflow
// (a loop's iterations) by its id: reads, an iteration's restart and the
// resume of a paused attempt.
func inlineAllowed(r *http.Request) bool {
	switch {
	case r.Method == http.MethodGet:
		return true
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, breakpointsPath+"/"):
		return true
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/actions/restart") && r.PathValue("instanceId") != "":
		// An iteration, or a step of one (restartstep.go: it goes up
		// through the loop's run).
		return true
	case r.Method == http.MethodPut && r.PathValue("stepId") != "" && strings.EqualFold(r.PathValue("action"), "skip"):
		// A step of an iteration skipped (one that ended restarts, then
		// skips, as a restart of it does).
		return true
	}
	return false
}
