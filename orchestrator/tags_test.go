package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

// TestRuntimeTagsTakePermits: a run started with runtime tag "nightly"
// keeps it (the instance view's run_config) and its steps take the
// permit of "nightly" as they take their own tags' — with max_allowed 1,
// the second run's step waits until the first run's step ends.
func TestRuntimeTagsTakePermits(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("rt", "", workStep("t0", "Titus", "")))
	if _, err := r.o.Gates.PutTagPermitInfo(r.ctx, "nightly", 1, nil); err != nil {
		t.Fatal(err)
	}
	tags := []json.RawMessage{json.RawMessage(`"nightly"`), json.RawMessage(`{"name":"team-a","namespace":"runtime","owner":"x"}`)}
	r.start("rt", StartRequest{RuntimeTags: tags})
	r.start("rt", StartRequest{RuntimeTags: tags[:1]})
	r.start("rt", StartRequest{}) // no runtime tag: not held back
	r.disp.take(t)
	r.wantRun("rt", 1, "IN_PROGRESS t0=RUNNING")
	if ss := r.step("rt", 2, 1, "t0"); ss.Status != model.StepWaitingForPermits || len(ss.Permits) != 1 || ss.Permits[0] != "nightly" {
		t.Fatalf("the second t0 is %s waiting on %v", ss.Status, ss.Permits)
	}
	r.wantRun("rt", 3, "IN_PROGRESS t0=RUNNING")
	view, err := r.o.Runs.GetInstance(r.ctx, "rt", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := rigJSON(view.RunConfig); got != `{"runtime_tags":["nightly",{"name":"team-a","namespace":"RUNTIME","owner":"x"}]}` {
		t.Errorf("run_config %s", got)
	}
	if v, _ := r.o.Runs.GetInstance(r.ctx, "rt", 3); v.RunConfig != nil {
		t.Errorf("run 3 has run_config %s", rigJSON(v.RunConfig))
	}
	if p, err := r.o.Gates.GetTagPermit(r.ctx, "nightly"); err != nil || p.Held != 1 || p.Waiting != 1 {
		t.Errorf("permit %+v %v", p, err)
	}
}

// TestRuntimeTagsAreChecked: bad runtime tags are refused with the path of
// the tag and the rule, and start nothing.
func TestRuntimeTagsAreChecked(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("rtc", "", workStep("t0", "Titus", "")))
	many := make([]json.RawMessage, model.RuntimeTagsLimit+1)
	for i := range many {
		many[i] = json.RawMessage(`"t` + strings.Repeat("x", i) + `"`)
	}
	for _, c := range []struct {
		tags []json.RawMessage
		says string
	}{
		{many, "runtime_tags: 17 tags; the limit is 16"},
		{[]json.RawMessage{json.RawMessage(`"` + strings.Repeat("n", 257) + `"`)}, "runtime_tags[0]: tag name is 257 characters long; the limit is 256"},
		{[]json.RawMessage{json.RawMessage(`"maestro_x"`)}, `runtime_tags[0]: tag name "maestro_x" must not start with "maestro_"`},
		{[]json.RawMessage{json.RawMessage(`{"name":"a#b"}`)}, `runtime_tags[0].name: tag name "a#b" contains '#'`},
		{[]json.RawMessage{json.RawMessage(`"a"`), json.RawMessage(`{"name":"a"}`)}, `runtime_tags[1]: duplicate tag name "a"`},
		{[]json.RawMessage{json.RawMessage(`{"name":"a","namespace":"nope"}`)}, `runtime_tags[0].namespace: unknown tag namespace "nope"`},
		{[]json.RawMessage{json.RawMessage(`{"name":"a","x":"` + strings.Repeat("y", 5000) + `"}`)}, "runtime_tags[0]: the tag is 5019 bytes of JSON; the limit is 4096"},
	} {
		_, err := r.o.Runs.StartWorkflow(r.ctx, "rtc", "active", StartRequest{RuntimeTags: c.tags})
		wantRefusal(t, err, http.StatusBadRequest, c.says)
	}
	if n := r.instances("rtc"); n != 0 {
		t.Errorf("%d instances were created", n)
	}
}

