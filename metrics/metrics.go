// Package metrics writes CloudWatch Embedded Metric Format (EMF) lines: one
// JSON object per value, which CloudWatch Logs turns into a metric when a
// Lambda function prints it. The handlers emit step launch delay, decision
// latency, steps and runs finished by status and queue lag; the CDK app's
// dashboard and alarms read them (namespace Namespace, dimension Stage).
package metrics

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "Maestro"

// Metric names.
const (
	// StepLaunchDelay is how long a step waited from the decision that
	// started it to its worker's claim (ms).
	StepLaunchDelay = "StepLaunchDelay"
	// DecisionLatency is how long one decision took: load, decide, commit
	// (ms).
	DecisionLatency = "DecisionLatency"
	// StepsFinished and RunsFinished count ends, by Status.
	StepsFinished = "StepsFinished"
	RunsFinished  = "RunsFinished"
	// QueueLag is how long a message waited in its queue before a handler
	// took it (ms), by Queue.
	QueueLag = "QueueLag"
)

// Units.
const (
	Milliseconds = "Milliseconds"
	Count        = "Count"
)

// Emitter writes EMF lines. A nil *Emitter writes nothing.
type Emitter struct {
	mu    sync.Mutex
	w     io.Writer
	stage string
	now   func() time.Time
}

// New returns an Emitter writing to w with dimension Stage = stage.
func New(w io.Writer, stage string, now func() time.Time) *Emitter {
	if now == nil {
		now = time.Now
	}
	return &Emitter{w: w, stage: stage, now: now}
}

// Emit writes one value of metric name, with dimension pairs (key, value,
// ...) beside Stage.
func (e *Emitter) Emit(name string, value float64, unit string, dims ...string) {
	e.EmitWith(name, value, unit, nil, dims...)
}

// EmitWith is Emit with properties: fields of the line that are not
// dimensions (no metric per value, so any cardinality is fine), which
// CloudWatch Logs Insights can filter and group by — a workflow id, say.
func (e *Emitter) EmitWith(name string, value float64, unit string, props map[string]string, dims ...string) {
	if e == nil || e.w == nil {
		return
	}
	keys := []string{"Stage"}
	line := map[string]any{name: value}
	for k, v := range props {
		line[k] = v
	}
	line["Stage"] = e.stage
	for i := 0; i+1 < len(dims); i += 2 {
		keys = append(keys, dims[i])
		line[dims[i]] = dims[i+1]
	}
	line["_aws"] = map[string]any{
		"Timestamp": e.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{keys},
			"Metrics":    []any{map[string]string{"Name": name, "Unit": unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(b, '\n'))
}

// Since emits the milliseconds from start to now as metric name.
func (e *Emitter) Since(name string, start time.Time, dims ...string) {
	if e == nil {
		return
	}
	e.Emit(name, float64(e.now().Sub(start).Milliseconds()), Milliseconds, dims...)
}

// SQSLag emits each message's QueueLag: the time from sentMillis (SQS's
// SentTimestamp attribute, unix ms as a string) to now.
func (e *Emitter) SQSLag(queue string, sentMillis []string) {
	if e == nil {
		return
	}
	now := e.now().UnixMilli()
	for _, s := range sentMillis {
		sent, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sent <= 0 {
			continue
		}
		e.Emit(QueueLag, float64(max(now-sent, 0)), Milliseconds, "Queue", queue)
	}
}
