package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestCallerIsRecorded: what an API request writes names its caller (in
// AWS the IAM principal API Gateway authenticated; locally "local"): the
// version's author, the run's initiator, an action's timeline entry and an
// announced signal's source.
func TestCallerIsRecorded(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"who"},"workflow":{"id":"who-wf","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}}}}]}}`))

	var def orchestrator.DefinitionView
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/versions/latest", nil, &def); code != http.StatusOK {
		t.Fatalf("get version: HTTP %d", code)
	}
	if a := def.Metadata.VersionAuthor; a == nil || a.Name != stack.LocalPrincipal {
		t.Errorf("version_author %+v, want %q", a, stack.LocalPrincipal)
	}

	r := s.start(wf, "")
	v := s.instance(wf, r.WorkflowInstanceID)
	if v.Initiator == nil || v.Initiator.Type != "MANUAL" || v.Initiator.Principal != stack.LocalPrincipal {
		t.Errorf("initiator %+v, want MANUAL by %q", v.Initiator, stack.LocalPrincipal)
	}

	var e map[string]any
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/stop", wf, r.WorkflowInstanceID), nil, &e); code != http.StatusOK {
		t.Fatalf("stop: HTTP %d %v", code, e)
	}
	v = s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	found := false
	for _, tl := range v.Timeline {
		found = found || strings.Contains(fmt.Sprint(tl), "stopped by a user action of "+stack.LocalPrincipal)
	}
	if v.Status != "STOPPED" || !found {
		t.Errorf("instance %s, timeline %v: want STOPPED by a user action of %s", v.Status, v.Timeline, stack.LocalPrincipal)
	}

	sig := s.announce(t, `{"name":"who/signal","params":{"k":"v"}}`)
	if sig.Source == nil || sig.Source.Kind != "api" || sig.Source.Principal != stack.LocalPrincipal {
		t.Errorf("signal source %+v, want api by %q", sig.Source, stack.LocalPrincipal)
	}
}
