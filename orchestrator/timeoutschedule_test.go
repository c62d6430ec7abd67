package orchestrator

import (
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

// TestARunsEndDeletesItsTimeoutSchedule: the workflow-timeout timer a
// run's start arms carries the run's schedule name, and the commit that
// ends the run asks the router to delete that schedule; a run whose
// timeout is within SQS's delay limit (no schedule) asks nothing.
func TestARunsEndDeletesItsTimeoutSchedule(t *testing.T) {
	for _, c := range []struct {
		name, timeout string
		unschedule    bool
	}{
		{"the default 10 days", "", true},
		{"ten minutes", `"timeout": "10 minutes", `, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			def := strings.Replace(rigChain("timed", 2), `"workflow": {"id": "timed", `, `"workflow": {"id": "timed", `+c.timeout, 1)
			r.push(def)
			resp := r.start("timed", StartRequest{})
			r.pump(rigRunners(&workRunner{}))
			if v, err := r.o.Runs.GetInstance(r.ctx, "timed", resp.WorkflowInstanceID); err != nil || v.Status != "SUCCEEDED" {
				t.Fatalf("run: %+v %v", v, err)
			}
			name := store.RunTimeoutSchedule("timed", resp.WorkflowInstanceID, resp.WorkflowRunID)
			var timers, unschedules []store.Message
			r.runs.mu.Lock()
			for _, m := range r.runs.outbox {
				switch {
				case m.Queue == store.QueueUnschedule:
					unschedules = append(unschedules, m)
				case m.At > 0:
					timers = append(timers, m)
				}
			}
			r.runs.mu.Unlock()
			if len(timers) != 1 || timers[0].Schedule != name {
				t.Fatalf("timers %+v, want the workflow timeout named %s", timers, name)
			}
			if got := len(unschedules) == 1 && unschedules[0].Body == name; got != c.unschedule || len(unschedules) > 1 {
				t.Fatalf("unschedule messages %+v; want one for %s: %t", unschedules, name, c.unschedule)
			}
		})
	}
}
