package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// A decision that ends a run emits its cost, priced, with the workflow as
// a property; one that ends none emits no cost.
func TestDecisionEmitsTheCostOfARunItEnds(t *testing.T) {
	var b bytes.Buffer
	o := &Rounds{core: &core{}}
	o.metrics = metrics.New(&b, "test", func() time.Time { return time.UnixMilli(1) })
	cost := pricing.Usage{pricing.FargateVCPUSeconds: 3600}
	o.emitDecision(time.Now(), "wf-1", []engine.Transition{{StepID: "a", To: "SUCCEEDED"}}, cost)
	o.emitDecision(time.Now(), "wf-1", []engine.Transition{{To: "SUCCEEDED"}}, cost)
	o.metrics.Flush()
	var costs []map[string]any
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %s", sc.Text())
		}
		if _, ok := line[metrics.RunCost]; ok {
			costs = append(costs, line)
		}
	}
	if len(costs) != 1 {
		t.Fatalf("%d RunCost lines, want 1:\n%s", len(costs), b.String())
	}
	if v, _ := costs[0][metrics.RunCost].(float64); math.Abs(v-0.04048) > 1e-12 || costs[0]["WorkflowId"] != "wf-1" {
		t.Fatalf("RunCost line %v: want $0.04048 (an x86 vCPU-hour of Fargate) for wf-1", costs[0])
	}
}

// A worker-written end keeps what the attempt was billed for: the decision
// that applies it (endOutcome) adds it to the run's cost.
func TestWorkerEndKeepsTheCompute(t *testing.T) {
	m := StepWork{StepRef: StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "fn", Attempt: 1}, StartTime: 1000}
	billed := pricing.LambdaInvocation(250, 512)
	res := engine.StepFinished{StepID: "fn", Attempt: 1, Outcome: engine.OutcomeSucceeded, FinishedAt: 2000, Compute: billed}
	end := workerEnd(m, res)
	if end == nil {
		t.Fatal("no worker end")
	}
	f := &store.FinishedAttempt{Ref: store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "fn", Attempt: 1},
		Attempt: store.Attempt{StepID: "fn", Attempt: 1, Status: end.Status, Body: end.Body, Timeline: end.Timeline}, WorkerEntries: len(end.Timeline)}
	got, err := endOutcome(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Compute) != 2 || got.Compute[pricing.LambdaStepGBSeconds] != billed[pricing.LambdaStepGBSeconds] || got.Compute[pricing.LambdaStepRequests] != 1 {
		t.Fatalf("the end's outcome has compute %v, want %v", got.Compute, billed)
	}
}

// A task token holder's report cannot say what the step cost: only a job's
// own end event does (a JobRunner's TaskCompletion.Compute).
func TestATaskReportCarriesNoCost(t *testing.T) {
	r, tokens := handedOver(t, 1)
	forged := pricing.Usage{pricing.FargateVCPUSeconds: 1e9}
	if _, err := r.o.Actions.CompleteTask(r.ctx, tokens[0], TaskCompletion{Action: TaskSuccess, Compute: forged}); err != nil {
		t.Fatal(err)
	}
	if ss := r.step("cb", 1, 1, "cb"); ss.Status != "SUCCEEDED" || len(ss.Cost) != 0 {
		t.Fatalf("step %s with cost %v: a reported cost was taken", ss.Status, ss.Cost)
	}
	v, err := r.o.Runs.GetInstance(r.ctx, "cb", 1)
	if err != nil {
		t.Fatal(err)
	}
	if v.Cost == nil || v.Cost.TotalUSD != 0 || len(v.Cost.Parts) != 0 {
		t.Fatalf("run cost %+v: a reported cost was taken", v.Cost)
	}
}
