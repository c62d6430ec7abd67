package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// latch is a loopback endpoint whose calls wait until it is opened; it
// counts the calls that arrived and the most in flight at once.
type latch struct {
	open chan struct{}

	mu                   sync.Mutex
	calls, inFlight, max int
}

func newLatch() *latch { return &latch{open: make(chan struct{})} }

func (l *latch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.calls++
	l.inFlight++
	l.max = max(l.max, l.inFlight)
	l.mu.Unlock()
	select {
	case <-l.open:
	case <-r.Context().Done():
	}
	l.mu.Lock()
	l.inFlight--
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"ok": true}`)
}

func (l *latch) stats() (calls, maxInFlight int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.max
}

// TestTags covers Maestro's tags on the local stack: runtime tags on a
// start, kept on the run and held to a tag permit; a permit's extra info;
// a workflow's tags added and deleted through its tag endpoints; and the
// abuse of each (bad names, too many tags, oversized extra info, another
// workflow's tag).
func TestTags(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	t.Run("runtime tags under a permit of one", func(t *testing.T) {
		var p map[string]any
		body := `{"tag":"e2e-nightly","max_allowed":1,"source":"e2e","extra_info":{"team":"data"}}`
		if code := s.do("POST", "/api/v3/tag-permits", []byte(body), &p); code != 200 || p["source"] != "e2e" || p["team"] != "data" {
			t.Fatalf("put permit: %d %v", code, p)
		}
		l := newLatch()
		srv := httptest.NewServer(l)
		defer srv.Close()
		wf := s.push(fanOutHTTP("rt-tags", srv.URL, 1, `[]`, `"run_strategy":"parallel"`))
		start := `{"runtime_tags":["e2e-nightly",{"name":"e2e-team","namespace":"RUNTIME"}]}`
		a := s.start(wf, start)
		poll(t, 30*time.Second, "the first run's call arrives", func() (bool, string) {
			calls, _ := l.stats()
			return calls == 1, fmt.Sprint(s.instance(wf, a.WorkflowInstanceID).StepStatuses)
		})
		b := s.start(wf, start)
		poll(t, 30*time.Second, "the second run's step waits for the permit", func() (bool, string) {
			v := s.instance(wf, b.WorkflowInstanceID)
			return v.StepStatuses["call1"] == "WAITING_FOR_PERMITS", fmt.Sprint(v.StepStatuses)
		})
		if calls, _ := l.stats(); calls != 1 {
			t.Fatalf("%d calls while the first run holds the permit, want 1", calls)
		}
		if code := s.do("GET", "/api/v3/tag-permits/e2e-nightly", nil, &p); code != 200 || p["held"] != 1.0 || p["waiting"] != 1.0 || p["team"] != "data" {
			t.Fatalf("permit while held: %d %v", code, p)
		}
		v := s.instance(wf, a.WorkflowInstanceID)
		if got, _ := json.Marshal(v.RunConfig); string(got) != `{"runtime_tags":["e2e-nightly",{"name":"e2e-team","namespace":"RUNTIME"}]}` {
			t.Errorf("run_config of the first run: %s", got)
		}
		close(l.open)
		for _, id := range []int64{a.WorkflowInstanceID, b.WorkflowInstanceID} {
			if v := s.wait(wf, id, 60*time.Second); v.Status != "SUCCEEDED" {
				t.Fatalf("instance %d %s: %v", id, v.Status, v.StepStatuses)
			}
		}
		if calls, m := l.stats(); calls != 2 || m != 1 {
			t.Fatalf("%d calls, %d at once; want 2, one at a time", calls, m)
		}
		if code := s.do("GET", "/api/v3/tag-permits/e2e-nightly", nil, &p); code != 200 || p["held"] != 0.0 || p["waiting"] != 0.0 {
			t.Fatalf("permit after the runs: %d %v", code, p)
		}
	})

	t.Run("bad runtime tags start nothing", func(t *testing.T) {
		wf := s.push(fanOutHTTP("rt-bad", "http://127.0.0.1:1/", 1, `[]`, `"run_strategy":"parallel"`))
		many := make([]string, 17)
		for i := range many {
			many[i] = fmt.Sprintf(`"t%d"`, i)
		}
		for _, c := range []struct{ body, says string }{
			{`{"runtime_tags":["` + strings.Repeat("n", 257) + `"]}`, "runtime_tags[0]: tag name is 257 characters long; the limit is 256"},
			{`{"runtime_tags":[` + strings.Join(many, ",") + `]}`, "runtime_tags: 17 tags; the limit is 16"},
			{`{"runtime_tags":["maestro_x"]}`, `runtime_tags[0]: tag name "maestro_x" must not start with "maestro_"`},
			{`{"runtime_tags":[7]}`, "runtime_tags[0]: must be a tag name or a tag object"},
		} {
			var e struct{ Errors []string }
			if code := s.do("POST", "/api/v3/workflows/"+wf+"/versions/latest/actions/start", []byte(c.body), &e); code != 400 || !strings.Contains(strings.Join(e.Errors, "\n"), c.says) {
				t.Errorf("start with %.60s: %d %v, want 400 saying %q", c.body, code, e.Errors, c.says)
			}
		}
		var list struct {
			Instances []any `json:"workflow_instances"`
		}
		if code := s.do("GET", "/api/v3/workflows/"+wf+"/instances", nil, &list); code != 200 || len(list.Instances) != 0 {
			t.Errorf("instances after refused starts: %d %d", code, len(list.Instances))
		}
	})

	t.Run("permit extra info too big or reserved", func(t *testing.T) {
		for _, c := range []struct{ body, says string }{
			{`{"tag":"e2e-x","max_allowed":1,"extra_info":{"x":"` + strings.Repeat("a", 5000) + `"}}`, "extra_info: 5008 bytes of JSON; the limit is 4096"},
			{`{"tag":"e2e-x","max_allowed":1,"timeline":[]}`, `extra_info: key "timeline" is reserved`},
			{`{"tag":"e2e-x","max_allowed":1,"extra_info":"x"}`, "extra_info: must be a JSON object"},
		} {
			var e struct{ Errors []string }
			if code := s.do("POST", "/api/v3/tag-permits", []byte(c.body), &e); code != 400 || !strings.Contains(strings.Join(e.Errors, "\n"), c.says) {
				t.Errorf("put %.60s: %d %v, want 400 saying %q", c.body, code, e.Errors, c.says)
			}
		}
		if code := s.do("GET", "/api/v3/tag-permits/e2e-x", nil, nil); code != 404 {
			t.Errorf("a refused permit was stored: GET %d", code)
		}
	})

	t.Run("workflow tags added and deleted", func(t *testing.T) {
		a := s.push(fanOutHTTP("tags-a", "http://127.0.0.1:1/", 1, `[]`, `"run_strategy":"parallel"`))
		b := s.push(fanOutHTTP("tags-b", "http://127.0.0.1:1/", 1, `[]`, `"run_strategy":"parallel"`))
		tagsOf := func(wf string) []map[string]any {
			var v struct {
				Snapshot struct {
					Tags []map[string]any `json:"tags"`
				} `json:"properties_snapshot"`
			}
			if code := s.do("GET", "/api/v3/workflows/"+wf+"/versions/latest", nil, &v); code != 200 {
				t.Fatalf("read %s: %d", wf, code)
			}
			return v.Snapshot.Tags
		}
		var snap map[string]any
		if code := s.do("POST", "/api/v3/workflows/"+a+"/properties/tag", []byte(`{"name":"gold","description":"tier"}`), &snap); code != 200 || snap["workflow_id"] != a {
			t.Fatalf("add: %d %v", code, snap)
		}
		if code := s.do("POST", "/api/v3/workflows/"+a+"/properties/tag", []byte(`"silver"`), &snap); code != 200 {
			t.Fatalf("add a bare name: %d %v", code, snap)
		}
		tags := tagsOf(a)
		if len(tags) != 2 || tags[0]["name"] != "gold" || tags[0]["namespace"] != "PLATFORM" || tags[0]["description"] != "tier" ||
			tags[0]["created_at_milli"] == nil || tags[1]["name"] != "silver" {
			t.Fatalf("tags of %s after adding: %v", a, tags)
		}
		var e struct {
			Message string
			Errors  []string
		}
		if code := s.do("DELETE", "/api/v3/workflows/"+b+"/properties/tag/gold", nil, &e); code != 404 || !strings.Contains(e.Message, "workflow ["+b+"]") {
			t.Errorf("delete another workflow's tag: %d %+v", code, e)
		}
		if len(tagsOf(a)) != 2 || len(tagsOf(b)) != 0 {
			t.Errorf("a delete refused changed tags: %v / %v", tagsOf(a), tagsOf(b))
		}
		if code := s.do("DELETE", "/api/v3/workflows/"+a+"/properties/tag/gold", nil, &snap); code != 200 {
			t.Fatalf("delete: %d %v", code, snap)
		}
		if tags := tagsOf(a); len(tags) != 1 || tags[0]["name"] != "silver" {
			t.Errorf("tags of %s after deleting gold: %v", a, tags)
		}
		for _, c := range []struct{ method, path, body, says string }{
			{"POST", "/api/v3/workflows/" + a + "/properties/tag", `{"name":"` + strings.Repeat("n", 257) + `"}`, "tag.name: tag name is 257 characters long; the limit is 256"},
			{"POST", "/api/v3/workflows/" + a + "/properties/tag", `{"name":"a#b"}`, `tag name "a#b" contains '#'`},
			{"POST", "/api/v3/workflows/" + a + "/properties/tag", `{"name":"big","x":"` + strings.Repeat("a", 5000) + `"}`, "the limit is 4096"},
			{"DELETE", "/api/v3/workflows/" + a + "/properties/tag/" + strings.Repeat("n", 257), "", "workflowTagName: tag name is 257 characters long"},
		} {
			if code := s.do(c.method, c.path, []byte(c.body), &e); code != 400 || !strings.Contains(strings.Join(e.Errors, "\n"), c.says) {
				t.Errorf("%s %.80s: %d %+v, want 400 saying %q", c.method, c.path, code, e, c.says)
			}
		}
		for i := 1; i < 64; i++ { // silver is the first
			if code := s.do("POST", "/api/v3/workflows/"+a+"/properties/tag", []byte(fmt.Sprintf(`"t%d"`, i)), nil); code != 200 {
				t.Fatalf("add tag %d: %d", i, code)
			}
		}
		if code := s.do("POST", "/api/v3/workflows/"+a+"/properties/tag", []byte(`"one-too-many"`), &e); code != 400 || !strings.Contains(strings.Join(e.Errors, "\n"), "the limit is 64") {
			t.Errorf("the 65th tag: %d %+v", code, e)
		}
		if n := len(tagsOf(a)); n != 64 {
			t.Errorf("%s has %d tags, want 64", a, n)
		}
		if code := s.do("POST", "/api/v3/workflows/"+b+"/properties", []byte(`{"tags":["sneaky"]}`), &e); code != 400 || !strings.Contains(strings.Join(e.Errors, "\n"), "tags: cannot set workflow property tags") {
			t.Errorf("tags through a properties update: %d %+v", code, e)
		}
		if n := len(tagsOf(b)); n != 0 {
			t.Errorf("%s has %d tags after a refused properties update", b, n)
		}
		if code := s.do("POST", "/api/v3/workflows/nope-none/properties/tag", []byte(`"x"`), &e); code != 404 {
			t.Errorf("a tag on a workflow that does not exist: %d %+v", code, e)
		}
	})
}