// TestWorkflowTags: a tag added to a workflow is in its properties
// snapshot (PLATFORM namespace, creator and time attributes), replaced by
// a tag of the same name, deleted by name; deleting a tag the workflow
// does not have — another workflow's — is a 404 that leaves both alone.
func TestWorkflowTags(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("wa", "", workStep("t0", "Titus", "")))
	r.push(workDef("wb", "", workStep("t0", "Titus", "")))
	snap, err := r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`{"name":"gold","description":"d1","permit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		WorkflowID string `json:"workflow_id"`
		Tags       []map[string]any
	}
	if err := json.Unmarshal(snap, &got); err != nil || got.WorkflowID != "wa" || len(got.Tags) != 1 {
		t.Fatalf("snapshot %s %v", snap, err)
	}
	tag := got.Tags[0]
	if tag["name"] != "gold" || tag["namespace"] != "PLATFORM" || tag["description"] != "d1" || tag["permit"] != nil ||
		tag["created_at_milli"] == nil || tag["creator"] == nil {
		t.Errorf("tag %v", tag)
	}
	if _, err := r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`{"name":"gold","description":"d2"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`"silver"`)); err != nil {
		t.Fatal(err)
	}
	v, err := r.o.Definitions.GetWorkflowVersion(r.ctx, "wa", "latest")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(v.PropertiesSnapshot); !strings.Contains(s, `"description":"d2"`) || strings.Contains(s, "d1") || !strings.Contains(s, `"name":"silver"`) {
		t.Errorf("properties after replace %s", s)
	}
	_, err = r.o.Definitions.DeleteWorkflowTag(r.ctx, "wb", "gold")
	wantRefusal(t, err, http.StatusNotFound, "no workflow tag with name [gold]", "workflow [wb]")
	_, err = r.o.Definitions.DeleteWorkflowTag(r.ctx, "nope", "gold")
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
	if _, err := r.o.Definitions.DeleteWorkflowTag(r.ctx, "wa", "gold"); err != nil {
		t.Fatal(err)
	}
	v, _ = r.o.Definitions.GetWorkflowVersion(r.ctx, "wa", "latest")
	if s := string(v.PropertiesSnapshot); strings.Contains(s, "gold") || !strings.Contains(s, "silver") {
		t.Errorf("properties after delete %s", s)
	}
	_, err = r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`{"name":"maestro_x"}`))
	wantRefusal(t, err, http.StatusBadRequest, `tag.name: tag name "maestro_x" must not start`)
	_, err = r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`[1]`))
	wantRefusal(t, err, http.StatusBadRequest, "tag: must be a tag name or a tag object")
	for i := 1; i < model.WorkflowTagsLimit; i++ { // silver is the first
		if _, err := r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`"t`+strings.Repeat("x", i)+`"`)); err != nil {
			t.Fatal(i, err)
		}
	}
	_, err = r.o.Definitions.AddWorkflowTag(r.ctx, "wa", json.RawMessage(`"one-too-many"`))
	wantRefusal(t, err, http.StatusBadRequest, "workflow wa has 64 tags; the limit is 64")
}

