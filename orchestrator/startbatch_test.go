package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

// Batch starts over the memstore: ids in request order, queued runs in
// that order, a batch sent again starting nothing twice, refusals that
// start nothing, and one failed start answered in its place.

// batchOf is n start requests whose request ids are UUIDs that begin
// with prefix (8 hex digits) and end with the request's index.
func batchOf(n int, prefix string) []StartRequest {
	reqs := make([]StartRequest, n)
	for i := range reqs {
		reqs[i] = StartRequest{RequestID: fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, i)}
	}
	return reqs
}

// batchIDs are the instance ids and statuses a batch answered, "1:IN_PROGRESS".
func batchIDs(t *testing.T, res *BatchStartResult) []string {
	t.Helper()
	var out []string
	for i, r := range res.Results {
		if r.Error != nil {
			t.Fatalf("request %d: %v", i, r.Error)
		}
		out = append(out, fmt.Sprintf("%d:%s", r.WorkflowInstanceID, r.Status))
	}
	return out
}

// TestStartBatchInRequestOrder: a sequential workflow's batch gets ids in
// request order, the first runs and the others queue behind it; sent
// again it answers the same instances, Created false, and starts none.
func TestStartBatchInRequestOrder(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("seq", `{"owner": "unit", "run_strategy": "sequential"}`, workStep("a", "Titus", "")))
	reqs := batchOf(4, "0000000a")
	res, err := r.o.Runs.StartBatch(r.ctx, "seq", "active", reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := "1:IN_PROGRESS 2:CREATED 3:CREATED 4:CREATED"
	if got := strings.Join(batchIDs(t, res), " "); got != want || res.Started != 4 || res.Found != 0 || res.Failed != 0 {
		t.Fatalf("batch answered %s (%d started, %d found, %d failed), want %s and 4 started", got, res.Started, res.Found, res.Failed, want)
	}
	again, err := r.o.Runs.StartBatch(r.ctx, "seq", "active", reqs)
	if err != nil {
		t.Fatal(err)
	}
	if again.Found != 4 || again.Started != 0 {
		t.Fatalf("the batch sent again: %d started, %d found; want 0 and 4", again.Started, again.Found)
	}
	for i, a := range again.Results {
		if a.Created || a.WorkflowInstanceID != res.Results[i].WorkflowInstanceID || a.WorkflowUUID != res.Results[i].WorkflowUUID {
			t.Errorf("request %d sent again answered %+v, want instance %d not created", i, a.StartResponse, res.Results[i].WorkflowInstanceID)
		}
	}
	list, err := r.o.Runs.ListInstances(r.ctx, "seq", "", "", 100)
	if err != nil || len(list.Instances) != 4 {
		t.Fatalf("instances after a batch sent twice: %v %v", list, err)
	}
	// The queue serves them in request order.
	r.pump(rigRunners(&workRunner{}))
	for i := int64(1); i <= 4; i++ {
		v, err := r.o.Runs.GetInstance(r.ctx, "seq", i)
		if err != nil || v.Status != "SUCCEEDED" {
			t.Fatalf("instance %d: %+v %v", i, v, err)
		}
		if i > 1 {
			prev, _ := r.o.Runs.GetInstance(r.ctx, "seq", i-1)
			if v.StartTime < prev.EndTime {
				t.Errorf("instance %d started at %d, before instance %d ended at %d", i, v.StartTime, i-1, prev.EndTime)
			}
		}
	}
}

// TestStartBatchOfAParallelWorkflow: a PARALLEL workflow's batch starts
// as many as its concurrency admits and queues the rest, every id taken
// once, in request order.
func TestStartBatchOfAParallelWorkflow(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("par", `{"owner": "unit", "run_strategy": {"rule": "PARALLEL", "workflow_concurrency": 7}}`, workStep("a", "Titus", "")))
	res, err := r.o.Runs.StartBatch(r.ctx, "par", "active", batchOf(MaxBatchStarts, "0000000b"))
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for i, got := range batchIDs(t, res) {
		id, status, _ := strings.Cut(got, ":")
		if id != fmt.Sprint(i+1) {
			t.Fatalf("request %d got instance %s, want %d", i, id, i+1)
		}
		if status == "IN_PROGRESS" {
			running++
		}
	}
	if running != 7 || res.Started != MaxBatchStarts {
		t.Fatalf("%d of %d runs in progress (%d started), want 7 of a concurrency of 7", running, MaxBatchStarts, res.Started)
	}
}

