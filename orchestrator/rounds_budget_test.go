package orchestrator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

// A round's budget against the store's real limits (the memstore refuses,
// as DynamoDB does, a transaction of more than store.MaxTransactItems
// items and an item past store.MaxItemBytes): a decision too large for
// one commit is split into rounds, each of which the store takes at the
// first try; a run whose state cannot be stored at all is failed with a
// message naming the limit.

// rigFanDef is a workflow "fan" of n root steps f0..f{n-1}: Titus steps,
// or with sleeps Sleep steps (a minute), whose starts are not left to a
// worker's claim and count in full against maxStartsPerDecision.
func rigFanDef(n int, sleeps bool) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = rigStep(fmt.Sprintf("f%d", i), "Titus")
		if sleeps {
			steps[i] = rigSleep(fmt.Sprintf("f%d", i), 60)
		}
	}
	return rigDef("fan", "", steps...)
}

// TestRoundBudgetSplitsDecisions: a fan-out's starts, its outcomes
// applied together, and a stop ending its steps in flight each take more
// than one transaction: the decision is split into rounds by the budget
// (maxStartsPerDecision, maxRoundEvents, maxEndsPerDecision), not by the
// store's refusals, and every step gets there.
func TestRoundBudgetSplitsDecisions(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        int
		act      func(r *roundRig) // nil: the start itself
		run      model.WorkflowStatus
		steps    model.StepStatus
		rounds   int // the fewest commits it takes
		attempts int // the most attempt items one commit writes
	}{
		{name: "starts", n: 100, run: model.WorkflowInProgress, steps: model.StepRunning, rounds: 100 / maxStartsPerDecision, attempts: maxStartsPerDecision},
		{name: "outcomes", n: 150, act: func(r *roundRig) {
			for i := range 150 {
				step := fmt.Sprintf("f%d", i)
				r.putEvent("fan", 1, 1, outcomeEventID(step, 1), succeeded(step, 1))
			}
			r.mustProcess("fan", 1, 1)
		}, run: model.WorkflowSucceeded, steps: model.StepSucceeded, rounds: 150 / maxRoundEvents, attempts: maxRoundEvents},
		{name: "ends", n: 100, act: func(r *roundRig) {
			if _, err := r.o.Actions.ActOnInstance(r.ctx, "fan", 1, 0, "stop"); err != nil {
				r.t.Fatal(err)
			}
		}, run: model.WorkflowStopped, steps: model.StepStopped, rounds: 100 / maxEndsPerDecision, attempts: maxEndsPerDecision},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoundRig(t)
			r.push(rigFanDef(c.n, c.act == nil))
			if c.act != nil {
				r.start("fan")
			}
			before, calls := len(r.runs.committed()), r.runs.calls()
			if c.act == nil {
				r.start("fan")
			} else {
				c.act(r)
			}
			cs := r.runs.committed()[before:]
			if tried := r.runs.calls() - calls; tried != len(cs) {
				t.Errorf("%d commits tried, %d taken: the store refused a round the budget let through", tried, len(cs))
			}
			if len(cs) < c.rounds {
				t.Errorf("%d commits, want %d or more", len(cs), c.rounds)
			}
			for i, cm := range cs {
				if len(cm.Attempts) > c.attempts {
					t.Errorf("commit %d writes %d attempts, more than %d", i, len(cm.Attempts), c.attempts)
				}
			}
			st := r.state("fan", 1, 1)
			if st.Status != c.run {
				t.Errorf("run %s, want %s", st.Status, c.run)
			}
			counts := map[model.StepStatus]int{}
			for _, s := range st.Steps {
				counts[s.Status]++
			}
			if counts[c.steps] != c.n {
				t.Errorf("steps %v, want all %d %s", counts, c.n, c.steps)
			}
			if p := r.pending("fan", 1, 1); len(p) != 0 {
				t.Errorf("pending %v", p)
			}
		})
	}
}

// blobParams is a definition whose Titus step a (→ b) takes the run
// param blob twice, and run params setting blob to s.
func blobParams(s string) (string, map[string]json.RawMessage) {
	a := `{"step":{"id":"a","type":"Titus","params":{"p1":{"expression":"blob","type":"STRING"},` +
		`"p2":{"expression":"blob","type":"STRING"}},"transition":{"successors":{"b":"true"}}}}`
	def := strings.Replace(rigDef("big", "", a, rigStep("b", "Titus")), `"steps"`, `"params":{"blob":{"value":"","type":"STRING"}},"steps"`, 1)
	return def, map[string]json.RawMessage{"blob": mustJSON(map[string]string{"value": s, "type": "STRING"})}
}

// rigNoise is n bytes that do not compress much (six bits a byte).
func rigNoise(n int) string {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rng.IntN(len(digits))]
	}
	return string(b)
}

// TestRunFailsOnLimits: a run whose params pass Maestro's params size
// limit, or whose state would be an item past DynamoDB's size limit, is
// started and failed at once, its message naming the limit; nothing is
// left pending and nothing runs.
func TestRunFailsOnLimits(t *testing.T) {
	for _, c := range []struct {
		name, blob, says string
	}{
		{"params past Maestro's limit", strings.Repeat("abcdefgh", engine.MaxStepParamsBytes/8+1),
			fmt.Sprintf("over the limit of %d (Maestro's params size limit)", engine.MaxStepParamsBytes)},
		{"state past DynamoDB's item limit", rigNoise(120 << 10),
			fmt.Sprintf("more than DynamoDB's item size limit of %d bytes", store.MaxItemBytes)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoundRig(t)
			def, params := blobParams(c.blob)
			r.push(def)
			resp, err := r.o.Runs.StartWorkflow(r.ctx, "big", "active", StartRequest{RunParams: params})
			if err != nil || resp.Status != string(model.WorkflowFailed) {
				t.Fatalf("start: %+v %v", resp, err)
			}
			rec, st, pending := r.load("big", 1, 1)
			if !strings.Contains(st.Message, c.says) {
				t.Errorf("message %q does not say %q", st.Message, c.says)
			}
			if st.Status != model.WorkflowFailed || stepStatus(st, "a") == model.StepRunning || stepStatus(st, "b") == model.StepRunning {
				t.Errorf("after the start: %s %s", st.Status, statuses(st))
			}
			if len(pending) != 0 || rec.SweepAt != 0 || len(r.work()) != 0 {
				t.Errorf("pending %v, due %d, work sent: want nothing left", pending, rec.SweepAt)
			}
			if got := r.instanceStatus("big", 1); got != string(model.WorkflowFailed) {
				t.Errorf("instance summary %s", got)
			}
		})
	}
}

// TestRefusesInputPastTheItemLimit: run params under Maestro's params
// size limit whose start event is still past DynamoDB's item limit, and
// a signal whose params or payload make its item too large, cannot be
// stored: they are refused as the caller's error (a 400 naming the field
// and the limit), not answered as internal errors (they were, as 500s).
func TestRefusesInputPastTheItemLimit(t *testing.T) {
	r := newRoundRig(t)
	def, params := blobParams(rigNoise(600 << 10))
	r.push(def)
	_, err := r.o.Runs.StartWorkflow(r.ctx, "big", "active", StartRequest{RunParams: params})
	wantRefusal(t, err, 400, "run_params: too large to store", "item size limit")
	_, err = r.o.Signals.AnnounceSignal(r.ctx, signals.Announce{Name: "big", Params: map[string]any{"p": rigNoise(600 << 10)}}, SignalSource{Kind: "api"})
	wantRefusal(t, err, 400, "params and payload: too large to store", "item size limit")
}
