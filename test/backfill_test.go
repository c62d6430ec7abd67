package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/triggers"
)

// backfillWF fires hourly in January only (so no real firing happens while
// the test runs) and naps ten minutes by the stack's clock: its runs stay
// in progress until the test moves the clock.
const backfillWF = `{"properties":{"owner":"bf"},"workflow":{"id":"bf-hourly",
  "time_triggers":[{"type":"CRON","cron":"0 * * 1 *","timezone":"UTC"}],
  "steps":[{"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":600,"type":"LONG"}}}}]}}`

// backfill reads a backfill.
func (s *system) backfill(t *testing.T, wf, id string) orchestrator.BackfillView {
	t.Helper()
	var v orchestrator.BackfillView
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/backfills/"+id, nil, &v); code != http.StatusOK {
		t.Fatalf("get backfill %s: HTTP %d", id, code)
	}
	return v
}

// workflowRuns returns a workflow's instances but those in skip, and how
// many of them are in progress (or waiting to start).
func (s *system) workflowRuns(t *testing.T, wf string, skip map[int64]bool) ([]*orchestrator.InstanceView, int) {
	t.Helper()
	var out []*orchestrator.InstanceView
	running := 0
	for _, v := range s.instances(t, wf) {
		if skip[v.WorkflowInstanceID] {
			continue
		}
		out = append(out, v)
		if v.Status == "IN_PROGRESS" || v.Status == "CREATED" {
			running++
		}
	}
	return out, running
}

