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
