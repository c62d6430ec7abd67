package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// rawMessages waits until the stack is idle, then receives every message
// the subscriber's queue holds, in the order the queue gives them.
func (s *subscriber) rawMessages() []map[string]any {
	s.t.Helper()
	s.sys.idle(s.t)
	ctx := context.Background()
	var out []map[string]any
	for {
		res, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.url), MaxNumberOfMessages: 10})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, m := range res.Messages {
			var obj map[string]any
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &obj); err != nil {
				s.t.Fatalf("message %q: %v", aws.ToString(m.Body), err)
			}
			out = append(out, obj)
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				s.t.Fatal(err)
			}
		}
		if len(res.Messages) == 0 {
			return out
		}
	}
}

// isMaestroShaped reports whether a message is one of Maestro's change
// events (its "type" is a *_CHANGE_EVENT).
func isMaestroShaped(m map[string]any) bool {
	t, _ := m["type"].(string)
	return strings.HasSuffix(t, "_CHANGE_EVENT")
}

// maestroEventsWorkflow is a -> b, two NoOp steps.
func maestroEventsWorkflow(id string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"events-e2e","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":"true"}}}},
	  {"step":{"id":"b","type":"NoOp"}}]}}`, id))
}

// TestMaestroShapedEvents: with the stack's MaestroEvents option on, a
// queue subscribed to the events topic receives, beside the runtime's own
// events, one Maestro-shaped event per status change — in order per step
// and for the instance — and a workflow change event for the push; a
// filter on event_format selects them. With the option off (the default),
// none is published.
func TestMaestroShapedEvents(t *testing.T) {
	t.Parallel()
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		s := startSystem(t, stack.Options{MaestroEvents: true})
		all := subscribe(t, s, "all", `{"workflow_id": ["maestro-events"]}`)
		steps := subscribe(t, s, "steps", `{"event_format": ["maestro"], "event_type": ["STEP_INSTANCE_STATUS_CHANGE_EVENT"]}`)
		wf := s.push(maestroEventsWorkflow("maestro-events"))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s", v.Status)
		}
		msgs := all.rawMessages()

		// Every status change of the runtime's own events, and the
		// Maestro-shaped events, as "step:old>new" (step "" for the
		// instance), each list in the order received.
		var ours, theirs []string
		perStep := map[string][]string{}
		definitions := 0
		for _, m := range msgs {
			raw, _ := json.Marshal(m)
			if !isMaestroShaped(m) {
				var e events.Event
				if err := json.Unmarshal(raw, &e); err != nil || e.ID == "" {
					t.Fatalf("message %s is neither shape", raw)
				}
				for _, c := range e.Transitions {
					ours = append(ours, e.StepID+":"+c.OldStatus+">"+c.NewStatus)
				}
				continue
			}
			if c, _ := m["cluster_name"].(string); !strings.HasPrefix(c, "local-e2e") { // local-<the test's stage>
				t.Errorf("cluster_name of %s", raw)
			}
			switch m["type"] {
			case "WORKFLOW_INSTANCE_STATUS_CHANGE_EVENT":
				if m["workflow_instance_id"] != float64(r.WorkflowInstanceID) || m["workflow_run_id"] != 1.0 || m["depth"] != 0.0 || m["event_time"] == nil {
					t.Errorf("instance event %s", raw)
				}
				old, _ := m["old_status"].(string)
				theirs = append(theirs, ":"+old+">"+m["new_status"].(string))
				perStep[""] = append(perStep[""], old+">"+m["new_status"].(string))
			case "STEP_INSTANCE_STATUS_CHANGE_EVENT":
				recs, _ := m["status_change_records"].([]any)
				if len(recs) != 1 || m["step_attempt_id"] != 1.0 {
					t.Fatalf("step event %s", raw)
				}
				rec := recs[0].(map[string]any)
				step := m["step_id"].(string)
				theirs = append(theirs, step+":"+rec["old_status"].(string)+">"+rec["new_status"].(string))
				perStep[step] = append(perStep[step], rec["old_status"].(string)+">"+rec["new_status"].(string))
			case "WORKFLOW_DEFINITION_CHANGE_EVENT":
				if m["version_id"] != 1.0 {
					t.Errorf("definition event %s", raw)
				}
				definitions++
			}
		}
		if definitions != 1 {
			t.Errorf("%d WORKFLOW_DEFINITION_CHANGE_EVENTs for one push", definitions)
		}
		if len(ours) == 0 || strings.Join(ours, " ") != strings.Join(theirs, " ") {
			t.Fatalf("Maestro-shaped events are not one per status change in order:\nours   %v\ntheirs %v", ours, theirs)
		}
		// In order per step and for the instance: each change starts
		// where the one before ended, and ends where the run did.
		for step, chain := range perStep {
			for i := 1; i < len(chain); i++ {
				if prevTo, from := chain[i-1][strings.Index(chain[i-1], ">")+1:], chain[i][:strings.Index(chain[i], ">")]; prevTo != from {
					t.Errorf("step %q: %v is out of order", step, chain)
				}
			}
			if last := chain[len(chain)-1]; !strings.HasSuffix(last, ">SUCCEEDED") {
				t.Errorf("step %q ends %s", step, last)
			}
		}
		if len(perStep["a"]) == 0 || len(perStep["b"]) == 0 || len(perStep[""]) < 2 {
			t.Errorf("changes per step %v", perStep)
		}
		filtered := steps.rawMessages()
		if len(filtered) != len(perStep["a"])+len(perStep["b"]) {
			t.Errorf("the filtered subscription got %d messages, want the %d step events", len(filtered), len(perStep["a"])+len(perStep["b"]))
		}
		for _, m := range filtered {
			if m["type"] != "STEP_INSTANCE_STATUS_CHANGE_EVENT" {
				t.Errorf("the filtered subscription got %v", m)
			}
		}
		t.Logf("%d status changes, as many Maestro-shaped events: %v", len(theirs), perStep)
	})

	t.Run("off", func(t *testing.T) {
		t.Parallel()
		s := startSystem(t, stack.Options{})
		all := subscribe(t, s, "all", `{"workflow_id": ["maestro-events-off"]}`)
		wf := s.push(maestroEventsWorkflow("maestro-events-off"))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s", v.Status)
		}
		msgs := all.rawMessages()
		if len(msgs) == 0 {
			t.Fatal("no event at all: the control is broken")
		}
		for _, m := range msgs {
			if isMaestroShaped(m) {
				t.Fatalf("a Maestro-shaped event with the option off: %v", m)
			}
		}
	})
}
