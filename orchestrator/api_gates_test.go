package orchestrator

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
)

// The Gates and Signals roles over the memstore: breakpoints that pause
// step attempts and their resumption, tag permits that hold steps back,
// and signals — announced, deduplicated, read, and matched by the steps
// that wait for them.

// announceLong announces signal name with LONG param dt and request id.
func (r *roleRig) announceLong(name string, dt int64, requestID string) (*SignalView, error) {
	return r.o.Signals.AnnounceSignal(r.ctx, signals.Announce{Name: name, Params: map[string]any{"dt": dt}, RequestID: requestID},
		SignalSource{Kind: "api"})
}

// TestBreakpointsPauseAndResume: a breakpoint pauses the attempts of its
// step that start after it; they are listed, resumed one by one (the
// attempt named must be the current one) or all when the breakpoints are
// removed; a breakpoint on a step or version that does not exist is
// refused.
func TestBreakpointsPauseAndResume(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("bp", 2))
	for _, c := range []struct {
		b    Breakpoint
		says string
	}{
		{Breakpoint{WorkflowID: "bp", StepID: "ghost"}, "has no step ghost"},
		{Breakpoint{WorkflowID: "bp", StepID: "t1", Version: 2}, "has no version 2"},
		{Breakpoint{WorkflowID: "nope", StepID: "t1"}, "workflow nope not found"},
	} {
		_, err := r.o.Gates.AddBreakpoint(r.ctx, c.b)
		wantRefusal(t, err, http.StatusNotFound, c.says)
	}
	if _, err := r.o.Gates.AddBreakpoint(r.ctx, Breakpoint{WorkflowID: "bp", StepID: "t1"}); err != nil {
		t.Fatal(err)
	}
	if list, err := r.o.Gates.ListBreakpoints(r.ctx, "bp", ""); err != nil || len(list) != 1 || list[0].StepID != "t1" {
		t.Fatalf("breakpoints %+v %v", list, err)
	}
	runner := rigRunners(&workRunner{})
	for range 2 {
		r.start("bp", StartRequest{})
		r.pump(runner)
	}
	paused, err := r.o.Gates.PausedAttempts(r.ctx, "bp", "t1")
	if err != nil || rigJSON(paused) != `[{"workflow_id":"bp","workflow_version_id":1,"workflow_instance_id":1,"workflow_run_id":1,"step_id":"t1","step_attempt_id":1},`+
		`{"workflow_id":"bp","workflow_version_id":1,"workflow_instance_id":2,"workflow_run_id":1,"step_id":"t1","step_attempt_id":1}]` {
		t.Fatalf("paused %s %v", rigJSON(paused), err)
	}
	_, err = r.o.Actions.ResumeAttempt(r.ctx, "bp", 1, 1, "t1", 2)
	wantRefusal(t, err, http.StatusConflict, "is at attempt 1, not 2")
	_, err = r.o.Actions.ResumeAttempt(r.ctx, "bp", 1, 1, "ghost", 1)
	wantRefusal(t, err, http.StatusNotFound, "has no step ghost")
	if _, err := r.o.Actions.ResumeAttempt(r.ctx, "bp", 1, 1, "t1", 1); err != nil {
		t.Fatal(err)
	}
	r.pump(runner)
	r.wantRun("bp", 1, "SUCCEEDED t0=SUCCEEDED t1=SUCCEEDED")
	r.wantRun("bp", 2, "IN_PROGRESS t0=SUCCEEDED t1=PAUSED")
	if n, err := r.o.Gates.RemoveBreakpoints(r.ctx, "bp", "t1", true); err != nil || n != 1 {
		t.Fatalf("removed, resuming %d: %v", n, err)
	}
	r.decide("bp", 2, 1) // the resume event's wake
	r.pump(runner)
	r.wantRun("bp", 2, "SUCCEEDED t0=SUCCEEDED t1=SUCCEEDED")
	r.start("bp", StartRequest{})
	r.pump(runner)
	r.wantRun("bp", 3, "SUCCEEDED t0=SUCCEEDED t1=SUCCEEDED")
	if list, err := r.o.Gates.ListBreakpoints(r.ctx, "bp", ""); err != nil || len(list) != 0 {
		t.Errorf("breakpoints left %+v %v", list, err)
	}
}

