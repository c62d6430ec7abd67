package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// bigJSON answers a JSON object of fields random (incompressible) strings of
// size bytes each.
func bigJSON(fields, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		out := map[string]string{}
		for i := 0; i < fields; i++ {
			raw := make([]byte, size*3/4)
			_, _ = rand.Read(raw)
			out[fmt.Sprintf("f%d", i)] = base64.StdEncoding.EncodeToString(raw)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

// httpChain is n Http steps calling url one after the other.
func httpChain(id, url string, n int) []byte {
	var steps []string
	for i := 0; i < n; i++ {
		succ := ""
		if i+1 < n {
			succ = fmt.Sprintf(`,"transition":{"successors":{"c%d":"true"}}`, i+1)
		}
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"c%d","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
		  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}}%s}}`, i, url, succ))
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"sizes"},"workflow":{"id":%q,"steps":[%s]}}`, id, strings.Join(steps, ",")))
}

// TestBigOutputsEndTheRun: outputs past the step's limit fail the step,
// outputs under it stay in the attempt items, and params in flight past the
// run item's limit fail the run, each with a message naming the size; the
// run never stays IN_PROGRESS. Before, the run item passed DynamoDB's
// 400 KB limit, every commit failed and the run was wedged.
func TestBigOutputsEndTheRun(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	t.Run("three 150 KB fields fail the step", func(t *testing.T) {
		srv := httptest.NewServer(bigJSON(3, 150_000))
		defer srv.Close()
		wf, r, v := s.run(httpChain("sizes-fields", srv.URL, 3), 60*time.Second)
		c0 := s.steps(wf, r.WorkflowInstanceID)["c0"]
		if v.Status != "FAILED" || c0.RuntimeState.Status != "FATALLY_FAILED" ||
			!strings.Contains(fmt.Sprint(c0.Timeline), "over the limit of 262144 bytes per step") {
			t.Fatalf("instance %s, c0 %s: %v", v.Status, c0.RuntimeState.Status, c0.Timeline)
		}
	})

	t.Run("outputs under the step limit stay out of the run state", func(t *testing.T) {
		// 4 × 170 KB of incompressible outputs: they overflowed the run
		// item and failed the run before settled steps' params and
		// outputs were offloaded to their attempt items.
		srv := httptest.NewServer(bigJSON(1, 170_000))
		defer srv.Close()
		wf, r, v := s.run(httpChain("sizes-state", srv.URL, 4), 60*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v: timeline %v", v.Status, v.StepStatuses, v.Timeline)
		}
		for id, st := range s.steps(wf, r.WorkflowInstanceID) {
			if f, _ := st.Outputs["f0"].(string); len(f) < 170_000 {
				t.Errorf("step %s: output f0 of %d bytes, want 170,000", id, len(f))
			}
		}
	})

	t.Run("params of steps in flight that overflow the run item fail the run", func(t *testing.T) {
		// A 190 KB run param, copied by two running steps: 570 KB of
		// incompressible params in the run's state, under the 2 MiB cap
		// of the engine, over DynamoDB's 400 KB item limit.
		raw := make([]byte, 190_000*3/4)
		_, _ = rand.Read(raw)
		blob := base64.StdEncoding.EncodeToString(raw)
		wf := s.push([]byte(`{"properties":{"owner":"sizes","run_strategy":"parallel"},"workflow":{"id":"sizes-inflight",
		  "params":{"blob":{"type":"STRING","value":""}},"steps":[
		  {"step":{"id":"a","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":60},"copy":{"type":"STRING","expression":"blob"}}}},
		  {"step":{"id":"b","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":60},"copy":{"type":"STRING","expression":"blob"}}}}]}}`))
		r := s.start(wf, `{"run_params":{"blob":{"type":"STRING","value":"`+blob+`"}}}`)
		v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second)
		if v.Status != "FAILED" || !strings.Contains(fmt.Sprint(v.Timeline), "more than DynamoDB's item size limit of 409600 bytes") {
			t.Fatalf("instance %s %v: timeline %v", v.Status, v.StepStatuses, v.Timeline)
		}
		t.Logf("ended %s: %v", v.Status, v.StepStatuses)
	})
}
