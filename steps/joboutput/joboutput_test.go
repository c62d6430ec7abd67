package joboutput

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/orchestrator"
)

func TestFind(t *testing.T) {
	// What Maestro's sample-kubernetes-output-wf prints.
	log := "hello world\nMAESTRO_OUTPUT_START_TOKEN{\"params\":{\"foo\": {\"value\":\"bar\",\"type\":\"STRING\",\"evaluated_result\":\"bar\",\"evaluated_time\":1625871404000}," +
		"\"n\":{\"value\":7,\"type\":\"LONG\"}},\"artifacts\":{\"maestro_dynamic_output\": {\"type\":\"DYNAMIC_OUTPUT\"}}}MAESTRO_OUTPUT_END_TOKEN\n"
	out, found, err := Find(log)
	if err != nil || !found || out.Params["foo"] != "bar" || fmt.Sprint(out.Params["n"]) != "7" || out.NotRetryable {
		t.Fatalf("%+v %v %v", out, found, err)
	}
	// The last output counts.
	out, _, _ = Find(log + "MAESTRO_OUTPUT_START_TOKEN{\"params\":{}}MAESTRO_OUTPUT_END_TOKEN")
	if len(out.Params) != 0 {
		t.Fatalf("%+v", out)
	}
	out, found, err = Find(`MAESTRO_OUTPUT_START_TOKEN{"artifacts":{"maestro_retry":{"type":"RETRY","retryable":false}}}MAESTRO_OUTPUT_END_TOKEN`)
	if err != nil || !found || !out.NotRetryable {
		t.Fatalf("%+v %v %v", out, found, err)
	}
	// Dynamic signal outputs, as the sample prints them.
	out, _, err = Find(`MAESTRO_OUTPUT_START_TOKEN{"artifacts":{"maestro_dynamic_output": {"signal_outputs":[{"value":{"name":{"value":"demo_table","type":"STRING"}},` +
		`"type":"MAP","evaluated_result":{"name":"demo_table","dt":20260101},"evaluated_time": 1625871404000}],"type":"DYNAMIC_OUTPUT"}}}MAESTRO_OUTPUT_END_TOKEN`)
	if err != nil || len(out.Signals) != 1 || out.Signals[0].Name != "demo_table" || out.Signals[0].Params["dt"] != int64(20260101) {
		t.Fatalf("dynamic output: %+v %v", out.Signals, err)
	}
	_, _, err = Find(`MAESTRO_OUTPUT_START_TOKEN{"artifacts":{"maestro_dynamic_output": {"signal_outputs":[{"evaluated_result":{"name":""}}]}}}MAESTRO_OUTPUT_END_TOKEN`)
	if err == nil || !strings.Contains(err.Error(), "artifacts.maestro_dynamic_output.signal_outputs[0].evaluated_result.name: is required") {
		t.Fatalf("a nameless dynamic output: %v", err)
	}
	for _, none := range []string{"", "no marker", "MAESTRO_OUTPUT_END_TOKEN then MAESTRO_OUTPUT_START_TOKEN"} {
		if _, found, err := Find(none); found || err != nil {
			t.Errorf("%q: found %v, %v", none, found, err)
		}
	}
	for _, bad := range []string{
		"MAESTRO_OUTPUT_START_TOKEN{not json}MAESTRO_OUTPUT_END_TOKEN",
		`MAESTRO_OUTPUT_START_TOKEN{"params":{"x":5}}MAESTRO_OUTPUT_END_TOKEN`,
		`MAESTRO_OUTPUT_START_TOKEN{"params":{"x":{"type":"LONG"}}}MAESTRO_OUTPUT_END_TOKEN`,
	} {
		if _, found, err := Find(bad); !found || err == nil {
			t.Errorf("%q: found %v, %v", bad, found, err)
		}
	}
}

func TestEnv(t *testing.T) {
	m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", InstanceID: 2, RunID: 3, StepID: "s", Attempt: 4}}
	got := Env(m, map[string]string{"A": "1", "MAESTRO_STEP_ID": "mine"}, func(name, value string) string { return name + "=" + value })
	want := []string{"A=1", "MAESTRO_OUTPUT_END=MAESTRO_OUTPUT_END_TOKEN", "MAESTRO_OUTPUT_START=MAESTRO_OUTPUT_START_TOKEN",
		"MAESTRO_STEP_ATTEMPT_ID=4", "MAESTRO_STEP_ID=mine", "MAESTRO_WORKFLOW_ID=wf", "MAESTRO_WORKFLOW_INSTANCE_ID=2", "MAESTRO_WORKFLOW_RUN_ID=3"}
	if !slices.Equal(got, want) {
		t.Fatalf("Env = %q\nwant %q", got, want)
	}
}