// TestTagPermitsHoldStepsBack: a step whose tag's permit is all taken
// waits for it; raising the limit lets it start; the reserved tags and
// unknown permits are refused.
func TestTagPermitsHoldStepsBack(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("tagged", "", workStep("t0", "Titus", `"tags": [{"name": "db"}]`)))
	if p, err := r.o.Gates.PutTagPermit(r.ctx, "db", 1); err != nil || p.MaxAllowed != 1 {
		t.Fatalf("put: %+v %v", p, err)
	}
	r.start("tagged", StartRequest{})
	r.start("tagged", StartRequest{})
	r.disp.take(t)
	r.wantRun("tagged", 1, "IN_PROGRESS t0=RUNNING")
	if ss := r.step("tagged", 2, 1, "t0"); ss.Status != model.StepWaitingForPermits {
		t.Fatalf("the second t0 is %s", ss.Status)
	}
	if p, err := r.o.Gates.GetTagPermit(r.ctx, "db"); err != nil || p.Held != 1 || p.Waiting != 1 {
		t.Errorf("permit %+v %v", p, err)
	}
	if _, err := r.o.Gates.PutTagPermit(r.ctx, "db", 2); err != nil {
		t.Fatal(err)
	}
	r.decide("tagged", 2, 1) // the wake of the event the raise put
	r.wantRun("tagged", 2, "IN_PROGRESS t0=RUNNING")
	if p, err := r.o.Gates.GetTagPermit(r.ctx, "db"); err != nil || p.Held != 2 || p.Waiting != 0 {
		t.Errorf("permit %+v %v", p, err)
	}
	for _, c := range []struct {
		call   func() error
		status int
		says   string
	}{
		{func() error { _, err := r.o.Gates.PutTagPermit(r.ctx, InternalTagPrefix+"x", 1); return err }, http.StatusBadRequest, "reserved prefix"},
		{func() error { _, err := r.o.Gates.DeleteTagPermit(r.ctx, InternalTagPrefix+"x"); return err }, http.StatusBadRequest, "step_concurrency"},
		{func() error { _, err := r.o.Gates.GetTagPermit(r.ctx, "none"); return err }, http.StatusNotFound, `no tag permit for tag "none"`},
		{func() error { _, err := r.o.Gates.DeleteTagPermit(r.ctx, "none"); return err }, http.StatusNotFound, `no tag permit for tag "none"`},
	} {
		wantRefusal(t, c.call(), c.status, c.says)
	}
}

// TestAnnounceAndReadSignals: an announcement is validated field by field,
// deduplicated by its request id, and read back by sequence number (0:
// the latest).
func TestAnnounceAndReadSignals(t *testing.T) {
	r := newRoleRig(t)
	first, err := r.announceLong("table/a", 1, "req-1")
	if err != nil || first.SeqID != 1 || !first.Created {
		t.Fatalf("first %+v %v", first, err)
	}
	again, err := r.announceLong("table/a", 99, "req-1")
	if err != nil || again.SeqID != 1 || again.Created {
		t.Errorf("the same request again %+v %v", again, err)
	}
	if second, err := r.announceLong("table/a", 2, ""); err != nil || second.SeqID != 2 {
		t.Errorf("second %+v %v", second, err)
	}
	if v, err := r.o.Signals.GetSignal(r.ctx, "table/a", 0); err != nil || v.SeqID != 2 || v.Params["dt"] != int64(2) {
		t.Errorf("latest %+v %v", v, err)
	}
	if v, err := r.o.Signals.GetSignal(r.ctx, "table/a", 1); err != nil || v.Params["dt"] != int64(1) {
		t.Errorf("first read back %+v %v", v, err)
	}
	_, err = r.o.Signals.GetSignal(r.ctx, "table/a", 5)
	wantRefusal(t, err, http.StatusNotFound, `signal "table/a" has no instance 5`)
	_, err = r.o.Signals.GetSignal(r.ctx, "table/b", 0)
	wantRefusal(t, err, http.StatusNotFound, `no signal "table/b" has been announced`)
	for _, a := range []signals.Announce{
		{Name: "", Params: map[string]any{}},
		{Name: "table/a", Params: map[string]any{"f": 1.5}},
		{Name: "table/a", Params: map[string]any{"": "x"}},
		{Name: "table/a", Params: map[string]any{}, Payload: map[string]any{"name": "x"}},
	} {
		_, err := r.o.Signals.AnnounceSignal(r.ctx, a, SignalSource{Kind: "api"})
		wantRefusal(t, err, http.StatusBadRequest, "invalid signal")
	}
}

