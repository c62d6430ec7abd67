package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/engine/expression"
)

// fuzzBytes hands out the fuzzer's bytes one at a time (zeros once spent).
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) next() int {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1])
}

// pick returns one of choices.
func pick[T any](f *fuzzBytes, choices ...T) T { return choices[f.next()%len(choices)] }

// fuzzParams are param definitions a fuzzed step may carry: literals,
// cheap and costly expressions, references to other steps and params.
var fuzzParams = []string{
	`{"type":"LONG","value":7}`,
	`{"type":"STRING","value":"x-${step_id}"}`,
	`{"type":"LONG","expression":"step_attempt_id * 2"}`,
	`{"type":"STRING","expression":"upper('ab') + lower(step_id)"}`,
	`{"type":"BOOLEAN","expression":"step_id matches '^s[0-9]+$'"}`,
	`{"type":"STRING","expression":"params.containsKey('opt') ? params.get('opt') : 'none'"}`,
	`{"type":"LONG_ARRAY","expression":"Util.intsBetween(0, 1000, 1)"}`,
	`{"type":"LONG","expression":"params.getFromStep('MAESTRO_STEP_ERROR_RETRIES')"}`,
	`{"type":"STRING","expression":"params.getFromStep('s0', 'step_id')"}`,
	`{"type":"STRING","expression":"params.getFromStep('s0', 'MAESTRO_STEP_STATUS')"}`,
	`{"type":"STRING","expression":"big + big"}`,
	`{"type":"BOOLEAN","expression":"(big + big) matches '(a|b)*c'"}`,
	`{"type":"LONG","expression":"indexOf(big, 'z') + DERIVED_RUN_DATE_UTC_MINUS_ONE"}`,
}

// fuzzConditions are edge conditions.
var fuzzConditions = []string{"true", "false", "1 > 0", "step_id == 's1'", "params.getFromStep('s0', 'step_id') == 's0'"}

// fuzzDefinition builds a definition from the fuzzer's bytes: up to six
// steps of kinds that finish in a decision, sleep or run on a worker, with
// params, retries, timeouts and conditional edges forward only.
func fuzzDefinition(f *fuzzBytes) []byte {
	n := 1 + f.next()%6
	var steps []string
	for i := 0; i < n; i++ {
		typ := pick(f, "NoOp", "Sleep", "Http", "NoOp")
		var params []string
		if typ == "Sleep" {
			params = append(params, fmt.Sprintf(`"sleep_seconds":{"type":"LONG","value":%d}`, f.next()%5))
		}
		if typ == "Http" {
			params = append(params, `"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"http://127.0.0.1/"}}}`)
		}
		for k := 0; k < f.next()%4; k++ {
			params = append(params, fmt.Sprintf(`"p%d":%s`, k, pick(f, fuzzParams...)))
		}
		var succ []string
		for j := i + 1; j < n; j++ {
			if f.next()%3 == 0 {
				succ = append(succ, fmt.Sprintf(`"s%d":%q`, j, pick(f, fuzzConditions...)))
			}
		}
		extra := ""
		if f.next()%2 == 0 {
			extra += fmt.Sprintf(`,"retry_policy":{"error_retry_limit":%d,"platform_retry_limit":%d,"timeout_retry_limit":%d}`, f.next()%3, f.next()%3, f.next()%2)
		}
		if f.next()%3 == 0 {
			extra += fmt.Sprintf(`,"timeout":%d`, 1+f.next()%100)
		}
		if f.next()%4 == 0 {
			extra += `,"failure_mode":"` + pick(f, "FAIL_AFTER_RUNNING", "IGNORE_FAILURE", "FAIL_IMMEDIATELY") + `"`
		}
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"s%d","type":%q,"params":{%s},"transition":{"successors":{%s}}%s}}`,
			i, typ, strings.Join(params, ","), strings.Join(succ, ","), extra))
	}
	timeout := ""
	if f.next()%3 == 0 {
		timeout = fmt.Sprintf(`"timeout":%d,`, 1+f.next()%300)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"fuzz"},"workflow":{"id":"fuzz",%s
	  "params":{"big":{"type":"STRING","expression":"%s"}},"steps":[%s]}}`,
		timeout, pick(f, "'a'", "'abc' + 'def'", "Util.intsBetween(0, 10, 1).toString()"), strings.Join(steps, ",")))
}

// FuzzDecide drives random definitions the validator accepts through random
// event sequences: Decide must never panic, never exceed its expression
// budget without failing a step for it, always leave a state that encodes
// to JSON, and decide the same from the state as the store keeps it (settled
// steps' params offloaded).
func FuzzDecide(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{5, 1, 2, 1, 11, 0, 2, 3, 1, 9, 1, 12, 4, 4, 4, 4, 4, 1, 0, 3})
	f.Add([]byte{2, 2, 3, 10, 11, 12, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5})
	checker := definition.NewChecker(definition.WithClock(func() time.Time { return t0 }))
	eval := NewEvaluator(expression.New(expression.DefaultLimits()))
	f.Fuzz(func(t *testing.T, data []byte) {
		fb := &fuzzBytes{b: data}
		def, err := checker.Check(fuzzDefinition(fb), definition.JSON)
		if err != nil {
			return // only accepted definitions
		}
		g, err := Compile(def.Workflow, eval)
		if err != nil {
			t.Fatalf("an accepted definition does not compile: %v", err)
		}
		st := newInstance(g)
		now := t0
		var ev Event = StartRun{}
		for round := 0; round < 24; round++ {
			b := expression.NewBudget(0, 0)
			maxStarts := 1 + fb.next()%8
			d, err := Decide(context.Background(), g, st, ev, now, WithBudget(b), WithMaxStarts(maxStarts))
			// The same decision from the state as the store keeps it
			// (settled steps' params offloaded, read back when needed).
			off, offErr := Decide(context.Background(), g, Offload(st), ev, now, WithBudget(expression.NewBudget(0, 0)),
				WithMaxStarts(maxStarts), WithStepParams(stateParams{st}))
			checkSameDecision(t, d, err, off, offErr)
			if err == nil {
				checkDecision(t, d, b)
				st = d.State
			}
			now = now.Add(time.Duration(fb.next()) * time.Second)
			ev = fuzzEvent(fb, g, st, d)
		}
	})
}

