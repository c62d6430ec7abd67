package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// barrier answers its calls once n of them are in flight, so that the
// steps making them are running at once.
type barrier struct {
	n       int
	mu      sync.Mutex
	in      int
	release chan struct{}
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if b.in++; b.in == b.n {
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-time.After(20 * time.Second):
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
}

// TestWorkerWrittenEnds: two Http steps run at once, so neither worker may
// decide its run inline; each writes its attempt's end itself
// (store.FinishAttempt) and wakes the decider through the stream. The
// decision that applies them finds the items already what it would write
// and leaves them alone (the worker's mark stays on them); the attempts read
// SUCCEEDED with their outputs over their params, their timelines with each
// status once, and the step after both runs.
func TestWorkerWrittenEnds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&barrier{n: 2, release: make(chan struct{})})
	defer srv.Close()
	s := startSystem(t, stack.Options{})
	call := func(step string) string {
		return fmt.Sprintf(`{"step":{"id":%q,"type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/%s"},"method":{"type":"STRING","value":"GET"}}}},
	    "transition":{"successors":{"join":"true"}}}}`, step, srv.URL, step)
	}
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"ends","run_strategy":"parallel"},"workflow":{"id":"worker-ends","steps":[%s,%s,
	  {"step":{"id":"join","type":"NoOp"}}]}}`, call("left"), call("right"))))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	const want = "CREATED,INITIALIZED,EVALUATING_PARAMS,STARTING,RUNNING,FINISHING,SUCCEEDED"
	for _, step := range []string{"left", "right"} {
		v := steps[step]
		var tl []string
		for _, e := range v.Timeline {
			tl = append(tl, e.Status)
		}
		if v.RuntimeState.Status != "SUCCEEDED" || strings.Join(tl, ",") != want || v.Outputs["status_code"] == nil ||
			v.Params["status_code"] == nil || v.RuntimeState.EndTime < v.RuntimeState.StartTime {
			t.Errorf("%s: %s, timeline %v, outputs %v, params %v, %d..%d; want SUCCEEDED, %s, the response over its params",
				step, v.RuntimeState.Status, tl, v.Outputs, v.Params, v.RuntimeState.StartTime, v.RuntimeState.EndTime, want)
		}
		if join := steps["join"]; join.RuntimeState.CreateTime < v.RuntimeState.EndTime {
			t.Errorf("join created at %d, before %s ended at %d", join.RuntimeState.CreateTime, step, v.RuntimeState.EndTime)
		}
	}
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	db := dynamodb.NewFromConfig(cfg)
	for _, step := range []string{"left", "right"} {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.st.Resources.Table.Name), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("R#%s#%d", wf, r.WorkflowInstanceID)},
				"sk": &types.AttributeValueMemberS{Value: fmt.Sprintf("S#000001#%s#0001", step)},
			}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := out.Item["wn"]; !ok {
			t.Errorf("%s: the attempt item has no worker's mark: its worker did not write its end, or the decision rewrote it", step)
		}
	}
}
