package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEmitWritesEMF(t *testing.T) {
	var b bytes.Buffer
	t0 := time.UnixMilli(1_700_000_000_000)
	e := New(&b, "prod", func() time.Time { return t0 })
	e.Emit(StepsFinished, 1, Count, "Status", "SUCCEEDED")
	e.Flush()
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	want := `{"StepsFinished":1,"Stage":"prod","Status":"SUCCEEDED","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Stage","Status"]],"Metrics":[{"Name":"StepsFinished","Unit":"Count"}],"Namespace":"Maestro"}],"Timestamp":1700000000000}}`
	got, _ := json.Marshal(line)
	var w map[string]any
	_ = json.Unmarshal([]byte(want), &w)
	wantNorm, _ := json.Marshal(w)
	if string(got) != string(wantNorm) {
		t.Fatalf("%s\nwant %s", got, wantNorm)
	}
	var nilE *Emitter
	nilE.Emit(QueueLag, 1, Milliseconds) // writes nothing, does not panic
	nilE.Since(DecisionLatency, t0)
	nilE.Flush()
}

// TestEmitWithProperties: properties are fields of the line, not
// dimensions, and cannot replace the Stage dimension.
func TestEmitWithProperties(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "prod", func() time.Time { return time.UnixMilli(1) })
	e.EmitWith(RunsFinished, 1, Count, map[string]string{"WorkflowId": "wf-1", "Stage": "spoofed"}, "Status", "FAILED")
	e.Flush()
	var line struct {
		WorkflowID string `json:"WorkflowId"`
		Stage      string
		AWS        struct {
			CloudWatchMetrics []struct{ Dimensions [][]string }
		} `json:"_aws"`
	}
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line.WorkflowID != "wf-1" || line.Stage != "prod" || len(line.AWS.CloudWatchMetrics) != 1 ||
		len(line.AWS.CloudWatchMetrics[0].Dimensions[0]) != 2 {
		t.Fatalf("%s", b.String())
	}
}

// TestFlushWritesALinePerMetricAndDimensions: values wait for Flush, then
// go out one line per metric, dimension values and properties, as an
// array when there are several (EMF's 100 at most a line: the 100th value
// writes its line at once); a second Flush writes nothing.
func TestFlushWritesALinePerMetricAndDimensions(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "prod", func() time.Time { return time.UnixMilli(7) })
	e.Emit(StepLaunchDelay, 12, Milliseconds)
	e.EmitWith(StepsFinished, 1, Count, map[string]string{"WorkflowId": "a"}, "Status", "SUCCEEDED")
	e.Emit(StepLaunchDelay, 15, Milliseconds)
	e.EmitWith(StepsFinished, 1, Count, map[string]string{"WorkflowId": "a"}, "Status", "FAILED")
	e.EmitWith(StepsFinished, 1, Count, map[string]string{"WorkflowId": "a"}, "Status", "SUCCEEDED")
	e.EmitWith(StepsFinished, 1, Count, map[string]string{"WorkflowId": "b"}, "Status", "SUCCEEDED")
	if b.Len() != 0 {
		t.Fatalf("written before Flush: %s", b.String())
	}
	e.Flush()
	want := []string{
		`{"Stage":"prod","StepLaunchDelay":[12,15],"_aws":{"CloudWatchMetrics":[{"Dimensions":[["Stage"]],"Metrics":[{"Name":"StepLaunchDelay","Unit":"Milliseconds"}],"Namespace":"Maestro"}],"Timestamp":7}}`,
		`{"Stage":"prod","Status":"SUCCEEDED","StepsFinished":[1,1],"WorkflowId":"a","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Stage","Status"]],"Metrics":[{"Name":"StepsFinished","Unit":"Count"}],"Namespace":"Maestro"}],"Timestamp":7}}`,
		`{"Stage":"prod","Status":"FAILED","StepsFinished":1,"WorkflowId":"a","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Stage","Status"]],"Metrics":[{"Name":"StepsFinished","Unit":"Count"}],"Namespace":"Maestro"}],"Timestamp":7}}`,
		`{"Stage":"prod","Status":"SUCCEEDED","StepsFinished":1,"WorkflowId":"b","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Stage","Status"]],"Metrics":[{"Name":"StepsFinished","Unit":"Count"}],"Namespace":"Maestro"}],"Timestamp":7}}`,
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		var line map[string]any
		if err := json.Unmarshal([]byte(got[i]), &line); err != nil {
			t.Fatal(err)
		}
		norm, _ := json.Marshal(line)
		if string(norm) != want[i] {
			t.Errorf("line %d:\n%s\nwant\n%s", i, norm, want[i])
		}
	}
	b.Reset()
	e.Flush()
	for i := range 101 {
		e.Emit(QueueLag, float64(i), Milliseconds, "Queue", "work")
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Fatalf("%d lines after 101 values, want the first 100 written at once", n)
	}
	e.Flush()
	var last struct{ QueueLag float64 }
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || len(lines) != 2 || last.QueueLag != 100 {
		t.Fatalf("after Flush: %d lines, last %+v (%v)", len(lines), last, err)
	}
}
