// Package metrics writes CloudWatch Embedded Metric Format (EMF) lines: a
// JSON object per metric holding the values a handler invocation kept,
// which CloudWatch Logs turns into metrics when a Lambda function prints
// it. The handlers emit step launch delay, decision
// latency, steps and runs finished by status and queue lag; the CDK app's
// dashboard and alarms read them (namespace Namespace, dimension Stage).
package metrics

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	// RunCost is what a run that ended was billed for, in US dollars
	// (pricing.Price of its recorded cost: what that covers), with its
	// workflow as a property.
	RunCost = "RunCost"
)

// Units.
const (
	Milliseconds = "Milliseconds"
	Count        = "Count"
	// None is a value without a CloudWatch unit (dollars have none).
	None = "None"
)

// Emitter writes EMF lines. It keeps the values it is given until Flush,
// then writes one line per metric, dimension values and properties, with
// every value kept for it (EMF takes up to maxValues in a line): a worker
// that runs a chain of ten steps in one invocation writes a line for each
// metric, not ten. A Lambda handler flushes at the end of each invocation
// (FlushAfter). A nil *Emitter writes nothing.
type Emitter struct {
	mu    sync.Mutex
	w     io.Writer
	stage string
	now   func() time.Time
	// kept are the values not yet written, by line (lineKey), in the
	// order their lines were first used.
	kept  map[string]*pending
	order []string
}

// maxValues is the most values EMF takes for one metric in one line.
const maxValues = 100

// pending is one line's values, waiting for Flush.
type pending struct {
	name, unit string
	props      map[string]string
	dims       []string
	values     []float64
}

// New returns an Emitter writing to w with dimension Stage = stage.
func New(w io.Writer, stage string, now func() time.Time) *Emitter {
	if now == nil {
		now = time.Now
	}
	return &Emitter{w: w, stage: stage, now: now, kept: map[string]*pending{}}
}

// Emit keeps one value of metric name, with dimension pairs (key, value,
// ...) beside Stage, for the next Flush.
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
	key := lineKey(name, unit, props, dims)
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.kept[key]
	if p == nil {
		p = &pending{name: name, unit: unit, props: maps.Clone(props), dims: slices.Clone(dims)}
		e.kept[key] = p
		e.order = append(e.order, key)
	}
	p.values = append(p.values, value)
	if len(p.values) == maxValues {
		e.write(p)
		p.values = p.values[:0]
	}
}

// Flush writes the values kept since the last Flush.
func (e *Emitter) Flush() {
	if e == nil || e.w == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, key := range e.order {
		if p := e.kept[key]; len(p.values) > 0 {
			e.write(p)
		}
	}
	clear(e.kept)
	e.order = e.order[:0]
}

// FlushAfter wraps a Lambda handler so that each invocation ends with
// e.Flush: the invocation's values are written before Lambda may freeze
// the process.
func FlushAfter[In, Out any](e *Emitter, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		defer e.Flush()
		return h(ctx, in)
	}
}

// lineKey identifies the line a value goes in: its metric, unit,
// dimension values and properties.
func lineKey(name, unit string, props map[string]string, dims []string) string {
	var b strings.Builder
	b.WriteString(name + "\x00" + unit)
	for _, d := range dims {
		b.WriteString("\x00" + d)
	}
	b.WriteString("\x01")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k + "\x00" + props[k] + "\x00")
	}
	return b.String()
}

// write writes p's values as one EMF line: the value itself when there is
// one, else the array of them. e.mu is held.
func (e *Emitter) write(p *pending) {
	keys := []string{"Stage"}
	line := map[string]any{}
	if len(p.values) == 1 {
		line[p.name] = p.values[0]
	} else {
		line[p.name] = slices.Clone(p.values)
	}
	for k, v := range p.props {
		line[k] = v
	}
	line["Stage"] = e.stage
	for i := 0; i+1 < len(p.dims); i += 2 {
		keys = append(keys, p.dims[i])
		line[p.dims[i]] = p.dims[i+1]
	}
	line["_aws"] = map[string]any{
		"Timestamp": e.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{keys},
			"Metrics":    []any{map[string]string{"Name": p.name, "Unit": p.unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
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
