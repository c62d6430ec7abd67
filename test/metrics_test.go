package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/metrics"
)

// TestHandlersEmitMetrics: the handlers print CloudWatch Embedded Metric
// Format lines — step launch delay, decision latency, steps and runs
// finished by status, queue lag — that the stack's dashboard and alarms
// read.
func TestHandlersEmitMetrics(t *testing.T) {
	t.Parallel()
	out := &localstack.SyncBuffer{}
	s := startSystem(t, stack.Options{Metrics: out})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{}`) }))
	defer srv.Close()
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"m"},"workflow":{"id":"metrics","steps":[
	  {"step":{"id":"call","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s"}}}},
	    "transition":{"successors":{"done":"true"}}}},
	  {"step":{"id":"done","type":"NoOp"}}]}}`, srv.URL)))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
	}
	seen := map[string]map[string]bool{}
	poll(t, 30*time.Second, "every metric is emitted", func() (bool, string) {
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				t.Fatalf("not a JSON line: %q", sc.Text())
			}
			aws, _ := line["_aws"].(map[string]any)
			cwm, _ := aws["CloudWatchMetrics"].([]any)
			if len(cwm) != 1 || line["Stage"] != s.st.Resources.Table.Name[len("maestro-"):] {
				t.Fatalf("not an EMF line of the stage: %s", sc.Text())
			}
			m := cwm[0].(map[string]any)
			name := m["Metrics"].([]any)[0].(map[string]any)["Name"].(string)
			if m["Namespace"] != metrics.Namespace {
				t.Fatalf("namespace %v", m["Namespace"])
			}
			// One value, or the values of an invocation.
			_, one := line[name].(float64)
			values, many := line[name].([]any)
			if !one && (!many || len(values) < 2 || len(values) > 100) {
				t.Fatalf("%s has no value: %s", name, sc.Text())
			}
			if seen[name] == nil {
				seen[name] = map[string]bool{}
			}
			seen[name][fmt.Sprintf("%v/%v", line["Status"], line["Queue"])] = true
		}
		ok := seen[metrics.StepLaunchDelay] != nil && seen[metrics.DecisionLatency] != nil && seen[metrics.QueueLag] != nil &&
			seen[metrics.StepsFinished]["SUCCEEDED/<nil>"] && seen[metrics.RunsFinished]["SUCCEEDED/<nil>"] && seen[metrics.RunCost] != nil
		return ok, fmt.Sprint(seen)
	})
	t.Logf("metrics seen: %v", seen)
}