// TestStartBatchRefusals: a batch the start would refuse any request of
// is refused whole, naming the request, and starts nothing.
func TestStartBatchRefusals(t *testing.T) {
	r := newRoleRig(t)
	param := `{"value": 1, "type": "LONG", "mode": "CONSTANT"}`
	r.push(strings.Replace(workDef("refused", "", workStep("a", "Titus", "")), `"steps"`, `"params": {"c": `+param+`}, "steps"`, 1))
	withParams := func(reqs []StartRequest, i int, params string) []StartRequest {
		if err := json.Unmarshal([]byte(params), &reqs[i].RunParams); err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	repeated := batchOf(3, "0000000c")
	repeated[2].RequestID = repeated[0].RequestID
	missing := batchOf(3, "0000000c")
	missing[1].RequestID = ""
	for _, c := range []struct {
		name   string
		wf     string
		reqs   []StartRequest
		status int
		says   []string
	}{
		{"none", "refused", nil, http.StatusBadRequest, []string{"requests: must hold at least one run request"}},
		{"too many", "refused", batchOf(MaxBatchStarts+1, "0000000c"), http.StatusBadRequest, []string{"at most 100 run requests are allowed, got 101"}},
		{"no request id", "refused", missing, http.StatusBadRequest, []string{"requests[1].request_id: is required in a batch"}},
		{"a repeated request id", "refused", repeated, http.StatusBadRequest, []string{"requests[2].request_id: repeats requests[0].request_id"}},
		{"a constant param set", "refused", withParams(batchOf(3, "0000000c"), 2, `{"c": {"value": 2, "type": "LONG"}}`), http.StatusBadRequest,
			[]string{"nothing was started", `requests[2]: run params override params their mode protects: run_params.c: param "c" is CONSTANT`}},
		{"a bad param", "refused", withParams(batchOf(3, "0000000c"), 1, `{"p": "x"}`), http.StatusBadRequest, []string{"requests[1]: invalid run_params"}},
		{"an unknown workflow", "nope", batchOf(2, "0000000c"), http.StatusNotFound, []string{"workflow nope not found"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.o.Runs.StartBatch(r.ctx, c.wf, "active", c.reqs)
			wantRefusal(t, err, c.status, c.says...)
		})
	}
	list, err := r.o.Runs.ListInstances(r.ctx, "refused", "", "", 100)
	if err != nil || len(list.Instances) != 0 {
		t.Fatalf("refused batches started %v (%v)", list, err)
	}
	if resp := r.start("refused", StartRequest{}); resp.WorkflowInstanceID != 1 {
		t.Errorf("refused batches took instance ids: the next start got %d", resp.WorkflowInstanceID)
	}
}

// failingCreate is an instance store whose CreateInstance fails for one
// request id.
type failingCreate struct {
	InstanceStore
	requestID string
}

func (f *failingCreate) CreateInstance(ctx context.Context, ni store.NewInstance) (*store.InstanceRecord, bool, error) {
	if ni.RequestID == f.requestID {
		return nil, false, errors.New("throttled: the table's secret ARN arn:aws:dynamodb:eu-west-1:123:table/x")
	}
	return f.InstanceStore.CreateInstance(ctx, ni)
}

// TestStartBatchAnswersAFailedStartInItsPlace: a start that fails past
// the checks is answered in its place without its cause; the others
// start; a request started earlier on its own is found, not started
// again.
func TestStartBatchAnswersAFailedStartInItsPlace(t *testing.T) {
	reqs := batchOf(3, "0000000d")
	r := newRoleRig(t, func(cfg *Config) {
		st := *cfg.Stores
		st.Instances = &failingCreate{InstanceStore: st.Instances, requestID: reqs[1].RequestID}
		cfg.Stores = &st
	})
	// Sequential: the run started first holds the slot, so the batch's
	// runs are created queued (CreateInstance).
	r.push(workDef("mixed", `{"owner": "unit", "run_strategy": "sequential"}`, workStep("a", "Titus", "")))
	before := r.start("mixed", StartRequest{RequestID: reqs[2].RequestID})
	res, err := r.o.Runs.StartBatch(r.ctx, "mixed", "active", reqs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Started != 1 || res.Found != 1 || res.Failed != 1 {
		t.Fatalf("%d started, %d found, %d failed; want one each", res.Started, res.Found, res.Failed)
	}
	if e := res.Results[1].Error; e == nil || e.Status != http.StatusInternalServerError || strings.Contains(e.Error(), "arn:") {
		t.Errorf("the failed start answered %+v", e)
	}
	if got := res.Results[2]; got.Created || got.WorkflowInstanceID != before.WorkflowInstanceID {
		t.Errorf("the request started before answered %+v, want instance %d", got.StartResponse, before.WorkflowInstanceID)
	}
	if got := res.Results[0]; !got.Created || got.WorkflowInstanceID != 2 {
		t.Errorf("the first request answered %+v, want instance 2 created", got.StartResponse)
	}
	body, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "arn:") || !strings.Contains(string(body), `"error":{"status":500,"message":"internal error"}`) {
		t.Errorf("answer %s", body)
	}
}

// TestStartBatchNearItsDeadline: starts not begun when less than
// batchStartMargin of the request's time is left are answered 503 and
// start nothing; the batch sent again in time starts them.
func TestStartBatchNearItsDeadline(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("hurried", 1))
	reqs := batchOf(3, "0000000e")
	ctx, cancel := context.WithTimeout(r.ctx, batchStartMargin/2)
	defer cancel()
	res, err := r.o.Runs.StartBatch(ctx, "hurried", "active", reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range res.Results {
		if got.Error == nil || got.Error.Status != http.StatusServiceUnavailable || !strings.Contains(got.Error.Message, "send the batch again") {
			t.Fatalf("request %d answered %+v", i, got)
		}
	}
	if list, err := r.o.Runs.ListInstances(r.ctx, "hurried", "", "", 100); err != nil || len(list.Instances) != 0 {
		t.Fatalf("instances after a batch out of time: %v %v", list, err)
	}
	again, err := r.o.Runs.StartBatch(r.ctx, "hurried", "active", reqs)
	if err != nil || again.Started != 3 {
		t.Fatalf("the batch sent again: %+v %v", again, err)
	}
}
