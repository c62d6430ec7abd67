package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestSignalTriggersAreLiveWhenThePushReturns: a signal announced right after
// a push (or an activation) that answered 200 starts an instance — the
// subscriptions are written in the change's own transaction. The trigger
// sync, now only a backstop, is dropped by the worker here, so nothing else
// can write them.
func TestSignalTriggersAreLiveWhenThePushReturns(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{Hooks: stack.Hooks{Worker: dropTriggerSyncs}})

	const n = 20
	var wg sync.WaitGroup
	wfs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wfs[i] = s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"live"},"workflow":{"id":"live-%d",
			  "signal_triggers":[{"definitions":{"live/%d":{"match_params":{"k":{"value":%d,"operator":"="}}}}}],
			  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`, i, i, i)))
			s.announce(t, fmt.Sprintf(`{"name":"live/%d","params":{"k":%d}}`, i, i))
		}()
	}
	wg.Wait()
	for _, wf := range wfs {
		poll(t, 30*time.Second, wf+" started by its signal", func() (bool, string) {
			got := len(s.instances(t, wf))
			return got == 1, fmt.Sprintf("%d instances", got)
		})
	}

	// Deactivated, a signal starts nothing; activated again, the very next
	// signal does.
	wf := wfs[0]
	if code := s.do("PUT", "/api/v3/workflows/"+wf+"/actions/deactivate", nil, nil); code != http.StatusOK {
		t.Fatalf("deactivate: HTTP %d", code)
	}
	s.announce(t, `{"name":"live/0","params":{"k":0},"request_id":"off"}`)
	if code := s.do("PUT", "/api/v3/workflows/"+wf+"/versions/1/actions/activate", nil, nil); code != http.StatusOK {
		t.Fatalf("activate: HTTP %d", code)
	}
	s.announce(t, `{"name":"live/0","params":{"k":0},"request_id":"on"}`)
	poll(t, 30*time.Second, "the signal after activation starts an instance", func() (bool, string) {
		got := len(s.instances(t, wf))
		return got == 2, fmt.Sprintf("%d instances", got)
	})
	// Deleted, the workflow's subscriptions are gone with it: a re-push under
	// the same id without triggers is never started by the old name.
	if code := s.do("DELETE", "/api/v3/workflows/"+wfs[1], nil, nil); code != http.StatusAccepted {
		t.Fatalf("delete: HTTP %d", code)
	}
	wf1 := s.push([]byte(`{"properties":{"owner":"live"},"workflow":{"id":"live-repush",
	  "signal_triggers":[{"definitions":{"live/1":{}}}],"steps":[{"step":{"id":"s","type":"NoOp"}}]}}`))
	s.announce(t, `{"name":"live/1","params":{"k":1},"request_id":"after-delete"}`)
	poll(t, 30*time.Second, "the other subscriber of live/1 starts", func() (bool, string) {
		got := len(s.instances(t, wf1))
		return got == 1, fmt.Sprintf("%d instances", got)
	})
}

// dropTriggerSyncs wraps the worker so that it acknowledges sync_triggers
// messages without running them.
func dropTriggerSyncs(next localstack.SQSHandler) localstack.SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		kept := ev.Records[:0:0]
		for _, r := range ev.Records {
			if !strings.Contains(r.Body, `"kind":"sync_triggers"`) {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			return events.SQSEventResponse{}, nil
		}
		return next(ctx, events.SQSEvent{Records: kept})
	}
}

// TestSignalDependenciesSeeTheWholeHistory: a dependency is met by an old
// signal (the 151st-newest of its name), and LONG params stay exact above
// 2^53 on the matching path.
func TestSignalDependenciesSeeTheWholeHistory(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	for i := range 200 {
		s.announce(t, fmt.Sprintf(`{"name":"hist/table","params":{"dt":%d}}`, 20260000+i))
	}
	wf := s.push([]byte(`{"properties":{"owner":"hist"},"workflow":{"id":"hist-dep","steps":[
	  {"step":{"id":"old","type":"NoOp","signal_dependencies":[{"name":"hist/table","match_params":{"dt":{"param":{"type":"LONG","value":20260049},"operator":"="}}}],
	    "params":{"got":{"type":"LONG","expression":"params.getFromSignalDependency(0, 'dt')"}}}},
	  {"step":{"id":"exact","type":"NoOp","signal_dependencies":[{"name":"hist/watermark","match_params":{"w":{"param":{"type":"LONG","value":9007199254740993},"operator":"="}}}],
	    "params":{"got":{"type":"LONG","expression":"params.getFromSignalDependency(0, 'w')"}}}}]}}`))
	s.announce(t, `{"name":"hist/watermark","params":{"w":9007199254740992}}`)
	id := s.start(wf, "").WorkflowInstanceID
	poll(t, 30*time.Second, "the old dependency is met and the near-miss is not", func() (bool, string) {
		st := s.instance(wf, id).StepStatuses
		return st["old"] == "SUCCEEDED" && st["exact"] == "WAITING_FOR_SIGNALS", fmt.Sprint(st)
	})
	if got := s.steps(wf, id)["old"].Params["got"]; got != float64(20260049) {
		t.Errorf("old: getFromSignalDependency gave %s, want 20260049", got)
	}
	s.announce(t, `{"name":"hist/watermark","params":{"w":9007199254740993}}`)
	v := s.wait(wf, id, 30*time.Second)
	wantEnd(t, v, "SUCCEEDED", nil)
	body := s.rawGet(t, fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps", wf, id))
	if !strings.Contains(body, "9007199254740993") {
		t.Errorf("the step's params do not show 9007199254740993 exactly: %s", body)
	}
}

// rawGet returns the body of a GET as text (numbers as the server wrote them).
func (s *system) rawGet(t *testing.T, path string) string {
	t.Helper()
	resp, err := s.client.Get(s.st.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
