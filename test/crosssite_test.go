package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestCrossSiteRequestsAreRefused probes a running local stack as a page
// of another site open in the developer's browser would: the writes a
// browser sends without a CORS preflight (text/plain, form bodies, with
// Origin: https://evil.example), and the same through a DNS name rebound
// to the stack (a foreign Host) — to push a workflow whose Http step calls
// a loopback service, start it, move the clock, post a job event. Each is
// refused with 403 or 415 and a JSON body, nothing is stored, and the
// loopback service is never called; the same push and start sent as the
// CLI sends them (application/json, the stack's own Host) then work, and
// call it.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	var called atomic.Int64
	loopbackService := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": 1}`)
	}))
	defer loopbackService.Close()
	s := startSystem(t, stack.Options{})
	own, err := url.Parse(s.st.URL)
	if err != nil {
		t.Fatal(err)
	}
	const wf = "cross-site-probe"
	def := fmt.Sprintf(`{"properties":{"owner":"probe"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"call","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}}}}]}}`,
		wf, loopbackService.URL)
	rebound := "evil.example:" + own.Port()
	start := "/api/v3/workflows/" + wf + "/versions/latest/actions/start"

	type probe struct {
		name, method, path, host, origin, contentType, body string
		want                                                int
	}
	// crossSite are the requests of another site's page for path: a simple
	// (preflight-free) request from the page, and the same through a
	// rebound name.
	crossSite := func(method, path, body string) []probe {
		return []probe{
			{"text/plain from another site with a foreign Host", method, path, rebound, "https://evil.example", "text/plain;charset=UTF-8", body, 403},
			{"text/plain from another site", method, path, own.Host, "https://evil.example", "text/plain;charset=UTF-8", body, 403},
			{"form from another site", method, path, own.Host, "https://evil.example", "application/x-www-form-urlencoded", body, 403},
			{"JSON through a rebound name", method, path, rebound, "http://" + rebound, "application/json", body, 403},
			{"JSON through a rebound name, no Origin", method, path, rebound, "", "application/json", body, 403},
			{"text/plain without an Origin", method, path, own.Host, "", "text/plain", body, 415},
			{"form without an Origin", method, path, own.Host, "", "application/x-www-form-urlencoded", body, 415},
			{"no Content-Type", method, path, own.Host, "", "", body, 415},
			// A form with no fields: no body, which needs no Content-Type,
			// but a browser names the page's origin on every POST.
			{"empty form from another site", method, path, own.Host, "https://evil.example", "application/x-www-form-urlencoded", "", 403},
			{"empty form from a sandboxed page", method, path, own.Host, "null", "application/x-www-form-urlencoded", "", 403},
		}
	}
	send := func(t *testing.T, p probe) {
		t.Helper()
		req, err := http.NewRequest(p.method, s.st.URL+p.path, strings.NewReader(p.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = p.host
		if p.origin != "" {
			req.Header.Set("Origin", p.origin)
		}
		if p.contentType != "" {
			req.Header.Set("Content-Type", p.contentType)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e struct {
			Status  int      `json:"status"`
			Message string   `json:"message"`
			Errors  []string `json:"errors"`
		}
		if resp.StatusCode != p.want || json.Unmarshal(body, &e) != nil || e.Status != p.want || len(e.Errors) == 0 {
			t.Errorf("%s %s (%s): %d %s, want %d with a JSON error body", p.method, p.path, p.name, resp.StatusCode, body, p.want)
		}
		if h := resp.Header.Get("Access-Control-Allow-Origin"); h != "" {
			t.Errorf("%s: CORS header served: %q", p.name, h)
		}
	}

	t.Run("push", func(t *testing.T) {
		probes := crossSite("POST", "/api/v3/workflows", def)
		// The preflight a browser sends before any other cross-site write
		// gets no CORS headers (send checks), so the write never follows.
		probes = append(probes, probe{"preflight from another site", "OPTIONS", "/api/v3/workflows", own.Host, "https://evil.example", "", "", 403})
		for _, p := range probes {
			send(t, p)
		}
		if code := s.do("GET", "/api/v3/workflows/"+wf+"/versions/latest", nil, nil); code != http.StatusNotFound {
			t.Fatalf("the workflow was stored: GET its latest version answered %d", code)
		}
	})

	// A workflow pushed as the CLI pushes it: the cross-site starts must
	// not start it.
	s.push([]byte(def))
	t.Run("start, clock, job event", func(t *testing.T) {
		probes := crossSite("POST", start, `{}`)
		probes = append(probes, crossSite("POST", start+"-batch", `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}]}`)...)
		probes = append(probes, crossSite("POST", "/local/clock", `{"advance_seconds": 86400}`)...)
		probes = append(probes, crossSite("POST", "/local/job-events", `{"source":"aws.ecs","detail-type":"ECS Task State Change","detail":{}}`)...)
		probes = append(probes, crossSite("PUT", "/api/v3/workflows/"+wf+"/actions/deactivate", `{}`)...)
		for _, p := range probes {
			send(t, p)
		}
		s.idle(t)
		var list struct {
			Instances []json.RawMessage `json:"workflow_instances"`
		}
		if code := s.do("GET", "/api/v3/workflows/"+wf+"/instances", nil, &list); code != http.StatusOK || len(list.Instances) != 0 {
			t.Fatalf("instances after the cross-site starts: %d %d", code, len(list.Instances))
		}
		if n := called.Load(); n != 0 {
			t.Fatalf("the loopback service was called %d times", n)
		}
	})

	// The control: the stack's own client starts it, and the step calls the
	// service, so the probes above were refused, not broken.
	r := s.start(wf, `{}`)
	if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" || called.Load() != 1 {
		t.Fatalf("a start from the stack's own client: %s, the service called %d times", v.Status, called.Load())
	}
}
