package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Maestro's paged lists and the reads beside them (paged.go, reads.go),
// over the memstore.

// TestPageSpan: the ids a page covers, as Maestro's PaginationHelper
// computes them, newest first: forwards from the newest or below a
// cursor, backwards from the oldest or above one, clipped to the list.
func TestPageSpan(t *testing.T) {
	for _, c := range []struct {
		req              PageRequest
		earliest, latest int64
		low, high        int64
		ok               bool
	}{
		{PageRequest{Size: 2}, 1, 5, 4, 5, true},
		{PageRequest{Size: 2, Cursor: 4}, 1, 5, 2, 3, true},
		{PageRequest{Size: 2, Cursor: 2}, 1, 5, 1, 1, true},
		{PageRequest{Size: 2, Cursor: 1}, 1, 5, 0, 0, false},
		{PageRequest{Size: 9}, 1, 5, 1, 5, true},
		{PageRequest{Prev: true, Size: 2}, 1, 5, 1, 2, true},
		{PageRequest{Prev: true, Size: 2, Cursor: 2}, 1, 5, 3, 4, true},
		{PageRequest{Prev: true, Size: 2, Cursor: 4}, 1, 5, 5, 5, true},
		{PageRequest{Prev: true, Size: 2, Cursor: 5}, 1, 5, 0, 0, false},
		{PageRequest{Size: 2, Cursor: 99}, 1, 5, 4, 5, true},
		{PageRequest{Size: 2}, 1, 0, 0, 0, false},
	} {
		low, high, ok := c.req.span(c.earliest, c.latest)
		if ok != c.ok || (ok && (low != c.low || high != c.high)) {
			t.Errorf("%+v of %d..%d: %d..%d %v, want %d..%d %v", c.req, c.earliest, c.latest, low, high, ok, c.low, c.high, c.ok)
		}
	}
}