// TestStepsMatchSignals: a step waits for a signal whose params meet its
// dependency's match params: one delivered that does not match leaves it
// waiting, one that does lets it run, and the signal's lineage names the
// step it unblocked; a step that starts after a matching signal was
// announced finds it at once.
func TestStepsMatchSignals(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("matched", "", `{"step": {"id": "g", "type": "NoOp", "signal_dependencies": [{"name": "table/a",
		"match_params": {"dt": {"param": {"type": "LONG", "value": 5}, "operator": ">="}}}]}}`))
	r.start("matched", StartRequest{})
	deliver := func(dt int64) int64 {
		t.Helper()
		v, err := r.announceLong("table/a", dt, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.work(wireWork{Kind: WorkSignal, SignalName: v.Name, SignalSeq: v.SeqID}, nil); err != nil {
			t.Fatal(err)
		}
		r.decide("matched", 1, 1)
		return v.SeqID
	}
	deliver(3)
	r.wantRun("matched", 1, "IN_PROGRESS g=WAITING_FOR_SIGNALS")
	seq := deliver(7)
	r.wantRun("matched", 1, "SUCCEEDED g=SUCCEEDED")
	lv, err := r.o.Signals.SignalLineage(r.ctx, "table/a", seq)
	if err != nil || len(lv.Unblocked) != 1 || lv.Unblocked[0].WorkflowID != "matched" || lv.Unblocked[0].StepID != "g" {
		t.Errorf("lineage %s %v", rigJSON(lv), err)
	}
	r.start("matched", StartRequest{})
	r.wantRun("matched", 2, "SUCCEEDED g=SUCCEEDED")
}

// queuedStep is a Titus step that runs in job queue q with priority prio,
// needing one cpu.
func queuedStep(id string, prio int) string {
	return workStep(id, "Titus", fmt.Sprintf(`"params": {"job_queue": {"type": "MAP", "value": {
		"queue": {"type": "STRING", "value": "q"}, "priority": {"type": "LONG", "value": %d}, "cpu": {"type": "LONG", "value": 1}}}}`, prio))
}

// TestJobQueuesAdmitSteps: a job queue's capacity admits its steps
// highest priority first and shows who runs and who waits; a raised
// capacity admits the waiting; a deleted queue fails them; bad requests
// and unknown queues are refused.
func TestJobQueuesAdmitSteps(t *testing.T) {
	r := newRoleRig(t)
	for _, c := range []struct {
		req  JobQueueRequest
		says string
	}{
		{JobQueueRequest{Name: ""}, "name: must be 1 to 128 characters"},
		{JobQueueRequest{Name: "a#b"}, "without # or ~"},
		{JobQueueRequest{Name: "q", CPU: -1}, "must not be negative"},
	} {
		_, err := r.o.Gates.PutJobQueue(r.ctx, c.req)
		wantRefusal(t, err, http.StatusBadRequest, "invalid job queue", c.says)
	}
	if q, err := r.o.Gates.PutJobQueue(r.ctx, JobQueueRequest{Name: "q", CPU: 2}); err != nil || q.CPU != 2 {
		t.Fatalf("put: %+v %v", q, err)
	}
	r.push(workDef("queued", "", queuedStep("lo", 1), queuedStep("hi", 3), queuedStep("mid", 2)))
	r.start("queued", StartRequest{})
	r.disp.take(t)
	r.wantRun("queued", 1, "IN_PROGRESS hi=RUNNING lo=WAITING_FOR_PERMITS mid=RUNNING")
	q, err := r.o.Gates.GetJobQueue(r.ctx, "q")
	if err != nil || len(q.Running) != 2 || len(q.Waiting) != 1 || q.Waiting[0].StepID != "lo" || q.Waiting[0].Position != 1 {
		t.Fatalf("queue %s %v", rigJSON(q), err)
	}
	if _, err := r.o.Gates.PutJobQueue(r.ctx, JobQueueRequest{Name: "q", CPU: 3}); err != nil {
		t.Fatal(err)
	}
	r.decide("queued", 1, 1) // the wake of the event the raise put
	r.wantRun("queued", 1, "IN_PROGRESS hi=RUNNING lo=RUNNING mid=RUNNING")
	r.start("queued", StartRequest{})
	r.wantRun("queued", 2, "IN_PROGRESS hi=WAITING_FOR_PERMITS lo=WAITING_FOR_PERMITS mid=WAITING_FOR_PERMITS")
	if _, err := r.o.Gates.DeleteJobQueue(r.ctx, "q"); err != nil {
		t.Fatal(err)
	}
	r.decide("queued", 2, 1)
	if st := r.state("queued", 2, 1); st.Status != model.WorkflowFailed {
		t.Errorf("the waiting steps of a deleted queue: %s", rigStatus(st))
	}
	for _, call := range []func() error{
		func() error { _, err := r.o.Gates.GetJobQueue(r.ctx, "q"); return err },
		func() error { _, err := r.o.Gates.DeleteJobQueue(r.ctx, "q"); return err },
	} {
		wantRefusal(t, call(), http.StatusNotFound, `no job queue "q"`)
	}
}
