package orchestrator

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// backfillDef is a SEQUENTIAL workflow with an hourly trigger whose step
// waits (a Sleep the rig never runs), so its runs stay in progress until
// stopped.
const backfillDef = `{"properties": {"owner": "unit"}, "workflow": {"id": "hourly",
  "time_triggers": [{"type": "PREDEFINED", "expression": "@hourly", "timezone": "UTC"}],
  "steps": [{"step": {"id": "s", "type": "Sleep", "params": {"sleep_seconds": {"value": 600, "type": "LONG"}}}}]}}`

// TestBackfillAdmission: a backfill starts one instance per firing, at most
// its concurrency at once, each BACKFILL with the firing's request id and
// time params; its runs take no run-strategy slot, so a manual start of a
// SEQUENTIAL workflow runs beside them; paused it admits nothing, resumed
// it goes on; a firing the scheduler started first is found, not started
// again; cancelled it stops its runs and ends.
func TestBackfillAdmission(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(backfillDef)
	bf := r.o.Backfills
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	v, err := bf.CreateBackfill(r.ctx, wf, BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-01T06:00:00Z", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if v.Total != 6 || v.Admitted != 3 || v.Running != 3 || v.Pending != 3 || v.Status != BackfillRunning || v.NextFiring != "2026-11-01T03:00:00Z" {
		t.Fatalf("created: %+v", v)
	}
	id := v.BackfillID
	for inst := int64(1); inst <= 3; inst++ {
		st := r.state(wf, inst, 1)
		at := day.Add(time.Duration(inst-1) * time.Hour)
		if st.Status != model.WorkflowInProgress || st.Initiator.Type != engine.InitiatorBackfill || st.Initiator.Backfill != id ||
			st.Initiator.ScheduledTime != at.UnixMilli() || st.Initiator.Timezone != "UTC" {
			t.Fatalf("instance %d: %s %+v", inst, st.Status, st.Initiator)
		}
		if st.Params["RUN_TS"] != at.UnixMilli() || st.Params["TARGET_RUN_HOUR"] != at.Format("15") || st.Params["INITIATOR_TYPE"] != "BACKFILL" {
			t.Errorf("instance %d: RUN_TS %v TARGET_RUN_HOUR %v INITIATOR_TYPE %v", inst, st.Params["RUN_TS"], st.Params["TARGET_RUN_HOUR"], st.Params["INITIATOR_TYPE"])
		}
		rec, err := r.ms.Instances.InstanceForRequest(r.ctx, wf, triggers.FiringRequestID(wf, 0, at))
		if err != nil || rec.InstanceID != inst {
			t.Fatalf("instance %d is not the firing's request: %v %+v", inst, err, rec)
		}
	}

	if _, err := r.o.Definitions.DeleteWorkflow(r.ctx, wf); !isStatus(err, 409) || !strings.Contains(err.Error(), id) {
		t.Errorf("delete during a backfill: %v, want a 409 naming it", err)
	}

	// A manual start of the SEQUENTIAL workflow does not wait.
	manual := r.start(wf)
	if manual.Status != string(model.WorkflowInProgress) {
		t.Fatalf("manual start beside the backfill: %s", manual.Status)
	}

	stop := func(inst int64) {
		t.Helper()
		r.putEvent(wf, inst, 1, "a-stop", engine.Action{Action: string(model.WorkflowActionStop)})
		if st := r.mustProcess(wf, inst, 1); !st.Status.IsTerminal() {
			t.Fatalf("instance %d not stopped: %s", inst, st.Status)
		}
	}
	pump := func(want func(*BackfillView) bool) *BackfillView {
		t.Helper()
		body := EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: id})
		if _, err := r.o.Worker.HandleWork(r.ctx, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
		v, err := bf.GetBackfill(r.ctx, wf, id)
		if err != nil {
			t.Fatal(err)
		}
		if !want(v) {
			t.Fatalf("after the pump: %+v", v)
		}
		return v
	}

	if _, err := bf.ActOnBackfill(r.ctx, wf, id, "pause"); err != nil {
		t.Fatal(err)
	}
	stop(1)
	pump(func(v *BackfillView) bool {
		return v.Status == BackfillPaused && v.Admitted == 3 && v.Running == 2 && v.Counts["STOPPED"] == 1 && v.ETASeconds != nil
	})

	// The scheduler fires 04:00 before the backfill reaches it.
	if _, err := r.o.Worker.HandleWork(r.ctx, triggers.EncodeFiring(triggers.Firing{WorkflowID: wf, ScheduledTime: day.Add(4 * time.Hour)}), nil); err != nil {
		t.Fatal(err)
	}
	real, err := r.ms.Instances.InstanceForRequest(r.ctx, wf, triggers.FiringRequestID(wf, 0, day.Add(4*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}

	v, err = bf.ActOnBackfill(r.ctx, wf, id, "resume")
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != BackfillRunning || v.Admitted != 4 || v.Running != 3 {
		t.Fatalf("resumed: %+v", v)
	}
	stop(2)
	v = pump(func(v *BackfillView) bool { return v.Admitted == 5 && v.Running == 3 })
	if got, err := r.ms.Instances.InstanceForRequest(r.ctx, wf, triggers.FiringRequestID(wf, 0, day.Add(4*time.Hour))); err != nil || got.InstanceID != real.InstanceID {
		t.Fatalf("04:00 backfilled as %+v (%v), want the scheduler's instance %d", got, err, real.InstanceID)
	}
	if !strings.Contains(string(real.Initiator), `"TIME"`) {
		t.Errorf("the scheduler's instance's initiator: %s", real.Initiator)
	}

	v, err = bf.ActOnBackfill(r.ctx, wf, id, "cancel")
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != BackfillCancelled || v.Running != 3 || v.NextFiring != "" {
		t.Fatalf("cancelled: %+v", v)
	}
	for _, inst := range []int64{3, real.InstanceID + 1} {
		if st := r.mustProcess(wf, inst, 1); st.Status != model.WorkflowStopped {
			t.Fatalf("instance %d after the cancel: %s", inst, st.Status)
		}
	}
	// The scheduler's instance is not the backfill's to stop: it waits
	// (queued behind the manual run) and the backfill with it.
	if st := r.mustProcess(wf, real.InstanceID, 1); st.Status != model.WorkflowCreated {
		t.Fatalf("the scheduler's instance after the cancel: %s", st.Status)
	}
	pump(func(v *BackfillView) bool { return v.Status == BackfillCancelled && v.Running == 1 && v.EndTime == 0 })
	stop(real.InstanceID)
	v = pump(func(v *BackfillView) bool {
		return v.Status == BackfillCancelled && v.Running == 0 && v.Counts["STOPPED"] == 5 && v.EndTime != 0 && v.ETASeconds == nil
	})
	if _, err := bf.ActOnBackfill(r.ctx, wf, id, "resume"); !isStatus(err, 409) {
		t.Errorf("resume a cancelled backfill: %v, want 409", err)
	}
	if st := r.state(wf, manual.WorkflowInstanceID, 1); st.Status != model.WorkflowInProgress {
		t.Errorf("the manual run: %s", st.Status)
	}
	list, err := bf.ListBackfills(r.ctx, wf)
	if err != nil || len(list.Backfills) != 1 || list.Backfills[0].BackfillID != id {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// TestBackfillCompletesAndLowPriorityYields: a backfill whose runs all end
// completes; a low priority backfill admits nothing while the workflow has
// a live run, and admits once it ends.
func TestBackfillCompletesAndLowPriorityYields(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(backfillDef)
	bf := r.o.Backfills
	manual := r.start(wf)
	v, err := bf.CreateBackfill(r.ctx, wf, BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-01T02:00:00Z", Concurrency: 2, Priority: "low"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Admitted != 0 || v.Priority != "low" {
		t.Fatalf("low priority beside a live run: %+v", v)
	}
	r.putEvent(wf, manual.WorkflowInstanceID, 1, "a-stop", engine.Action{Action: string(model.WorkflowActionStop)})
	r.mustProcess(wf, manual.WorkflowInstanceID, 1)
	if _, err := bf.SetBackfillPriority(r.ctx, wf, v.BackfillID, "bogus"); !isStatus(err, 400) {
		t.Errorf("priority bogus: %v", err)
	}
	v, err = bf.SetBackfillPriority(r.ctx, wf, v.BackfillID, "low") // pumps: the live run ended
	if err != nil || v.Admitted != 2 {
		t.Fatalf("after the live run ended: %+v %v", v, err)
	}
	for inst := int64(2); inst <= 3; inst++ {
		r.putEvent(wf, inst, 1, "a-stop", engine.Action{Action: string(model.WorkflowActionStop)})
		r.mustProcess(wf, inst, 1)
	}
	// A tick pumps and, the backfill done, does not tick again.
	redelay, err := r.o.Worker.HandleWork(r.ctx, []byte(EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: v.BackfillID, Tick: true})), nil)
	if err != nil || redelay != 0 {
		t.Fatalf("tick of a finished backfill: %v %v", redelay, err)
	}
	v, err = bf.GetBackfill(r.ctx, wf, v.BackfillID)
	if err != nil || v.Status != BackfillCompleted || v.Counts["STOPPED"] != 2 || v.EndTime == 0 {
		t.Fatalf("completed: %+v %v", v, err)
	}
}

// TestBackfillEndWakesIt: the commit that ends a backfill's run carries
// the backfill message, dispatched at once; no other run's end does.
func TestBackfillEndWakesIt(t *testing.T) {
	disp := &rigDispatch{}
	r := newRoundRig(t, withDispatcher(disp))
	wf := r.push(backfillDef)
	v, err := r.o.Backfills.CreateBackfill(r.ctx, wf, BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-01T01:00:00Z", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	manual := r.start(wf)
	for _, inst := range []int64{1, manual.WorkflowInstanceID} {
		r.putEvent(wf, inst, 1, "a-stop", engine.Action{Action: string(model.WorkflowActionStop)})
		r.mustProcess(wf, inst, 1)
	}
	var got []string
	for _, m := range disp.messages() {
		if strings.Contains(m.Body, `"kind":"backfill"`) {
			got = append(got, m.Body)
		}
	}
	want := EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: v.BackfillID})
	if len(got) != 1 || got[0] != want {
		t.Fatalf("backfill messages dispatched: %v, want [%s]", got, want)
	}
}

