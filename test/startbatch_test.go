package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestStartBatch: one request starts 60 runs of an Http chain, each step
// called exactly once; the batch sent again starts none and answers the
// same instances; a batch with one bad request starts nothing and names
// it.
func TestStartBatch(t *testing.T) {
	t.Parallel()
	const wf, n = "start-batch", 60
	var mu sync.Mutex
	calls := map[string]int{} // "instance/step" -> calls
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Query().Get("i")+"/"+strings.TrimPrefix(r.URL.Path, "/")]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true}`)
	}))
	defer srv.Close()
	s := startSystem(t, stack.Options{})
	step := func(id, next string) string {
		succ := ""
		if next != "" {
			succ = fmt.Sprintf(`,"transition":{"successors":{%q:"true"}}`, next)
		}
		return fmt.Sprintf(`{"step":{"id":%q,"type":"Http","params":{"http":{"type":"MAP","value":{
		  "url":{"type":"STRING","value":"%s/%s?i=${n}"},"method":{"type":"STRING","value":"GET"}}}}%s}}`, id, srv.URL, id, succ)
	}
	s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"batch-e2e","run_strategy":{"rule":"PARALLEL","workflow_concurrency":%d}},
	  "workflow":{"id":%q,"params":{"n":{"type":"LONG","value":0}},"steps":[%s,%s]}}`, n, wf, step("a", "b"), step("b", ""))))

	requests := func(count int, extra func(i int) string) string {
		parts := make([]string, count)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"request_id":"5b0e1f3c-0000-4000-8000-%012d","run_params":{"n":{"type":"LONG","value":%d}}%s}`, i, i, extra(i))
		}
		return `{"requests":[` + strings.Join(parts, ",") + `]}`
	}
	none := func(int) string { return "" }
	path := "/api/v3/workflows/" + wf + "/versions/latest/actions/start-batch"

	// A batch with one bad request starts nothing and names it.
	var refusal struct {
		Status int      `json:"status"`
		Errors []string `json:"errors"`
	}
	bad := requests(n, func(i int) string {
		if i == 41 {
			return `,"run_params":{"n":{"type":"LONG","value":"x"}}`
		}
		return ""
	})
	if code := s.do("POST", path, []byte(bad), &refusal); code != http.StatusBadRequest || len(refusal.Errors) == 0 || !strings.HasPrefix(refusal.Errors[0], "requests[41]") {
		t.Fatalf("a batch with a bad request: %d %+v", code, refusal)
	}

	var res orchestrator.BatchStartResult
	sent := time.Now()
	if code := s.do("POST", path, []byte(requests(n, none)), &res); code != http.StatusOK {
		t.Fatalf("start-batch: status %d", code)
	}
	t.Logf("%d starts answered in %v", n, time.Since(sent).Round(time.Millisecond))
	if res.Started != n || len(res.Results) != n {
		t.Fatalf("started %d of %d (%d found, %d failed)", res.Started, n, res.Found, res.Failed)
	}
	for i, r := range res.Results {
		if r.WorkflowInstanceID != int64(i+1) {
			t.Fatalf("request %d started instance %d, want %d", i, r.WorkflowInstanceID, i+1)
		}
	}
	for _, r := range res.Results {
		wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 60*time.Second), "SUCCEEDED", nil)
	}
	mu.Lock()
	for i := range n {
		for _, st := range []string{"a", "b"} {
			if c := calls[fmt.Sprintf("%d/%s", i, st)]; c != 1 {
				t.Errorf("run %d step %s called %d times", i, st, c)
			}
		}
	}
	total := len(calls)
	mu.Unlock()
	if total != 2*n {
		t.Errorf("%d distinct calls, want %d", total, 2*n)
	}

	var again orchestrator.BatchStartResult
	if code := s.do("POST", path, []byte(requests(n, none)), &again); code != http.StatusOK || again.Found != n || again.Started != 0 {
		t.Fatalf("the batch sent again: status %d, %d started, %d found", code, again.Started, again.Found)
	}
	for i, r := range again.Results {
		if r.Created || r.WorkflowUUID != res.Results[i].WorkflowUUID || r.Status != "SUCCEEDED" {
			t.Errorf("request %d sent again answered %+v", i, r.StartResponse)
		}
	}
	var list struct {
		Instances []struct{} `json:"workflow_instances"`
	}
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/instances?limit=100", nil, &list); code != http.StatusOK || len(list.Instances) != n {
		t.Errorf("instances: %d %d, want %d", code, len(list.Instances), n)
	}
}
