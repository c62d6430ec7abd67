package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The API roles over the memstore: Definitions (push, versions, active
// version, properties) and Runs' start (idempotency, version selectors,
// run params and their modes). Refusals are *Error with an HTTP status
// and, for bad input, the field at fault.

// wantRefusal fails the test unless err is an *Error of status whose text
// holds every one of parts.
func wantRefusal(t *testing.T, err error, status int, parts ...string) {
	t.Helper()
	if got := rigErrStatus(err); got != status {
		t.Fatalf("error %v (status %d), want status %d", err, got, status)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

// version is the version a selector names and its flags, as
// GetWorkflowVersion returns them: "v2 active latest default".
func (r *roleRig) version(wf, selector string) (string, error) {
	v, err := r.o.Definitions.GetWorkflowVersion(r.ctx, wf, selector)
	if err != nil {
		return "", err
	}
	out := []string{fmt.Sprintf("v%d", v.Metadata.WorkflowVersionID)}
	for _, f := range []struct {
		on   bool
		name string
	}{{v.IsActive, "active"}, {v.IsLatest, "latest"}, {v.IsDefault, "default"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, " "), nil
}

// TestDefinitionVersionsAndSelectors: each push is a new version, active
// unless it says is_active false; the selectors name the active, the
// latest, the default (the active, else the latest) or a number; the
// active version is set and cleared.
func TestDefinitionVersionsAndSelectors(t *testing.T) {
	r := newRoleRig(t)
	def := rigChain("versions", 1)
	r.push(def)
	r.push(def)
	inactive := strings.Replace(def, `{"properties"`, `{"is_active": false, "properties"`, 1)
	if v := r.push(inactive); v.IsActive || !v.IsLatest || v.Metadata.WorkflowVersionID != 3 {
		t.Fatalf("an inactive push: %+v", v.Metadata)
	}
	steps := []struct {
		do   func() error
		want map[string]string // selector: version, or "404"/"400"
	}{
		{nil, map[string]string{"active": "v2 active default", "latest": "v3 latest", "default": "v2 active default",
			"": "v2 active default", "1": "v1", "4": "404", "0": "400", "x": "400", "-1": "400"}},
		{func() error { _, err := r.o.Definitions.ActivateVersion(r.ctx, "versions", "1"); return err },
			map[string]string{"active": "v1 active default", "latest": "v3 latest"}},
		{func() error { _, err := r.o.Definitions.DeactivateWorkflow(r.ctx, "versions"); return err },
			map[string]string{"active": "404", "default": "v3 latest default", "1": "v1"}},
		{func() error { _, err := r.o.Definitions.ActivateVersion(r.ctx, "versions", "latest"); return err },
			map[string]string{"active": "v3 active latest default", "2": "v2"}},
	}
	for i, s := range steps {
		if s.do != nil {
			if err := s.do(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		for sel, want := range s.want {
			got, err := r.version("versions", sel)
			if err != nil {
				got = fmt.Sprint(rigErrStatus(err))
			}
			if got != want {
				t.Errorf("step %d: %q is %s (%v), want %s", i, sel, got, err, want)
			}
		}
	}
	_, err := r.o.Definitions.GetWorkflowVersion(r.ctx, "versions", "x")
	wantRefusal(t, err, http.StatusBadRequest, "version:", `"x"`)
	_, err = r.o.Definitions.ActivateVersion(r.ctx, "versions", "9")
	wantRefusal(t, err, http.StatusNotFound, "no version 9", "latest is 3")
	_, err = r.o.Definitions.DeactivateWorkflow(r.ctx, "nope")
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
}

// TestDefinitionsRefuseBadInput: a document that does not parse or breaks
// a rule is refused with a 400 that names each field at fault, and nothing
// is stored; ValidateWorkflow says the same without storing.
func TestDefinitionsRefuseBadInput(t *testing.T) {
	for _, c := range []struct {
		name, body string
		fields     []string
	}{
		{"not JSON", `{"workflow":`, nil},
		{"no id", workDef("", "", workStep("a", "Titus", "")), []string{"workflow.id"}},
		{"unknown step type", workDef("bad", "", workStep("a", "Telepathy", "")), []string{"workflow.steps[0].step.type"}},
		{"a successor that does not exist", workDef("bad", "", workStep("a", "Titus", "", "ghost")), []string{"ghost"}},
		{"two steps, one id", workDef("bad", "", workStep("a", "Titus", ""), workStep("a", "Titus", "")), []string{"workflow.steps[1]"}},
		{"a bad param mode", workDef("bad", "", workStep("a", "Titus", `"params": {"p": {"value": 1, "type": "LONG", "mode": "SOMETIMES"}}`)),
			[]string{"params.p.mode"}},
		{"a bad run strategy", workDef("bad", `{"owner": "unit", "run_strategy": "whenever"}`, workStep("a", "Titus", "")),
			[]string{"properties.run_strategy"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			verr := r.o.Definitions.ValidateWorkflow(r.ctx, []byte(c.body), FormatJSON)
			wantRefusal(t, verr, http.StatusBadRequest, append([]string{"invalid workflow definition"}, c.fields...)...)
			_, err := r.o.Definitions.CreateWorkflow(r.ctx, []byte(c.body), FormatJSON)
			wantRefusal(t, err, http.StatusBadRequest, c.fields...)
			if err.Error() != verr.Error() {
				t.Errorf("push %q, validate %q", err, verr)
			}
			list, lerr := r.o.Definitions.ListWorkflows(r.ctx, "", 10)
			if lerr != nil || len(list.Workflows) != 0 {
				t.Errorf("stored after a refusal: %+v %v", list, lerr)
			}
		})
	}
}

// TestDefinitionPropertiesMerge: properties pushed with a version are laid
// over the stored snapshot key by key, which every version shares;
// UpdateProperties changes or resets them, refusing what breaks a rule.
func TestDefinitionPropertiesMerge(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("props", `{"owner": "unit", "run_strategy": "parallel", "description": "first"}`, workStep("a", "Titus", "")))
	v := r.push(workDef("props", `{"owner": "other"}`, workStep("a", "Titus", "")))
	var snap map[string]any
	if err := json.Unmarshal(v.PropertiesSnapshot, &snap); err != nil {
		t.Fatal(err)
	}
	if snap["owner"] != "other" || snap["run_strategy"] != "PARALLEL" || snap["description"] != "first" {
		t.Errorf("merged snapshot %s", v.PropertiesSnapshot)
	}
	props, err := r.o.Definitions.UpdateProperties(r.ctx, "props", []byte(`{"description": "second", "reset_run_strategy_rule": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(props); strings.Contains(s, "run_strategy") || !strings.Contains(s, `"second"`) {
		t.Errorf("after the update: %s", s)
	}
	if got, err := r.o.Definitions.GetWorkflowVersion(r.ctx, "props", "1"); err != nil || string(got.PropertiesSnapshot) != string(props) {
		t.Errorf("version 1 sees %s (%v), want the shared snapshot", got.PropertiesSnapshot, err)
	}
	for _, c := range []struct {
		body   string
		status int
		says   string
	}{
		{`[1]`, http.StatusBadRequest, "must be a JSON object"},
		{`{"reset_step_concurrency": "yes"}`, http.StatusBadRequest, "reset_step_concurrency: must be a boolean"},
		{`{"run_strategy": "parallel", "reset_run_strategy_rule": true}`, http.StatusBadRequest, "cannot set run_strategy and reset it"},
		{`{"run_strategy": "whenever"}`, http.StatusBadRequest, "properties.run_strategy"},
	} {
		_, err := r.o.Definitions.UpdateProperties(r.ctx, "props", []byte(c.body))
		wantRefusal(t, err, c.status, c.says)
	}
	_, err = r.o.Definitions.UpdateProperties(r.ctx, "nope", []byte(`{}`))
	wantRefusal(t, err, http.StatusNotFound, "nope")
}

// TestStartIsIdempotentByRequestID: a start repeated with its request_id
// answers the first instance (Created false) and starts nothing; another
// request id, or none, starts a new instance.
func TestStartIsIdempotentByRequestID(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("idem", 1))
	first := r.start("idem", StartRequest{RequestID: "req-1"})
	again := r.start("idem", StartRequest{RequestID: "req-1"})
	if !first.Created || again.Created || again.WorkflowInstanceID != first.WorkflowInstanceID || again.WorkflowUUID != first.WorkflowUUID {
		t.Errorf("first %+v, again %+v", first, again)
	}
	if n := len(r.disp.take(t)); n != 1 {
		t.Errorf("%d steps dispatched, want the first start's", n)
	}
	var ids []int64
	for _, id := range []string{"req-2", "", ""} {
		ids = append(ids, r.start("idem", StartRequest{RequestID: id}).WorkflowInstanceID)
	}
	if rigJSON(ids) != "[2,3,4]" {
		t.Errorf("new instances %v", ids)
	}
}

// TestStartRefusals: a start names what it cannot start.
func TestStartRefusals(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("refused", 1))
	for _, c := range []struct {
		wf, selector string
		req          StartRequest
		status       int
		says         string
	}{
		{"nope", "active", StartRequest{}, http.StatusNotFound, "workflow nope not found"},
		{"refused", "7", StartRequest{}, http.StatusNotFound, "no version 7"},
		{"refused", "seven", StartRequest{}, http.StatusBadRequest, "version:"},
		{"refused", "active", StartRequest{RunParams: map[string]json.RawMessage{"p": json.RawMessage(`{"value": 1}`)}},
			http.StatusBadRequest, "invalid run_params"},
		{"refused", "active", StartRequest{RunParams: map[string]json.RawMessage{"p": json.RawMessage(`"x"`)}},
			http.StatusBadRequest, "invalid run_params"},
	} {
		_, err := r.o.Runs.StartWorkflow(r.ctx, c.wf, c.selector, c.req)
		wantRefusal(t, err, c.status, c.says)
	}
	if _, err := r.o.Definitions.DeactivateWorkflow(r.ctx, "refused"); err != nil {
		t.Fatal(err)
	}
	_, err := r.o.Runs.StartWorkflow(r.ctx, "refused", "active", StartRequest{})
	wantRefusal(t, err, http.StatusNotFound, "no active version")
	if resp, err := r.o.Runs.StartWorkflow(r.ctx, "refused", "latest", StartRequest{}); err != nil || resp.WorkflowInstanceID != 1 {
		t.Errorf("a start of the latest version: %+v %v", resp, err)
	}
}

// TestStartRunParamModes: run params may set a MUTABLE param or a new one,
// never a CONSTANT or IMMUTABLE one; a MUTABLE_ON_START param is set on
// start but not on a restart. A refusal names each param.
func TestStartRunParamModes(t *testing.T) {
	param := func(mode string) string { return `{"value": 1, "type": "LONG", "mode": "` + mode + `"}` }
	r := newRoleRig(t)
	def := strings.Replace(workDef("modes", "", workStep("a", "Titus", "")), `"steps"`,
		`"params": {"c": `+param("CONSTANT")+`, "i": `+param("IMMUTABLE")+`, "m": `+param("MUTABLE")+`, "s": `+param("MUTABLE_ON_START")+`}, "steps"`, 1)
	r.push(def)
	set := func(names ...string) map[string]json.RawMessage {
		out := map[string]json.RawMessage{}
		for _, n := range names {
			out[n] = json.RawMessage(`{"value": 2, "type": "LONG"}`)
		}
		return out
	}
	_, err := r.o.Runs.StartWorkflow(r.ctx, "modes", "active", StartRequest{RunParams: set("c", "i", "m", "s", "new")})
	wantRefusal(t, err, http.StatusBadRequest, `run_params.c: param "c" is CONSTANT`, `run_params.i: param "i" is IMMUTABLE`)
	if strings.Contains(err.Error(), "run_params.m") || strings.Contains(err.Error(), "run_params.s") || strings.Contains(err.Error(), "new") {
		t.Errorf("refused a param it may set: %v", err)
	}
	resp := r.start("modes", StartRequest{RunParams: set("m", "s", "new")})
	if resp.WorkflowInstanceID != 1 {
		t.Fatalf("started %+v", resp)
	}
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "modes", 1, 0, "stop"); err != nil {
		t.Fatal(err)
	}
	_, err = r.o.Actions.RestartInstance(r.ctx, "modes", 1, RestartRequest{RunParams: set("m", "s")})
	wantRefusal(t, err, http.StatusBadRequest, `run_params.s: param "s" is MUTABLE_ON_START`)
	if v, err := r.o.Actions.RestartInstance(r.ctx, "modes", 1, RestartRequest{RunParams: set("m")}); err != nil || v.WorkflowRunID != 2 {
		t.Errorf("a restart setting a MUTABLE param: %+v %v", v, err)
	}
}
