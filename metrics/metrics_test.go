package metrics

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestEmitWritesEMF(t *testing.T) {
	var b bytes.Buffer
	t0 := time.UnixMilli(1_700_000_000_000)
	e := New(&b, "prod", func() time.Time { return t0 })
	e.Emit(StepsFinished, 1, Count, "Status", "SUCCEEDED")
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
}

// TestEmitWithProperties: properties are fields of the line, not
// dimensions, and cannot replace the Stage dimension.
func TestEmitWithProperties(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "prod", func() time.Time { return time.UnixMilli(1) })
	e.EmitWith(RunsFinished, 1, Count, map[string]string{"WorkflowId": "wf-1", "Stage": "spoofed"}, "Status", "FAILED")
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
