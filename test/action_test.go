package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// napThenDone: "nap" sleeps an hour, then "done"; "other" sleeps an hour too.
const napThenDone = `{"properties":{"owner":"actions","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[
  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}},"transition":{"successors":{"done":"true"}}}},
  {"step":{"id":"done","type":"NoOp"}},
  {"step":{"id":"other","type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}}}]}}`

func TestActions(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	act := func(path string, want int) (orchestrator.InstanceView, map[string]any) {
		t.Helper()
		var v orchestrator.InstanceView
		var raw map[string]any
		code := s.do("PUT", path, nil, &raw)
		if code != want {
			t.Fatalf("PUT %s: HTTP %d %v, want %d", path, code, raw, want)
		}
		if code == http.StatusOK {
			b, _ := json.Marshal(raw)
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
		}
		return v, raw
	}

	for _, tc := range []struct {
		name, wf, action  string
		status, nap, done string
	}{
		{"skip a step: its successor runs", "skip-wf", "skip", "SUCCEEDED", "SKIPPED", "SUCCEEDED"},
		{"kill a step: the run fails", "kill-step-wf", "kill", "FAILED", "FATALLY_FAILED", "UNSATISFIED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := s.push([]byte(fmt.Sprintf(napThenDone, tc.wf, 1)))
			r := s.start(wf, "")
			act(fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/nap/actions/%s", wf, r.WorkflowInstanceID, tc.action), 200)
			v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
			wantEnd(t, v, tc.status, map[string]string{"nap": tc.nap, "done": tc.done})
		})
	}

	t.Run("stop an instance, then a refused second stop names the status", func(t *testing.T) {
		wf := s.push([]byte(fmt.Sprintf(napThenDone, "stop-wf", 3600)))
		r := s.start(wf, "")
		path := fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/stop", wf, r.WorkflowInstanceID)
		v, _ := act(path, 200)
		if v.Status != "STOPPED" || v.StepStatuses["nap"] != "STOPPED" || v.StepStatuses["other"] != "STOPPED" {
			t.Fatalf("after stop: %s %v", v.Status, v.StepStatuses)
		}
		_, body := act(path, http.StatusConflict)
		if msg := fmt.Sprint(body["message"]); !strings.Contains(msg, "STOPPED") || !strings.Contains(msg, "allowed: RESTART") {
			t.Errorf("refusal does not name the status: %q", msg)
		}
		_, body = act(fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/pause", wf, r.WorkflowInstanceID), http.StatusBadRequest)
		if !strings.Contains(fmt.Sprint(body["errors"]), "action") {
			t.Errorf("bad action not named: %v", body)
		}
	})
}