// TestBackfill: on the local stack, a dry run creates nothing and answers
// counts, waves and a duration and a cost (null before any run, with
// their reasons; estimated from the succeeded runs once there are some); a backfill of 24 hourly firings at
// concurrency 4 starts exactly 24 instances, one per firing, BACKFILL with
// the firing's time params, never more than 4 in progress; a manual start
// during it starts at once (the workflow is SEQUENTIAL: backfill runs take
// no slot); paused it admits nothing while its runs end, resumed it goes
// on; the real firing of a backfilled time starts nothing more, and a
// backfill finds the run of a firing the scheduler started first; a
// cancelled backfill stops its own runs and admits no more.
func TestBackfill(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(backfillWF))
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := "/api/v3/workflows/" + wf + "/backfills"
	req := `{"from":"2026-01-01T00:00:00Z","to":"2026-01-02T00:00:00Z","concurrency":4`

	var est orchestrator.BackfillEstimate
	if code := s.do("POST", base, []byte(req+`,"dry_run":true}`), &est); code != http.StatusOK {
		t.Fatalf("dry run: HTTP %d", code)
	}
	if est.Instances != 24 || est.Steps != 24 || est.Waves != 6 || est.Duration != nil || est.DurationReason == "" ||
		est.Cost == nil || est.Cost.Model == "" || est.Cost.P50 <= 0 {
		t.Fatalf("dry run: %+v", est)
	}
	var list orchestrator.BackfillList
	if code := s.do("GET", base, nil, &list); code != http.StatusOK || len(list.Backfills) != 0 || len(s.instances(t, wf)) != 0 {
		t.Fatalf("a dry run created something: HTTP %d %+v", code, list)
	}
	var bad map[string]any
	if code := s.do("POST", base, []byte(`{"from":"2026-01-01T00:00:00Z","to":"2040-02-01T00:00:00Z","concurrency":4}`), &bad); code != http.StatusBadRequest {
		t.Fatalf("over the firing limit: HTTP %d %v", code, bad)
	} else if fmt.Sprint(bad["errors"]) != "[from, to: the interval holds more than 10000 firings, the limit of one backfill]" {
		t.Errorf("over the firing limit: %v", bad)
	}

	var v orchestrator.BackfillView
	if code := s.do("POST", base, []byte(req+`}`), &v); code != http.StatusCreated {
		t.Fatalf("create: HTTP %d", code)
	}
	id := v.BackfillID
	if v.Total != 24 || v.Admitted != 4 || v.Concurrency != 4 || v.Status != "RUNNING" || v.NextFiring != "2026-01-01T04:00:00Z" {
		t.Fatalf("created: %+v", v)
	}
	// The workflow fires in January only: every instance but the manual
	// one is the backfill's.
	skip := map[int64]bool{}
	maxRunning := 0
	runs := func() []*orchestrator.InstanceView {
		t.Helper()
		got, running := s.workflowRuns(t, wf, skip)
		maxRunning = max(maxRunning, running)
		return got
	}
	poll(t, 20*time.Second, "4 backfill runs napping", func() (bool, string) {
		got, running := s.workflowRuns(t, wf, skip)
		return len(got) == 4 && running == 4, fmt.Sprint(len(got), running)
	})

	// A manual start launches at once beside 4 backfill runs.
	manual := s.start(wf, "")
	if manual.Status != "IN_PROGRESS" {
		t.Fatalf("manual start during the backfill: %s, want IN_PROGRESS at once", manual.Status)
	}
	skip[manual.WorkflowInstanceID] = true

	// Paused, the backfill admits nothing while its runs end.
	if code := s.do("PUT", base+"/"+id+"/actions/pause", nil, &v); code != http.StatusOK || v.Status != "PAUSED" {
		t.Fatalf("pause: HTTP %d %+v", code, v)
	}
	s.advance(t, 11*time.Minute)
	poll(t, 30*time.Second, "the paused backfill's runs end", func() (bool, string) {
		v = s.backfill(t, wf, id)
		return v.Counts["SUCCEEDED"] == 4 && v.Running == 0, fmt.Sprintf("%+v", v)
	})
	s.idle(t)
	if v = s.backfill(t, wf, id); v.Admitted != 4 || len(runs()) != 4 || v.ETASeconds == nil {
		t.Fatalf("paused: %+v", v)
	}

	if code := s.do("PUT", base+"/"+id+"/actions/resume", nil, &v); code != http.StatusOK || v.Status != "RUNNING" || v.Admitted != 8 {
		t.Fatalf("resume: HTTP %d %+v", code, v)
	}
	for done := 4; done < 24; done += 4 {
		poll(t, 30*time.Second, fmt.Sprintf("runs %d to %d napping", done+1, done+4), func() (bool, string) {
			got, running := s.workflowRuns(t, wf, skip)
			maxRunning = max(maxRunning, running)
			return len(got) == done+4 && running == 4, fmt.Sprint(len(got), running)
		})
		s.advance(t, 11*time.Minute)
		poll(t, 30*time.Second, fmt.Sprintf("%d runs ended", done+4), func() (bool, string) {
			runs()
			v = s.backfill(t, wf, id)
			return v.Counts["SUCCEEDED"] == done+4, fmt.Sprintf("%+v", v)
		})
	}
	poll(t, 30*time.Second, "the backfill completes", func() (bool, string) {
		v = s.backfill(t, wf, id)
		return v.Status == "COMPLETED", fmt.Sprintf("%+v", v)
	})
	list24 := runs()
	if len(list24) != 24 || v.Counts["SUCCEEDED"] != 24 || v.Admitted != 24 || v.Pending != 0 || v.EndTime == 0 {
		t.Fatalf("completed with %d runs: %+v", len(list24), v)
	}
	if maxRunning > 4 {
		t.Errorf("%d backfill runs were in progress at once, want at most 4", maxRunning)
	}
	got := map[int64]orchestrator.InstanceView{}
	for _, r := range list24 {
		full := s.instance(wf, r.WorkflowInstanceID)
		if full.Initiator == nil || full.Initiator.Backfill != id {
			t.Fatalf("instance %d: initiator %+v, want the backfill's", r.WorkflowInstanceID, full.Initiator)
		}
		got[full.Initiator.ScheduledTime] = full
		skip[r.WorkflowInstanceID] = true
	}
	for h := range 24 {
		at := day.Add(time.Duration(h) * time.Hour)
		full, ok := got[at.UnixMilli()]
		if !ok {
			t.Fatalf("no run for %s", at)
		}
		ts, _ := full.Params["RUN_TS"].(float64)
		if int64(ts) != at.UnixMilli() || full.Params["TARGET_RUN_DATE"] != float64(20260101) ||
			fmt.Sprint(full.Params["TARGET_RUN_HOUR"]) != at.Format("15") || full.Params["INITIATOR_TYPE"] != "BACKFILL" ||
			full.Initiator.Type != "BACKFILL" || full.Initiator.Timezone != "UTC" {
			t.Errorf("run for %s: initiator %+v RUN_TS %v TARGET_RUN_DATE %v TARGET_RUN_HOUR %v INITIATOR_TYPE %v", at, full.Initiator,
				full.Params["RUN_TS"], full.Params["TARGET_RUN_DATE"], full.Params["TARGET_RUN_HOUR"], full.Params["INITIATOR_TYPE"])
		}
	}

	// The real firing of 05:00 (delivered late, as Scheduler may) finds
	// the backfilled run.
	n := len(s.instances(t, wf))
	fire := func(at time.Time) {
		t.Helper()
		body := triggers.EncodeFiring(triggers.Firing{WorkflowID: wf, TriggerIndex: 0, ScheduledTime: at})
		if _, err := sqs.NewFromConfig(s.st.Emulator.TestConfig(t)).SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl: aws.String(s.st.Resources.Queues.Work.URL), MessageBody: aws.String(string(body)),
		}); err != nil {
			t.Fatal(err)
		}
	}
	fire(day.Add(5 * time.Hour))
	s.idle(t)
	if after := len(s.instances(t, wf)); after != n {
		t.Fatalf("the real firing of a backfilled time started %d more instances", after-n)
	}

	// With history, a dry run estimates a duration.
	if code := s.do("POST", base, []byte(req+`,"dry_run":true}`), &est); code != http.StatusOK || est.Duration == nil || est.Duration.P50Millis < 6*est.Duration.RunP50Millis {
		t.Fatalf("dry run with history: HTTP %d %+v", code, est.Duration)
	}

	// The scheduler fires 2026-01-02T00:00 before a backfill of that day
	// reaches it: the backfill finds that run and starts no other for it.
	// Cancelled, it stops only its own run and admits no more; the
	// scheduler's run ends on its own, and the backfill's tick settles it.
	day2 := day.AddDate(0, 0, 1)
	fire(day2)
	var scheduled []*orchestrator.InstanceView
	poll(t, 20*time.Second, "the scheduler's run", func() (bool, string) {
		var running int
		scheduled, running = s.workflowRuns(t, wf, skip)
		return len(scheduled) == 1 && running == 1, fmt.Sprint(len(scheduled), running)
	})
	var c orchestrator.BackfillView
	if code := s.do("POST", base, []byte(`{"from":"2026-01-02T00:00:00Z","to":"2026-01-03T00:00:00Z","concurrency":2}`), &c); code != http.StatusCreated {
		t.Fatalf("create a second backfill: HTTP %d", code)
	}
	if c.Admitted != 2 || c.Running != 2 {
		t.Fatalf("the second backfill: %+v", c)
	}
	poll(t, 20*time.Second, "the second backfill's runs", func() (bool, string) {
		got, running := s.workflowRuns(t, wf, skip)
		return len(got) == 2 && running == 2, fmt.Sprint(len(got), running)
	})
	if code := s.do("PUT", base+"/"+c.BackfillID+"/actions/cancel", nil, &c); code != http.StatusOK || c.Status != "CANCELLED" {
		t.Fatalf("cancel: HTTP %d %+v", code, c)
	}
	poll(t, 30*time.Second, "the cancelled backfill's own run stops", func() (bool, string) {
		c = s.backfill(t, wf, c.BackfillID)
		return c.Running == 1 && c.Counts["STOPPED"] == 1 && c.EndTime == 0, fmt.Sprintf("%+v", c)
	})
	if v := s.instance(wf, scheduled[0].WorkflowInstanceID); v.Status != "IN_PROGRESS" || v.Initiator.Type != "TIME" {
		t.Fatalf("the scheduler's run after the cancel: %s %+v", v.Status, v.Initiator)
	}
	s.advance(t, 11*time.Minute)
	poll(t, 30*time.Second, "the scheduler's run ends and the tick settles it", func() (bool, string) {
		c = s.backfill(t, wf, c.BackfillID)
		return c.Running == 0 && c.Counts["SUCCEEDED"] == 1 && c.EndTime != 0, fmt.Sprintf("%+v", c)
	})
	s.idle(t)
	if got, _ := s.workflowRuns(t, wf, skip); len(got) != 2 || s.backfill(t, wf, c.BackfillID).Admitted != 2 {
		t.Fatalf("the cancelled backfill's day has %d runs", len(got))
	}
	if code := s.do("PUT", base+"/"+c.BackfillID+"/actions/resume", nil, &bad); code != http.StatusConflict {
		t.Errorf("resume a cancelled backfill: HTTP %d %v", code, bad)
	}
	if code := s.do("GET", base, nil, &list); code != http.StatusOK || len(list.Backfills) != 2 || list.Backfills[0].BackfillID != c.BackfillID {
		t.Errorf("list: HTTP %d %+v", code, list)
	}
	// With succeeded runs behind it, a dry run estimates a duration and a
	// cost from them, and still creates nothing.
	est = orchestrator.BackfillEstimate{}
	if code := s.do("POST", base, []byte(req+`,"dry_run":true}`), &est); code != http.StatusOK {
		t.Fatalf("dry run with history: HTTP %d", code)
	}
	if est.Duration == nil || est.Duration.Sample == 0 || est.Cost == nil || est.Cost.Sample == 0 || len(est.Cost.Covers) == 0 || est.Cost.Model != "" {
		t.Errorf("dry run with history: %+v (duration %+v, cost %+v)", est, est.Duration, est.Cost)
	}
	if code := s.do("GET", base, nil, &list); code != http.StatusOK || len(list.Backfills) != 2 {
		t.Errorf("the dry run with history created a backfill: %+v", list)
	}
}
