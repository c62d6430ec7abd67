package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestSignedLocalRequests: a local stack started with credentials verifies
// every request's SigV4 signature as API Gateway does. What alice (a role)
// signs records her role's normalised ARN as version author and run
// initiator, and bob (an IAM user) is recorded as himself; an unsigned
// request and one signed with a wrong secret get a 403 naming why and
// change nothing; GET /health stays open.
func TestSignedLocalRequests(t *testing.T) {
	t.Parallel()
	const (
		alice = "arn:aws:iam::000000000000:role/alice"
		bob   = "arn:aws:iam::000000000000:user/bob"
	)
	s := startSystem(t, stack.Options{Credentials: []sigv4.Credential{
		{AccessKey: "AKIDALICE", Secret: "alice-secret", Principal: alice},
		{AccessKey: "AKIDBOB", Secret: "bob-secret", Principal: bob},
	}})
	send := func(key, secret, method, path string, body []byte, out any) (int, string) {
		t.Helper()
		return signer{t, s, key, secret}.send(method, path, body, out)
	}
	refused := func(what string, code int, body, reason string) {
		t.Helper()
		var e struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		}
		if code != http.StatusForbidden || json.Unmarshal([]byte(body), &e) != nil || e.Status != 403 || !strings.Contains(e.Message, reason) {
			t.Errorf("%s: HTTP %d %s; want a 403 JSON body naming %q", what, code, body, reason)
		}
		for _, secret := range []string{"alice-secret", "bob-secret"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: the refusal %s names a secret", what, body)
			}
		}
	}

	if code, body := send("", "", "GET", "/health", nil, nil); code != http.StatusOK {
		t.Fatalf("unsigned GET /health: HTTP %d %s", code, body)
	}

	def := []byte(`{"workflow":{"id":"signed-wf","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}}}}]}}`)
	code, body := send("", "", "POST", "/api/v3/workflows", def, nil)
	refused("unsigned push", code, body, "not signed")
	code, body = send("AKIDALICE", "not-alice-secret", "POST", "/api/v3/workflows", def, nil)
	refused("push signed with a wrong secret", code, body, "does not match")
	code, body = send("", "", "GET", "/api/v3/workflows", nil, nil)
	refused("unsigned list", code, body, "not signed")
	if code, body := send("AKIDBOB", "bob-secret", "GET", "/api/v3/workflows/signed-wf/versions/latest", nil, nil); code != http.StatusNotFound {
		t.Fatalf("after refused pushes, the workflow: HTTP %d %s; want 404 (nothing stored)", code, body)
	}

	var pushed struct {
		WorkflowDefinition orchestrator.DefinitionView `json:"workflow_definition"`
	}
	if code, body := send("AKIDALICE", "alice-secret", "POST", "/api/v3/workflows", def, &pushed); code != http.StatusOK {
		t.Fatalf("alice's push: HTTP %d %s", code, body)
	}
	var got orchestrator.DefinitionView
	if code, body := send("AKIDBOB", "bob-secret", "GET", "/api/v3/workflows/signed-wf/versions/latest", nil, &got); code != http.StatusOK {
		t.Fatalf("bob reads the version: HTTP %d %s", code, body)
	}
	if a := got.Metadata.VersionAuthor; a == nil || a.Name != alice {
		t.Errorf("version_author %+v, want alice's role %q (normalised from her session)", a, alice)
	}

	start := "/api/v3/workflows/signed-wf/versions/latest/actions/start"
	code, body = send("", "", "POST", start, []byte(`{}`), nil)
	refused("unsigned start", code, body, "not signed")
	code, body = send("AKIDBOB", "alice-secret", "POST", start, []byte(`{}`), nil)
	refused("start signed with another's secret", code, body, "does not match")
	var r orchestrator.StartResponse
	if code, body := send("AKIDALICE", "alice-secret", "POST", start, []byte(`{}`), &r); code != http.StatusOK {
		t.Fatalf("alice's start: HTTP %d %s", code, body)
	}
	var v orchestrator.InstanceView
	if code, body := send("AKIDALICE", "alice-secret", "GET", fmt.Sprintf("/api/v3/workflows/signed-wf/instances/%d", r.WorkflowInstanceID), nil, &v); code != http.StatusOK {
		t.Fatalf("read the run: HTTP %d %s", code, body)
	}
	if v.Initiator == nil || v.Initiator.Principal != alice {
		t.Errorf("initiator %+v, want alice's role %q", v.Initiator, alice)
	}
	var sig orchestrator.SignalView
	if code, body := send("AKIDBOB", "bob-secret", "POST", "/api/v3/signals", []byte(`{"name":"signed/signal"}`), &sig); code != http.StatusOK {
		t.Fatalf("bob's signal: HTTP %d %s", code, body)
	} else if sig.Source == nil || sig.Source.Principal != bob {
		t.Errorf("signal source %+v, want bob %q", sig.Source, bob)
	}

	// The refused starts started nothing: the workflow has one run.
	var list orchestrator.InstanceList
	if code, body := send("AKIDBOB", "bob-secret", "GET", "/api/v3/workflows/signed-wf/instances?limit=100", nil, &list); code != http.StatusOK {
		t.Fatalf("list runs: HTTP %d %s", code, body)
	} else if len(list.Instances) != 1 {
		t.Errorf("runs after one accepted and two refused starts: %s; want one", body)
	}
}