// TestBackfillRefusals: bad requests are 400s naming the field and rule, a
// workflow without time triggers or an interval without firings is
// refused, an interval past the firing limit names it, and nothing is
// stored; a dry run answers counts and stores nothing either.
func TestBackfillRefusals(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(backfillDef)
	bf := r.o.Backfills
	ok := BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", Concurrency: 4}
	tests := []struct {
		name   string
		change func(*BackfillRequest)
		status int
		want   string
	}{
		{"from", func(q *BackfillRequest) { q.From = "yesterday" }, 400, `from: "yesterday" is not an RFC 3339 time`},
		{"to", func(q *BackfillRequest) { q.To = "" }, 400, `to: "" is not an RFC 3339 time`},
		{"order", func(q *BackfillRequest) { q.To = q.From }, 400, "to: must be after from"},
		{"concurrency 0", func(q *BackfillRequest) { q.Concurrency = 0 }, 400, "concurrency: 0 is out of range, 1 to 100"},
		{"concurrency 101", func(q *BackfillRequest) { q.Concurrency = 101 }, 400, "concurrency: 101 is out of range, 1 to 100"},
		{"priority", func(q *BackfillRequest) { q.Priority = "high" }, 400, `priority: "high" is not low or normal`},
		{"limit", func(q *BackfillRequest) { q.To = "2028-01-01T00:00:00Z" }, 400, "more than 10000 firings, the limit of one backfill"},
		{"no firing", func(q *BackfillRequest) { q.From, q.To = "2026-11-01T00:10:00Z", "2026-11-01T00:20:00Z" }, 400, "no time trigger fires"},
	}
	for _, tt := range tests {
		q := ok
		tt.change(&q)
		_, err := bf.CreateBackfill(r.ctx, wf, q)
		var e *Error
		if !errors.As(err, &e) || e.Status != tt.status || !strings.Contains(strings.Join(append(e.Errors, e.Message), "; "), tt.want) {
			t.Errorf("%s: %v, want %d naming %q", tt.name, err, tt.status, tt.want)
		}
	}
	if _, err := bf.CreateBackfill(r.ctx, "nope", ok); !isStatus(err, 404) {
		t.Errorf("unknown workflow: %v", err)
	}
	plain := r.push(`{"properties": {"owner": "unit"}, "workflow": {"id": "plain", "steps": [{"step": {"id": "s", "type": "NoOp"}}]}}`)
	if _, err := bf.CreateBackfill(r.ctx, plain, ok); !isStatus(err, 400) {
		t.Errorf("a workflow without time triggers: %v", err)
	}

	est, err := bf.EstimateBackfill(r.ctx, wf, ok)
	if err != nil {
		t.Fatal(err)
	}
	if est.Instances != 24 || est.Steps != 24 || est.Waves != 6 || est.Duration != nil || est.DurationReason == "" ||
		est.FirstFiring != "2026-11-01T00:00:00Z" || est.LastFiring != "2026-11-01T23:00:00Z" {
		t.Errorf("estimate: %+v", est)
	}
	// Without a run to take it from, the cost is the step-type model's: a
	// run's start and its one step a worker runs, its orchestration only.
	perRun := pricing.Price(pricing.RunModel().Add(pricing.StepModel(true))).TotalUSD
	if c := est.Cost; c == nil || c.Model == "" || c.Sample != 0 || math.Abs(c.RunP50-perRun) > 1e-15 || math.Abs(c.P50-24*perRun) > 1e-13 ||
		len(c.Covers) != 1 || c.Covers[0] != pricing.KindOrchestration {
		t.Errorf("modelled cost: %+v", c)
	}
	list, err := bf.ListBackfills(r.ctx, wf)
	if err != nil || len(list.Backfills) != 0 {
		t.Fatalf("refusals and a dry run stored %+v (%v)", list, err)
	}
	if _, err := r.ms.Instances.GetInstance(r.ctx, wf, 1); err == nil {
		t.Error("a refusal or a dry run started an instance")
	}

	// With a succeeded run, the estimate is its duration times the waves.
	quick := r.push(`{"properties": {"owner": "unit"}, "workflow": {"id": "quick",
	  "time_triggers": [{"type": "CRON", "cron": "0 */6 * * *"}],
	  "steps": [{"step": {"id": "s", "type": "NoOp"}}]}}`)
	if s := r.start(quick); s.Status != string(model.WorkflowSucceeded) {
		t.Fatalf("quick run: %s", s.Status)
	}
	est, err = bf.EstimateBackfill(r.ctx, quick, ok)
	if err != nil || est.Instances != 4 || est.Waves != 1 || est.Duration == nil || est.Duration.Sample != 1 {
		t.Fatalf("estimate with history: %+v %v", est, err)
	}
	// Its cost is what the run recorded (a NoOp bills no compute), with
	// what that covers.
	if c := est.Cost; c == nil || c.Sample != 1 || c.P50 != 0 || c.P90 != 0 || len(c.Covers) == 0 || c.PricesOf == "" || c.Model != "" {
		t.Fatalf("cost estimate with history: %+v", c)
	}
}

func isStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

func TestPercentile(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[int]int64{50: 5, 90: 9, 100: 10, 1: 1} {
		if got := percentile(s, p); got != want {
			t.Errorf("p%d = %d, want %d", p, got, want)
		}
	}
	if got := percentile([]int64{7}, 90); got != 7 {
		t.Errorf("p90 of one = %d", got)
	}
}

// TestBackfillRecoversAdmittedFirings: a firing admitted (written in flight)
// by a pump that died before starting its instance is started by the next
// pump; a tick of a backfill not done asks to come back in backfillTick.
func TestBackfillRecoversAdmittedFirings(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(backfillDef)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// The state a pump leaves when it dies after its write: firing 0
	// admitted, no instance.
	doc := backfillDoc{From: from, To: from.Add(3 * time.Hour), Version: 1, Concurrency: 2, Priority: BackfillPriorityNormal,
		Status: BackfillRunning, Total: 3, Cursor: 1, Inflight: []backfillFiring{{Trigger: 0, At: from.UnixMilli()}}}
	if err := r.ms.Backfills.CreateBackfill(r.ctx, storeBackfill(wf, "bf-crash", doc), nil); err != nil {
		t.Fatal(err)
	}
	redelay, err := r.o.Worker.HandleWork(r.ctx, []byte(EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: "bf-crash", Tick: true})), nil)
	if err != nil || redelay != backfillTick {
		t.Fatalf("tick: %v %v, want to come back in %v", redelay, err, backfillTick)
	}
	for i, at := range []time.Time{from, from.Add(time.Hour)} {
		rec, err := r.ms.Instances.InstanceForRequest(r.ctx, wf, triggers.FiringRequestID(wf, 0, at))
		if err != nil {
			t.Fatalf("firing %d (%s) was not started: %v", i, at, err)
		}
		if !strings.Contains(string(rec.Initiator), `"backfill":"bf-crash"`) {
			t.Errorf("firing %d: initiator %s", i, rec.Initiator)
		}
	}
	v, err := r.o.Backfills.GetBackfill(r.ctx, wf, "bf-crash")
	if err != nil || v.Admitted != 2 || v.Running != 2 {
		t.Fatalf("after the recovering pump: %+v %v", v, err)
	}
}

