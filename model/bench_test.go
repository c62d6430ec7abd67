package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// genDefinition builds a definition of n typed steps: a chain in which every
// tenth step also fans out to the next five, each step with four params, a
// timeout and a retry policy.
func genDefinition(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"properties":{"owner":"bench","run_strategy":{"rule":"parallel","workflow_concurrency":5},"step_concurrency":20},`)
	b.WriteString(`"workflow":{"id":"bench-wf","name":"generated","params":{"base":{"value":10,"type":"LONG"},"label":{"value":"x","type":"STRING"}},"steps":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step":{"id":"job_%d","type":"NoOp","timeout":"1h","retry_policy":{"error_retry_limit":3,"backoff":{"type":"EXPONENTIAL_BACKOFF","error_retry_backoff_in_secs":5}},`, i)
		fmt.Fprintf(&b, `"params":{"count":{"value":%d,"type":"LONG"},"ratio":{"value":%d.25,"type":"DOUBLE"},"next":{"expression":"count + base","type":"LONG"},"names":{"value":["a","b","c"],"type":"STRING_ARRAY","mode":"mutable"}}`, i, i)
		var succ []string
		if i+1 < n {
			succ = append(succ, fmt.Sprintf(`"job_%d":"true"`, i+1))
		}
		if i%10 == 0 {
			for j := i + 2; j < n && j <= i+6; j++ {
				succ = append(succ, fmt.Sprintf(`"job_%d":"count > %d"`, j, j))
			}
		}
		if len(succ) > 0 {
			b.WriteString(`,"transition":{"successors":{` + strings.Join(succ, ",") + `}}`)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

func TestGeneratedDefinitionIsValid(t *testing.T) {
	d, err := ParseDefinition(genDefinition(StepListSizeLimit))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Validate(d, ValidateOptions{}); errs != nil {
		t.Fatal(errs)
	}
	d, err = ParseDefinition(genDefinition(StepListSizeLimit + 1))
	if err != nil {
		t.Fatal(err)
	}
	errs := Validate(d, ValidateOptions{})
	if len(errs) != 1 || errs[0].Path != "workflow.steps" || !strings.Contains(errs[0].Msg, "301 steps") {
		t.Fatalf("want one step-limit error, got %v", errs)
	}
}

func BenchmarkParseValidate300(b *testing.B) {
	data := genDefinition(300)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := ParseDefinition(data)
		if err != nil {
			b.Fatal(err)
		}
		if errs := Validate(d, ValidateOptions{}); errs != nil {
			b.Fatal(errs)
		}
	}
}

// BenchmarkReferenceUnmarshalAny300 decodes the same document with
// encoding/json into map[string]any: a yardstick for the machine's speed
// that BenchmarkParseValidate300 can be compared with.
func BenchmarkReferenceUnmarshalAny300(b *testing.B) {
	data := genDefinition(300)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
