package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// StepTimes are the moments, in Unix milliseconds from the step's
// timeline, that the overheads are computed from.
type StepTimes struct {
	// Running is when the attempt first became RUNNING.
	Running int64
	// Terminal is when the attempt SUCCEEDED.
	Terminal int64
}

// TimesFromSteps extracts each step's RUNNING and SUCCEEDED timeline
// timestamps from the latest attempts returned by GET .../steps. A step
// whose timeline lacks either entry is an error: the benchmark only
// measures runs in which every step succeeded.
func TimesFromSteps(steps []*orchestrator.StepView) (map[string]StepTimes, error) {
	out := make(map[string]StepTimes, len(steps))
	for _, s := range steps {
		var t StepTimes
		var running, done bool
		for _, e := range s.Timeline {
			switch model.StepStatus(e.Status) {
			case model.StepRunning:
				if !running {
					t.Running, running = e.Time, true
				}
			case model.StepSucceeded:
				t.Terminal, done = e.Time, true
			}
		}
		if !running || !done {
			return nil, fmt.Errorf("bench: step %s (status %s) has no RUNNING and SUCCEEDED timeline entries",
				s.StepID, s.RuntimeState.Status)
		}
		out[s.StepID] = t
	}
	return out, nil
}

// LaunchOverheads returns, for every step with upstreams, the time in
// milliseconds from the last of its upstreams reaching its terminal state to
// the step becoming RUNNING. Steps are visited in name order so the result
// is deterministic.
func LaunchOverheads(times map[string]StepTimes, upstreams map[string][]string) ([]float64, error) {
	names := make([]string, 0, len(upstreams))
	for name := range upstreams {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]float64, 0, len(names))
	for _, name := range names {
		down, ok := times[name]
		if !ok {
			return nil, fmt.Errorf("bench: no timeline for step %s", name)
		}
		var last int64
		for i, up := range upstreams[name] {
			t, ok := times[up]
			if !ok {
				return nil, fmt.Errorf("bench: no timeline for step %s, upstream of %s", up, name)
			}
			if i == 0 || t.Terminal > last {
				last = t.Terminal
			}
		}
		out = append(out, float64(down.Running-last))
	}
	return out, nil
}

// StartOverhead returns the milliseconds from sent, when the client sent
// the start request, to the first step becoming RUNNING.
func StartOverhead(sent time.Time, times map[string]StepTimes) (float64, error) {
	if len(times) == 0 {
		return 0, fmt.Errorf("bench: no step timelines to measure the start overhead from")
	}
	first := int64(-1)
	for _, t := range times {
		if first < 0 || t.Running < first {
			first = t.Running
		}
	}
	return float64(first) - float64(sent.UnixMicro())/1000, nil
}