// TestVersionPagesStopAtTheirBytes: a page of versions whose definitions
// pass its byte budget ends early (at least one version), keeping the end
// it was read from; past pageChunk versions it stops reading.
func TestVersionPagesStopAtTheirBytes(t *testing.T) {
	r := newRoleRig(t)
	for i := 0; i < pageChunk+5; i++ {
		r.push(workDef("big", "", workStep("t0", "NoOp", "")))
	}
	one, err := r.stores.Definitions.GetVersion(r.ctx, "big", 1)
	if err != nil {
		t.Fatal(err)
	}
	size := len(one.Definition)
	latest := int64(pageChunk + 5)
	read := func(prev bool, budget int, want ...int64) string {
		recs, err := r.o.Definitions.versionsWithin(r.ctx, "big", want, prev, budget)
		if err != nil {
			return err.Error()
		}
		var out []string
		for _, rec := range recs {
			out = append(out, fmt.Sprint(rec.Version))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		prev   bool
		budget int
		want   []int64
		got    string
	}{
		{false, 2*size + 1, []int64{5, 4, 3, 2, 1}, "5 4"},
		{true, 2*size + 1, []int64{5, 4, 3, 2, 1}, "2 1"},
		{false, 1, []int64{5, 4, 3}, "5"},
		{true, 1, []int64{5, 4, 3}, "3"},
		{false, 100 * size, []int64{3, 2, 1}, "3 2 1"},
		{false, (pageChunk + 2) * size, ids(1, latest), strings.TrimSpace(strings.Repeat("x ", pageChunk+2))},
	} {
		got := read(c.prev, c.budget, c.want...)
		if c.budget == (pageChunk+2)*size {
			if n := len(strings.Fields(got)); n != pageChunk+2 {
				t.Errorf("a budget of %d versions across two chunks: %d versions", pageChunk+2, n)
			}
			continue
		}
		if got != c.got {
			t.Errorf("prev=%v budget %d of %v: %s, want %s", c.prev, c.budget, c.want, got, c.got)
		}
	}
	// ListVersions answers whole pages under MaxPageBytes.
	p, err := r.o.Definitions.ListVersions(r.ctx, "big", PageRequest{Size: 3})
	if err != nil || pageIDs(p, func(v *DefinitionView) int64 { return v.Metadata.WorkflowVersionID }) != fmt.Sprintf("%d %d %d [%d..%d of 1..%d]", latest, latest-1, latest-2, latest-2, latest, latest) {
		t.Errorf("page: %v", err)
	}
}

// pageIDs prints a page's ids and bounds.
func pageIDs[T any](p *Page[T], id func(T) int64) string {
	var b strings.Builder
	for _, e := range p.Elements {
		fmt.Fprintf(&b, "%d ", id(e))
	}
	fmt.Fprintf(&b, "[%d..%d of %d..%d]", p.Low, p.High, p.Earliest, p.Latest)
	return b.String()
}

// TestPagedRunsInstancesVersions: runs, instances and versions page
// forwards and back through their cursors; sizes out of bounds are a 400
// naming first or last, and what does not exist a 404.
func TestPagedRunsInstancesVersions(t *testing.T) {
	r := readRig(t)
	r.push(workDef("reads", "", workStep("t0", "Titus", "")))
	r.push(workDef("reads", "", workStep("t0", "Titus", "")))
	runID := func(v *InstanceView) int64 { return v.WorkflowRunID }
	instID := func(v *InstanceView) int64 { return v.WorkflowInstanceID }
	verID := func(v *DefinitionView) int64 { return v.Metadata.WorkflowVersionID }
	for _, c := range []struct {
		name string
		read func(PageRequest) (string, error)
		reqs []PageRequest
		want []string
	}{
		{"runs", func(q PageRequest) (string, error) {
			p, err := r.o.Runs.ListRuns(r.ctx, "reads", 1, q)
			if err != nil {
				return "", err
			}
			return pageIDs(p, runID) + " " + p.Elements[0].Status, nil
		}, []PageRequest{{Size: 1}, {Size: 1, Cursor: 2}, {Prev: true, Size: 5, Cursor: 1}, {Prev: true, Size: 5}},
			[]string{"2 [2..2 of 1..2] SUCCEEDED", "1 [1..1 of 1..2] FAILED", "2 [2..2 of 1..2] SUCCEEDED", "2 1 [1..2 of 1..2] SUCCEEDED"}},
		{"instances", func(q PageRequest) (string, error) {
			p, err := r.o.Runs.ListInstancePage(r.ctx, "reads", q)
			if err != nil {
				return "", err
			}
			return pageIDs(p, instID), nil
		}, []PageRequest{{Size: 2}, {Size: 2, Cursor: 2}, {Prev: true, Size: 2}, {Prev: true, Size: 2, Cursor: 2}},
			[]string{"3 2 [2..3 of 1..3]", "1 [1..1 of 1..3]", "2 1 [1..2 of 1..3]", "3 [3..3 of 1..3]"}},
		{"versions", func(q PageRequest) (string, error) {
			p, err := r.o.Definitions.ListVersions(r.ctx, "reads", q)
			if err != nil {
				return "", err
			}
			return pageIDs(p, verID), nil
		}, []PageRequest{{Size: 2}, {Size: 2, Cursor: 2}, {Prev: true, Size: 1, Cursor: 1}},
			[]string{"3 2 [2..3 of 1..3]", "1 [1..1 of 1..3]", "2 [2..2 of 1..3]"}},
	} {
		for i, q := range c.reqs {
			got, err := c.read(q)
			if err != nil || got != c.want[i] {
				t.Errorf("%s %+v: %q %v, want %q", c.name, q, got, err, c.want[i])
			}
		}
	}
	// Past either end: an empty page that still knows the list.
	p, err := r.o.Runs.ListRuns(r.ctx, "reads", 1, PageRequest{Size: 3, Cursor: 1})
	if err != nil || len(p.Elements) != 0 || p.Latest != 2 || p.Elements == nil {
		t.Errorf("past the oldest run: %+v %v", p, err)
	}
	for _, q := range []PageRequest{{Size: 0}, {Size: MaxPageSize + 1}, {Prev: true}} {
		_, err := r.o.Runs.ListRuns(r.ctx, "reads", 1, q)
		want := "first: must be from 1 to 200"
		if q.Prev {
			want = "last: must be from 1 to 200"
		}
		wantRefusal(t, err, http.StatusBadRequest, want)
	}
	_, err = r.o.Runs.ListRuns(r.ctx, "reads", 9, PageRequest{Size: 1})
	wantRefusal(t, err, http.StatusNotFound, "workflow reads instance 9 not found")
	_, err = r.o.Runs.ListInstancePage(r.ctx, "nope", PageRequest{Size: 1})
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
	_, err = r.o.Definitions.ListVersions(r.ctx, "nope", PageRequest{Size: 1})
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
}

// TestRunStepsAndStepAcrossRuns: the steps of one run are those that ran
// in it; a step's view across runs is its latest attempt, in the run it
// ran in when a restart carried it over.
func TestRunStepsAndStepAcrossRuns(t *testing.T) {
	r := readRig(t)
	list := func(run int64) string {
		steps, err := r.o.Runs.ListRunSteps(r.ctx, "reads", 1, run)
		if err != nil {
			return err.Error()
		}
		var out []string
		for _, s := range steps {
			out = append(out, fmt.Sprintf("%s#%d@%d %s", s.StepID, s.StepAttemptID, s.WorkflowRunID, s.RuntimeState.Status))
		}
		return strings.Join(out, " ")
	}
	if got := list(1); got != "t0#1@1 SUCCEEDED t1#1@1 FATALLY_FAILED" {
		t.Errorf("run 1: %s", got)
	}
	if got := list(2); got != "t1#1@2 SUCCEEDED" {
		t.Errorf("run 2 (t0 carried over from run 1): %s", got)
	}
	_, err := r.o.Runs.ListRunSteps(r.ctx, "reads", 1, 3)
	wantRefusal(t, err, http.StatusNotFound, "workflow reads instance 1 has no run 3")
	for step, want := range map[string]string{"t0": "t0#1@1 SUCCEEDED Titus", "t1": "t1#1@2 SUCCEEDED Titus"} {
		v, err := r.o.Runs.GetStepView(r.ctx, "reads", 1, step)
		if err != nil {
			t.Errorf("%s: %v", step, err)
			continue
		}
		if got := fmt.Sprintf("%s#%d@%d %s %s", v.StepID, v.StepAttemptID, v.WorkflowRunID, v.RuntimeState.Status, v.StepType); got != want {
			t.Errorf("%s: %s, want %s", step, got, want)
		}
	}
	_, err = r.o.Runs.GetStepView(r.ctx, "reads", 1, "ghost")
	wantRefusal(t, err, http.StatusNotFound, "has no step ghost")
	_, err = r.o.Runs.GetStepView(r.ctx, "reads", 2, "t1")
	wantRefusal(t, err, http.StatusNotFound, "instance 2 has no step t1 that was created")
}

// TestWorkflowOverviewTimelineSnapshot: the overview counts the instances
// not ended by status; the timeline lists the version pushes newest
// first; the properties snapshot is read as latest or by its id, and an
// id not kept is a 404 saying so.
func TestWorkflowOverviewTimelineSnapshot(t *testing.T) {
	r := readRig(t)
	r.push(workDef("reads", `{"owner": "unit", "run_strategy": "parallel", "step_concurrency": 4}`, workStep("t0", "Titus", "")))
	ov, err := r.o.Definitions.GetWorkflowOverview(r.ctx, "reads")
	if err != nil {
		t.Fatal(err)
	}
	if ov.LatestVersionID != 2 || ov.ActiveVersionID == nil || *ov.ActiveVersionID != 2 || ov.DefaultVersionID != 2 ||
		ov.LatestInstanceID != 3 || ov.StepConcurrency == nil || *ov.StepConcurrency != 4 {
		t.Errorf("overview %+v", ov)
	}
	if ov.NonterminalInstances["IN_PROGRESS"] != 1 || ov.NonterminalInstances["CREATED"] != 0 {
		t.Errorf("instances not ended: %v, want IN_PROGRESS 1 (instance 2)", ov.NonterminalInstances)
	}
	tl, err := r.o.Definitions.GetWorkflowTimeline(r.ctx, "reads")
	if err != nil || len(tl.TimelineEvents) != 2 || !strings.Contains(tl.TimelineEvents[0].Log, "version [2]") ||
		tl.TimelineEvents[0].Timestamp < tl.TimelineEvents[1].Timestamp {
		t.Errorf("timeline %+v %v", tl, err)
	}
	snap, err := r.o.Definitions.GetPropertiesSnapshot(r.ctx, "reads", "latest")
	if err != nil {
		t.Fatal(err)
	}
	var fields struct {
		WorkflowID      string `json:"workflow_id"`
		CreateTime      int64  `json:"create_time"`
		Owner           string `json:"owner"`
		StepConcurrency int64  `json:"step_concurrency"`
	}
	if err := json.Unmarshal(snap, &fields); err != nil || fields.WorkflowID != "reads" || fields.Owner != "unit" || fields.StepConcurrency != 4 || fields.CreateTime == 0 {
		t.Fatalf("snapshot %s %v", snap, err)
	}
	if again, err := r.o.Definitions.GetPropertiesSnapshot(r.ctx, "reads", fmt.Sprint(fields.CreateTime)); err != nil || string(again) != string(snap) {
		t.Errorf("snapshot by its id: %s %v", again, err)
	}
	_, err = r.o.Definitions.GetPropertiesSnapshot(r.ctx, "reads", "1")
	wantRefusal(t, err, http.StatusNotFound, "only the current one")
	_, err = r.o.Definitions.GetPropertiesSnapshot(r.ctx, "reads", "yesterday")
	wantRefusal(t, err, http.StatusBadRequest, "snapshotId: must be latest or a snapshot id")
	_, err = r.o.Definitions.GetWorkflowOverview(r.ctx, "nope")
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
	_, err = r.o.Definitions.GetWorkflowTimeline(r.ctx, "nope")
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
}

// TestInlinePathAndID: an iteration's path climbs to the run above its
// loop; the inline workflow id of the loop around a step is found from
// the root run and the step; a wrong path is a 400 saying why.
func TestInlinePathAndID(t *testing.T) {
	r, inline := loopRig(t)
	path, err := r.o.Runs.GetInlinePath(r.ctx, inline, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(path) != 2 || path[0].WorkflowID != "outer" || path[0].InstanceID != 1 || path[0].RunID != 1 || path[0].StepID != "loop" ||
		path[0].StepAttemptID != 1 || path[1].WorkflowID != inline || path[1].InstanceID != 2 {
		t.Errorf("path %+v", path)
	}
	_, err = r.o.Runs.GetInlinePath(r.ctx, "outer", 1)
	wantRefusal(t, err, http.StatusBadRequest, "outer is not a loop's inline workflow")
	_, err = r.o.Runs.GetInlinePath(r.ctx, inline, 9)
	wantRefusal(t, err, http.StatusNotFound, "instance 9 not found")

	id, err := r.o.Runs.GetInlineWorkflowID(r.ctx, []UpstreamInfo{{WorkflowID: "outer", InstanceID: 1}, {StepID: "x"}})
	if err != nil || id != inline {
		t.Errorf("inline id %q %v, want %s", id, err, inline)
	}
	_, err = r.o.Runs.GetInlineWorkflowID(r.ctx, []UpstreamInfo{{WorkflowID: "outer", InstanceID: 1}, {InstanceID: 1}, {StepID: "x"}})
	wantRefusal(t, err, http.StatusBadRequest, "step x is inside 1 loops of workflow outer; the path names 2")
	_, err = r.o.Runs.GetInlineWorkflowID(r.ctx, []UpstreamInfo{{WorkflowID: "outer", InstanceID: 1}, {StepID: "loop"}})
	wantRefusal(t, err, http.StatusBadRequest, "step loop is inside 0 loops")
	_, err = r.o.Runs.GetInlineWorkflowID(r.ctx, []UpstreamInfo{{WorkflowID: "outer", InstanceID: 7}, {StepID: "x"}})
	wantRefusal(t, err, http.StatusNotFound, "instance 7 not found")
}

// TestWorkflowPagesBothWays: the workflows page forwards and backwards in
// id order from a cursor; a cursor that is not a workflow id is a 400.
func TestWorkflowPagesBothWays(t *testing.T) {
	r := readRig(t)
	for _, wf := range []string{"a", "b", "c"} {
		r.push(rigChain(wf, 1))
	}
	for _, c := range []struct {
		req  WorkflowPageRequest
		want string
	}{
		{WorkflowPageRequest{Size: 2}, "a b next=true prev=false"},
		{WorkflowPageRequest{Size: 2, Cursor: "b"}, "c reads next=true prev=true"},
		{WorkflowPageRequest{Size: 2, Cursor: "reads"}, " next=false prev=true"},
		{WorkflowPageRequest{Prev: true, Size: 2, Cursor: "c"}, "a b next=true prev=true"},
		{WorkflowPageRequest{Prev: true, Size: 2, Cursor: "a"}, " next=true prev=false"},
		{WorkflowPageRequest{Prev: true, Size: 3}, "b c reads next=false prev=true"},
	} {
		p, err := r.o.Definitions.ListWorkflowPage(r.ctx, c.req)
		if err != nil {
			t.Errorf("%+v: %v", c.req, err)
			continue
		}
		var ids []string
		for _, w := range p.Workflows {
			ids = append(ids, w.WorkflowID)
		}
		if got := fmt.Sprintf("%s next=%v prev=%v", strings.Join(ids, " "), p.HasNext, p.HasPrev); got != c.want {
			t.Errorf("%+v: %s, want %s", c.req, got, c.want)
		}
	}
	_, err := r.o.Definitions.ListWorkflowPage(r.ctx, WorkflowPageRequest{Size: 1, Cursor: "not a cursor!"})
	wantRefusal(t, err, http.StatusBadRequest, "cursor:")
	_, err = r.o.Definitions.ListWorkflowPage(r.ctx, WorkflowPageRequest{Size: 0})
	wantRefusal(t, err, http.StatusBadRequest, "first: must be from 1 to 200")
}
