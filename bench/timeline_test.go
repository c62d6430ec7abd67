package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// stepView builds a step whose timeline runs CREATED at created, RUNNING at
// running and SUCCEEDED at done (a zero time leaves that entry out).
func stepView(id string, created, running, done int64) *orchestrator.StepView {
	v := &orchestrator.StepView{StepID: id, RuntimeState: orchestrator.StepRuntimeView{Status: "SUCCEEDED"}}
	add := func(ts int64, status string) {
		if ts != 0 {
			v.Timeline = append(v.Timeline, orchestrator.TimelineEntry{Time: ts, Status: status})
		}
	}
	add(created, "CREATED")
	add(running, "RUNNING")
	add(done, "SUCCEEDED")
	return v
}

func TestTimesFromSteps(t *testing.T) {
	retried := stepView("r", 100, 110, 0)
	// A second RUNNING entry (say after a restart) must not move the first.
	retried.Timeline = append(retried.Timeline,
		orchestrator.TimelineEntry{Time: 150, Status: "RUNNING"},
		orchestrator.TimelineEntry{Time: 170, Status: "SUCCEEDED"})

	times, err := TimesFromSteps([]*orchestrator.StepView{stepView("a", 100, 105, 120), retried})
	require.NoError(t, err)
	assert.Equal(t, map[string]StepTimes{
		"a": {Running: 105, Terminal: 120},
		"r": {Running: 110, Terminal: 170},
	}, times)
}

func TestTimesFromStepsNeedsBothEntries(t *testing.T) {
	for name, v := range map[string]*orchestrator.StepView{
		"never ran":      stepView("x", 100, 0, 0),
		"never finished": stepView("x", 100, 105, 0),
		"empty":          {StepID: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := TimesFromSteps([]*orchestrator.StepView{v})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "step x")
		})
	}
}

func TestLaunchOverheads(t *testing.T) {
	tests := []struct {
		name      string
		times     map[string]StepTimes
		upstreams map[string][]string
		want      []float64
	}{
		{
			name: "chain",
			times: map[string]StepTimes{
				"s1": {Running: 1000, Terminal: 1002},
				"s2": {Running: 1010, Terminal: 1011},
				"s3": {Running: 1011, Terminal: 1020},
			},
			upstreams: map[string][]string{"s2": {"s1"}, "s3": {"s2"}},
			want:      []float64{8, 0},
		},
		{
			name: "fan-out and fan-in measure the join from the last upstream",
			times: map[string]StepTimes{
				"root": {Running: 0, Terminal: 5},
				"f1":   {Running: 7, Terminal: 9},
				"f2":   {Running: 6, Terminal: 30},
				"f3":   {Running: 8, Terminal: 12},
				"join": {Running: 42, Terminal: 50},
			},
			upstreams: map[string][]string{"f1": {"root"}, "f2": {"root"}, "f3": {"root"}, "join": {"f1", "f2", "f3"}},
			want:      []float64{2, 1, 3, 12}, // f1, f2, f3, join in name order
		},
		{
			name:      "no edges",
			times:     map[string]StepTimes{"only": {Running: 1, Terminal: 2}},
			upstreams: map[string][]string{},
			want:      []float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LaunchOverheads(tt.times, tt.upstreams)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLaunchOverheadsMissingStep(t *testing.T) {
	_, err := LaunchOverheads(map[string]StepTimes{"s2": {}}, map[string][]string{"s2": {"s1"}})
	require.ErrorContains(t, err, "step s1, upstream of s2")
	_, err = LaunchOverheads(map[string]StepTimes{"s1": {}}, map[string][]string{"s2": {"s1"}})
	require.ErrorContains(t, err, "no timeline for step s2")
}

func TestStartOverhead(t *testing.T) {
	sent := time.UnixMilli(1000).Add(250 * time.Microsecond)
	got, err := StartOverhead(sent, map[string]StepTimes{
		"a": {Running: 1040}, "b": {Running: 1013}, "c": {Running: 1500},
	})
	require.NoError(t, err)
	assert.InDelta(t, 12.75, got, 1e-9)

	_, err = StartOverhead(sent, nil)
	require.Error(t, err)
}