// TestBackfillConcurrentPumps: pumps racing one another start only the
// firings a winning write admitted: the instances started are the
// admitted firings, never more than the concurrency in flight.
func TestBackfillConcurrentPumps(t *testing.T) {
	r := newRoundRig(t, func(c *Config) { c.MaxConflictRetries = 50 })
	wf := r.push(backfillDef)
	v, err := r.o.Backfills.CreateBackfill(r.ctx, wf, BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-01T12:00:00Z", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: v.BackfillID}))
	for round := 0; round < 4; round++ {
		// End the running ones, then pump from several workers at once.
		recs, _, err := r.ms.Instances.ListInstances(r.ctx, wf, "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if rec.Status == string(model.WorkflowInProgress) {
				r.putEvent(wf, rec.InstanceID, 1, "a-stop", engine.Action{Action: string(model.WorkflowActionStop)})
				r.mustProcess(wf, rec.InstanceID, 1)
			}
		}
		errs := make(chan error, 6)
		for range 6 {
			go func() {
				_, err := r.o.Worker.HandleWork(r.ctx, body, nil)
				errs <- err
			}()
		}
		for range 6 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if v, err = r.o.Backfills.GetBackfill(r.ctx, wf, v.BackfillID); err != nil {
			t.Fatal(err)
		}
		// Concurrent starts of one firing may each reserve an id: the
		// ids have gaps, so count the instances.
		recs, _, err = r.ms.Instances.ListInstances(r.ctx, wf, "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, rec := range recs {
			if !model.WorkflowStatus(rec.Status).IsTerminal() {
				running++
			}
		}
		if len(recs) != v.Admitted {
			t.Fatalf("round %d: %d instances started, %d admitted", round, len(recs), v.Admitted)
		}
		if running > 3 || running != v.Running {
			t.Fatalf("round %d: %d running, the backfill says %d (concurrency 3)", round, running, v.Running)
		}
	}
	// The fourth round ended the last three: the backfill is done.
	if v.Status != BackfillCompleted || v.Admitted != 12 || v.Counts["STOPPED"] != 12 {
		t.Fatalf("after four rounds: %+v", v)
	}
}

// storeBackfill is a backfill item holding doc.
func storeBackfill(wf, id string, doc backfillDoc) store.Backfill {
	return store.Backfill{WorkflowID: wf, ID: id, Body: mustJSON(doc), CreateTime: 1}
}