// TestTagPermitExtraInfo: a permit's extra info is stored, returned beside
// its fields (as Maestro's TagPermit), replaced by the next put and
// removed by a put without it; reserved keys and oversized info are
// refused.
func TestTagPermitExtraInfo(t *testing.T) {
	r := newRoleRig(t)
	info := map[string]json.RawMessage{"source": json.RawMessage(`"test"`), "team": json.RawMessage(`{"name":"data"}`)}
	if _, err := r.o.Gates.PutTagPermitInfo(r.ctx, "db", 2, info); err != nil {
		t.Fatal(err)
	}
	p, err := r.o.Gates.GetTagPermit(r.ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tag":"db","max_allowed":2,"held":0,"waiting":0,"create_time":` + jsonNum(p.CreateTime) + `,"modify_time":` + jsonNum(p.ModifyTime) + `,"source":"test","team":{"name":"data"}}`
	if got := rigJSON(p); got != want {
		t.Errorf("permit %s\nwant %s", got, want)
	}
	if _, err := r.o.Gates.PutTagPermitInfo(r.ctx, "db", 3, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := r.o.Gates.GetTagPermit(r.ctx, "db"); p.ExtraInfo != nil || p.MaxAllowed != 3 {
		t.Errorf("after a put without extra info: %s", rigJSON(p))
	}
	_, err = r.o.Gates.PutTagPermitInfo(r.ctx, "db", 1, map[string]json.RawMessage{"held": json.RawMessage(`1`)})
	wantRefusal(t, err, http.StatusBadRequest, `extra_info: key "held" is reserved`)
	_, err = r.o.Gates.PutTagPermitInfo(r.ctx, "db", 1, map[string]json.RawMessage{"x": json.RawMessage(`"` + strings.Repeat("a", ExtraInfoSizeLimit) + `"`)})
	wantRefusal(t, err, http.StatusBadRequest, "extra_info: 4104 bytes of JSON; the limit is 4096")
	if p, _ := r.o.Gates.GetTagPermit(r.ctx, "db"); p.MaxAllowed != 3 {
		t.Errorf("a refused put changed the permit: %s", rigJSON(p))
	}
}

func jsonNum(n int64) string { return string(mustJSON(n)) }

// TestRestartKeepsRuntimeTags: a run restarted from an ended one keeps
// its runtime tags (and so their permits).
func TestRestartKeepsRuntimeTags(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("rtr", "", workStep("t0", "Titus", "")))
	r.start("rtr", StartRequest{RuntimeTags: []json.RawMessage{json.RawMessage(`"nightly"`)}})
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "rtr", 1, 0, "stop"); err != nil {
		t.Fatal(err)
	}
	r.decide("rtr", 1, 1)
	v, err := r.o.Actions.RestartInstance(r.ctx, "rtr", 1, RestartRequest{})
	if err != nil || v.WorkflowRunID != 2 {
		t.Fatalf("restart: %+v %v", v, err)
	}
	run2, err := r.o.Runs.GetRun(r.ctx, "rtr", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := rigJSON(run2.RunConfig); got != `{"runtime_tags":["nightly"]}` {
		t.Errorf("run 2's run_config %s", got)
	}
}

// TestTagSizeLimits: the runtime tags of a start and the tags of a
// workflow are bounded in total, not only one by one.
func TestTagSizeLimits(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("sz", "", workStep("t0", "Titus", "")))
	big := func(name string, n int) json.RawMessage {
		return json.RawMessage(`{"name":"` + name + `","x":"` + strings.Repeat("a", n) + `"}`)
	}
	_, err := r.o.Runs.StartWorkflow(r.ctx, "sz", "active", StartRequest{RuntimeTags: []json.RawMessage{big("a", 3000), big("b", 3000)}})
	wantRefusal(t, err, http.StatusBadRequest, "runtime_tags: 6041 bytes of JSON; the limit is 4096")
	for i := range 8 { // 8 × ~3.9 KB fit in 32 KB; the ninth does not
		if _, err := r.o.Definitions.AddWorkflowTag(r.ctx, "sz", big(fmt.Sprintf("t%d", i), 3800)); err != nil {
			t.Fatal(i, err)
		}
	}
	_, err = r.o.Definitions.AddWorkflowTag(r.ctx, "sz", big("t8", 3800))
	wantRefusal(t, err, http.StatusBadRequest, "tag: the workflow's tags would be", "the limit is 32768")
}

// TestPropertiesUpdateRefusesTags: as in Maestro, a properties update may
// not set tags (they go through the tag endpoints, with their limits).
func TestPropertiesUpdateRefusesTags(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("pt", "", workStep("t0", "Titus", "")))
	_, err := r.o.Definitions.UpdateProperties(r.ctx, "pt", []byte(`{"tags": ["a"], "description": "d"}`))
	wantRefusal(t, err, http.StatusBadRequest, "tags: cannot set workflow property tags", "properties/tag")
	v, _ := r.o.Definitions.GetWorkflowVersion(r.ctx, "pt", "latest")
	if strings.Contains(string(v.PropertiesSnapshot), `"d"`) {
		t.Errorf("a refused update was stored: %s", v.PropertiesSnapshot)
	}
}

// TestStartBatchRuntimeTags: a batch's requests carry their own runtime
// tags; one bad request's tags refuse the batch, naming the request, and
// nothing starts.
func TestStartBatchRuntimeTags(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("bt", "", workStep("t0", "Titus", "")))
	reqs := batchOf(2, "0000000c")
	reqs[1].RuntimeTags = []json.RawMessage{json.RawMessage(`"maestro_bad"`)}
	_, err := r.o.Runs.StartBatch(r.ctx, "bt", "active", reqs)
	wantRefusal(t, err, http.StatusBadRequest, `requests[1]: invalid runtime tags: runtime_tags[0]: tag name "maestro_bad"`)
	if n := r.instances("bt"); n != 0 {
		t.Fatalf("%d instances after a refused batch", n)
	}
	reqs[1].RuntimeTags = []json.RawMessage{json.RawMessage(`"nightly"`)}
	if _, err := r.o.Runs.StartBatch(r.ctx, "bt", "active", reqs); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.o.Runs.GetInstance(r.ctx, "bt", 2); rigJSON(v.RunConfig) != `{"runtime_tags":["nightly"]}` {
		t.Errorf("request 1's run_config %s", rigJSON(v.RunConfig))
	}
	if v, _ := r.o.Runs.GetInstance(r.ctx, "bt", 1); v.RunConfig != nil {
		t.Errorf("request 0's run_config %s", rigJSON(v.RunConfig))
	}
}
