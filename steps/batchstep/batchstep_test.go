package batchstep

import (
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
)

func TestParseJob(t *testing.T) {
	j, err := parseJob(engine.Values{"batch": map[string]any{"job_queue": "q", "job_definition": "d:2", "command": []any{"run"},
		"env": map[string]any{"A": "1"}, "vcpus": int64(2), "memory": "2048", "array_size": int64(10)}})
	if err != nil || j.queue != "q" || j.definition != "d:2" || j.vcpus != 2 || j.memory != 2048 || j.arraySize != 10 || j.env["A"] != "1" {
		t.Fatalf("%+v %v", j, err)
	}
	for _, tc := range []struct {
		p   map[string]any
		err string
	}{
		{map[string]any{"job_definition": "d"}, "job_queue: required"},
		{map[string]any{"job_queue": "q", "job_definition": "d", "array_size": int64(1)}, "array_size: 1 is outside 2-10000"},
		{map[string]any{"job_queue": "q", "job_definition": "d", "priority": int64(1)}, "priority: not a Batch step field"},
		{map[string]any{"job_queue": "q", "job_definition": "d", "command": "run"}, "command: must be a STRING_ARRAY"},
	} {
		if _, err := parseJob(engine.Values{"batch": tc.p}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want %q", tc.p, err, tc.err)
		}
	}
}

func TestAllowLists(t *testing.T) {
	allow := []string{"etl", "arn:aws:batch:us-east-1:1:job-queue/train"}
	for q, want := range map[string]bool{
		"etl": true, "arn:aws:batch:us-east-1:1:job-queue/etl": true, "train": true,
		"arn:aws:batch:us-east-1:1:job-queue/train": true, "arn:aws:batch:us-east-1:2:job-queue/train": false, "other": false,
	} {
		if got := allowedQueue(allow, q); got != want {
			t.Errorf("allowedQueue(%q) = %v", q, got)
		}
	}
	for def, want := range map[string]string{"etl": "etl", "etl:3": "etl", "arn:aws:batch:us-east-1:1:job-definition/etl:3": "etl"} {
		if got := definitionName(def); got != want {
			t.Errorf("definitionName(%q) = %q", def, got)
		}
	}
}