// stateParams serves offloaded step params from the state they were
// offloaded from, as the store serves them from the attempt items.
type stateParams struct{ st *Instance }

func (p stateParams) StepParams(_ context.Context, stepID string, attempt, _ int64) (Values, error) {
	s := p.st.Step(stepID)
	if s == nil || s.Attempt != attempt {
		return nil, fmt.Errorf("no attempt %s/%d", stepID, attempt)
	}
	return s.Params, nil
}

// checkSameDecision checks that deciding from an offloaded state gives the
// decision deciding from the whole state gives.
func checkSameDecision(t *testing.T, d *Decision, err error, off *Decision, offErr error) {
	t.Helper()
	if (err == nil) != (offErr == nil) {
		t.Fatalf("decide: %v; from the offloaded state: %v", err, offErr)
	}
	if err != nil {
		return
	}
	enc := func(d *Decision) string {
		b, err := json.Marshal(struct {
			State       *Instance
			Commands    []Command
			Timeline    []TimelineEntry
			Transitions []Transition
			Continue    bool
		}{Offload(d.State), d.Commands, d.Timeline, d.Transitions, d.Continue})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := enc(d), enc(off); a != b {
		t.Fatalf("deciding from the offloaded state differs:\n whole: %s\n   off: %s", a, b)
	}
}

// checkDecision checks a decision's invariants.
func checkDecision(t *testing.T, d *Decision, b *expression.Budget) {
	t.Helper()
	if b.CPUUsed() > b.CPULimit() || b.MemoryUsed() > b.MemoryLimit() {
		failed := false
		for _, s := range d.State.Steps {
			failed = failed || strings.Contains(s.Message, "budget exceeded")
		}
		if !failed && !strings.Contains(d.State.Message, "budget exceeded") {
			t.Fatalf("budget overspent (cpu %d/%d, memory %d/%d) without a step failing for it", b.CPUUsed(), b.CPULimit(), b.MemoryUsed(), b.MemoryLimit())
		}
	}
	raw, err := json.Marshal(d.State)
	if err != nil {
		t.Fatalf("state does not encode: %v", err)
	}
	if len(raw) > 4*MaxRunParamsBytes {
		t.Fatalf("state is %d bytes as JSON", len(raw))
	}
}

// fuzzEvent picks the next event: a step finishing, a timer, an action or
// a continuation or a redrive, about the steps the state knows.
func fuzzEvent(fb *fuzzBytes, g *Graph, st *Instance, d *Decision) Event {
	if d != nil && d.Continue && fb.next()%2 == 0 {
		return Continue{}
	}
	stepID := fmt.Sprintf("s%d", fb.next()%len(g.nodes))
	var attempt int64 = 1
	if s := st.Step(stepID); s != nil && s.Attempt > 0 {
		attempt = s.Attempt
	}
	switch fb.next() % 5 {
	case 0, 1:
		return StepFinished{StepID: stepID, Attempt: attempt,
			Outcome: pick(fb, OutcomeSucceeded, OutcomeUserError, OutcomePlatformError, OutcomeFatalError),
			Outputs: map[string]any{"out": int64(fb.next())}}
	case 2:
		return TimerFired{StepID: stepID, Attempt: attempt,
			Purpose: pick(fb, PurposeSleep, PurposeRetry, PurposeTimeout, PurposeSignalCheck)}
	case 3:
		switch fb.next() % 3 {
		case 0:
			return TimerFired{Purpose: PurposeWorkflowTimeout}
		case 1:
			return Redrive{}
		}
		return Action{Action: pick(fb, "stop", "kill")}
	default:
		return Action{StepID: stepID, Action: pick(fb, "stop", "kill", "skip", "resume", "restart", "bypass_step_dependencies")}
	}
}

// TestFuzzDefinitionsAreAccepted keeps FuzzDecide meaningful: most
// definitions it builds must pass the validator.
func TestFuzzDefinitionsAreAccepted(t *testing.T) {
	checker := definition.NewChecker(definition.WithClock(func() time.Time { return t0 }))
	accepted := 0
	for seed := 0; seed < 200; seed++ {
		data := make([]byte, 64)
		for i := range data {
			data[i] = byte((seed*31 + i*17) % 251)
		}
		def := fuzzDefinition(&fuzzBytes{b: data})
		if _, err := checker.Check(def, definition.JSON); err == nil {
			accepted++
		} else if seed < 3 {
			t.Logf("rejected: %v\n%s", err, def)
		}
	}
	if accepted < 150 {
		t.Fatalf("only %d of 200 fuzzed definitions are accepted", accepted)
	}
	t.Logf("%d of 200 fuzzed definitions accepted", accepted)
}
