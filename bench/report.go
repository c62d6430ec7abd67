package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is the benchmark's result.
type Report struct {
	Runs           int               `json:"runs"`
	Steps          int               `json:"steps"`
	StreamInterval string            `json:"stream_interval"`
	Emulator       string            `json:"emulator"`
	Workloads      []*WorkloadResult `json:"workloads"`
	// Overall combines the workloads: samples pooled, usage summed, wall
	// and busy times the sums of the workloads'.
	Overall     *WorkloadResult `json:"overall"`
	Assumptions []string        `json:"assumptions"`
	// Notes say what may have skewed the figures.
	Notes []string `json:"notes,omitempty"`
}

// WorkloadResult holds the figures of one workload (or of all).
type WorkloadResult struct {
	Name           string `json:"name"`
	WorkflowID     string `json:"workflow_id,omitempty"`
	StepsPerRun    int    `json:"steps_per_run,omitempty"`
	Runs           int    `json:"runs"`
	Succeeded      int    `json:"succeeded"`
	StepsCompleted int64  `json:"steps_completed"`
	// StepLaunch is upstream SUCCEEDED -> downstream RUNNING per edge
	// (for a fan-in, from the last upstream).
	StepLaunch Summary `json:"step_launch_overhead"`
	// StartOverhead is start request sent -> first step RUNNING.
	StartOverhead Summary `json:"start_overhead"`
	// StartRequest is the start request's round trip as the client saw it.
	StartRequest Summary `json:"start_request"`
	// Makespan is start request sent -> instance end time.
	Makespan Summary `json:"makespan"`
	// CallGap is measured at the Http steps' server: an upstream step's
	// call returning -> its downstream step's call arriving (see CallLog);
	// FirstCall is start request sent -> first call arriving. Empty for
	// workloads whose steps call no server.
	CallGap   Summary `json:"call_gap,omitempty"`
	FirstCall Summary `json:"first_call,omitempty"`
	// WallSeconds runs from the first start request to the last instance end.
	WallSeconds float64 `json:"wall_seconds"`
	// BusySeconds is the part of the wall time during which at least one
	// instance was in flight (its start request sent, its end not yet
	// reached): without the time between one instance's end and the next
	// one's start request, which is the benchmark's own polling.
	BusySeconds float64 `json:"busy_seconds"`
	// StepsPerSecond is StepsCompleted over BusySeconds.
	StepsPerSecond float64                  `json:"steps_per_second"`
	AWS            Usage                    `json:"aws"`
	Logs           LogUsage                 `json:"logs"`
	Lambda         map[string]FunctionUsage `json:"lambda"`
	Cost           Cost                     `json:"cost_per_million_steps_usd"`
	// RecordedCost is what the runs recorded their orchestration cost,
	// beside what the meter measured (nil for Overall).
	RecordedCost *RecordedCost `json:"recorded_cost,omitempty"`
	// PeakHeapBytes is the peak Go heap in use of the benchmark process —
	// the whole local stack, every handler — while the workload ran.
	PeakHeapBytes uint64 `json:"peak_heap_bytes"`
	// CalledSteps and RepeatedCalls, for a loop, are the step attempts
	// (the server's paths) its iterations called, and the calls that
	// repeated one already made: a loop of Http iterations each called
	// once has as many called steps as iterations and no repeat.
	CalledSteps   int      `json:"called_steps,omitempty"`
	RepeatedCalls int      `json:"repeated_calls,omitempty"`
	Failures      []string `json:"failures,omitempty"`

	instances                         []int64
	launch, start, startReq, makespan []float64
	gap, firstCall                    []float64
}

// summarize computes the summaries and the throughput from the samples.
func (r *WorkloadResult) summarize() {
	r.StepLaunch = Summarize(r.launch)
	r.StartOverhead = Summarize(r.start)
	r.StartRequest = Summarize(r.startReq)
	r.Makespan = Summarize(r.makespan)
	r.CallGap = Summarize(r.gap)
	r.FirstCall = Summarize(r.firstCall)
	if r.BusySeconds > 0 {
		r.StepsPerSecond = float64(r.StepsCompleted) / r.BusySeconds
	}
}

// Failed reports whether any run of any workload did not succeed.
func (r *Report) Failed() bool {
	for _, w := range r.Workloads {
		if w.Succeeded < w.Runs {
			return true
		}
	}
	return false
}

// combine pools the workloads into the overall result.
func combine(ws []*WorkloadResult) *WorkloadResult {
	all := &WorkloadResult{Name: "overall", AWS: newUsage(), Lambda: map[string]FunctionUsage{}}
	for _, w := range ws {
		all.Runs += w.Runs
		all.Succeeded += w.Succeeded
		all.StepsCompleted += w.StepsCompleted
		all.WallSeconds += w.WallSeconds
		all.BusySeconds += w.BusySeconds
		all.launch = append(all.launch, w.launch...)
		all.start = append(all.start, w.start...)
		all.startReq = append(all.startReq, w.startReq...)
		all.makespan = append(all.makespan, w.makespan...)
		for k, v := range w.AWS.Requests {
			all.AWS.Requests[k] += v
		}
		for k, v := range w.AWS.RequestMillis {
			all.AWS.RequestMillis[k] += v
		}
		for k, v := range w.AWS.WriteUnitsByKind {
			all.AWS.WriteUnitsByKind[k] += v
		}
		for k, v := range w.AWS.RunItemWrites {
			all.AWS.RunItemWrites[k] += v
		}
		all.AWS.DynamoDBWriteUnits += w.AWS.DynamoDBWriteUnits
		all.AWS.EstimatedWriteUnits += w.AWS.EstimatedWriteUnits
		all.AWS.IndexWriteUnits += w.AWS.IndexWriteUnits
		all.AWS.ReportedCapacity = all.AWS.ReportedCapacity || w.AWS.ReportedCapacity
		all.AWS.FailedWriteUnits += w.AWS.FailedWriteUnits
		all.AWS.DynamoDBReadUnits += w.AWS.DynamoDBReadUnits
		all.AWS.SQSBilledRequests += w.AWS.SQSBilledRequests
		all.AWS.SQSFIFOBilledRequests += w.AWS.SQSFIFOBilledRequests
		all.AWS.SQSEmptyReceives += w.AWS.SQSEmptyReceives
		all.AWS.StreamRecords += w.AWS.StreamRecords
		all.AWS.SNSBilledMessages += w.AWS.SNSBilledMessages
		all.Logs.Events += w.Logs.Events
		all.Logs.Bytes += w.Logs.Bytes
		for k, v := range w.Lambda {
			f := all.Lambda[k]
			f.Invocations += v.Invocations
			f.Records += v.Records
			f.BilledMillis += v.BilledMillis
			f.ModelledMillis += v.ModelledMillis
			all.Lambda[k] = f
		}
		for _, f := range w.Failures {
			all.Failures = append(all.Failures, w.Name+" "+f)
		}
	}
	all.summarize()
	all.Cost = EstimateCost(all.AWS, all.Logs, all.Lambda, FunctionAPI, all.StepsCompleted)
	return all
}

// Assumptions lists how the figures are obtained and what they leave out;
// reported says whether the emulator reported the write capacity consumed
// (Meter.UseReportedCapacity).
func Assumptions(reported bool) []string {
	writes := "DynamoDB write units from the requests: ceil(item bytes / 1 KB), x2 inside TransactWriteItems; a Put carries the whole item (exact), an Update or Delete only its key and expression values (a lower bound of the stored item). Failed writes (false conditions, cancelled transactions) are charged too and shown apart."
	if reported {
		writes = "DynamoDB write units as DynamoDB Local reports them (ConsumedCapacity: an Update or Delete billed by the whole item, before or after, and TransactWriteItems doubled, as AWS bills them; for a transaction at least the requests' estimate, as DynamoDB Local counts items of equal content once); failed writes (false conditions, cancelled transactions), which it reports nothing for, from the requests, shown apart. The split by item kind is estimated from the requests (ceil(item bytes / 1 KB), x2 in transactions; an Update or Delete by its key and expression values)."
	}
	return []string{
		"Instances run one at a time, except httpchains (all its instances at once); step-launch and start overheads come from the step timelines' millisecond timestamps (the deciding handler's clock, the same machine as the client).",
		"A p99 is given only over 200 samples or more; a smaller sample shows its max in that place (\"max 31.6\").",
		"Lambda invocations: one per API start request plus one per non-empty handler batch the local pumps deliver (stream: up to 100 records per poll; SQS: up to 10 messages per receive, 4 work and 2 decision pollers). AWS event source mappings batch differently.",
		"Lambda duration: each invocation as it would last on AWS, rounded up to 1 ms, arm64 at the memory infra deploys the function with (api and decider 512 MB, router and worker 256 MB; bench.DeployedMemoryMB): its duration here without the time its AWS calls were in flight, plus each call at 5 ms (DynamoDB, the AWS estimate's figure) or 20 ms (other services, assumed), one after the other (bench.AWSCallLatency). Here the emulators answer in 1 ms to seconds (a burst of starts queues behind DynamoDB Local's one writer); \"ms here\" shows the durations as measured.",
		writes,
		"DynamoDB read units from the responses: ceil(bytes returned / 4 KB), at least 1 per GetItem or Query page, halved when eventually consistent.",
		"SQS: one billed request per 64 KB of payload; FIFO queues at their own price; receives that return nothing (idle long polling, a cost of time, not of steps) are left out.",
		"SNS: the router publishes change events (one per run or step attempt and decision) ten per PublishBatch, billed as one request per 64 KB of the batch's payload (AWS: batching cuts SNS cost up to 10x); deliveries to subscribers are the subscribers' cost.",
		"Free or not per step: DynamoDB Streams reads by Lambda triggers are free; ListSchedules calls are the local schedule pump emulating EventBridge Scheduler; the benchmark's own status and timeline reads are not metered.",
		"API Gateway: a REST API, as the stack deploys it ($3.50 per million requests), charged per start request (a start-batch request starts up to 100 runs).",
		"CloudWatch Logs ingestion ($0.50 per GB, 26 bytes more per event): the handlers' JSON log lines at Info and EMF metric lines as written here (but for the benchmark's own reads), Lambda's platform.start and platform.report records per invocation (570 bytes, estimated) and an access log line per API request (330 bytes, estimated).",
		"X-Ray: 5% of invocations traced (the default sampling rule past its one-a-second reservoir) at $5.00 per million traces.",
		"Timers: a timer due in more than 15 minutes is an EventBridge Scheduler schedule (every run arms one, its workflow timeout, which the run's end deletes): each schedule created and not deleted is priced as the invocation it becomes ($1.00 per million), its SQS message (sent, received, deleted) and a 10 ms worker invocation; creating and deleting schedules is free.",
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: write JSON report: %w", err)
	}
	return nil
}

// WriteText writes the report as readable tables.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "maestro bench: %d runs per workload, %d steps, stream poll every %s, emulator %s\n\n",
		r.Runs, r.Steps, r.StreamInterval, r.Emulator)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\truns ok\tsteps\tlaunch p50\tp99\tmax\tedges\tstart p50\tp99\tstart req p50\tmakespan p50\tsteps/s\t")
	rows := append(slices.Clone(r.Workloads), r.Overall)
	for _, res := range rows {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.1f\t\n",
			res.Name, res.Succeeded, res.Runs, res.StepsCompleted,
			ms(res.StepLaunch.P50), res.StepLaunch.P99Text(), ms(res.StepLaunch.Max), res.StepLaunch.Count,
			ms(res.StartOverhead.P50), res.StartOverhead.P99Text(), ms(res.StartRequest.P50), ms(res.Makespan.P50),
			res.StepsPerSecond)
	}
	tw.Flush()
	b.WriteString("(ms; launch = upstream SUCCEEDED -> downstream RUNNING, start = start request sent -> first step RUNNING)\n")
	for _, res := range r.Workloads {
		if kind, ok := map[string]string{"foreach": "NoOp", "foreachhttp": "Http", "foreachitems": "NoOp (S3 items)"}[res.Name]; ok && res.Succeeded > 0 {
			fmt.Fprintf(&b, "%s: %d %s iterations in %.1f s, %.1f iterations/s (its \"steps\" above and its costs below are iterations); peak Go heap of the local stack %.0f MiB",
				res.Name, res.StepsCompleted, kind, res.BusySeconds, res.StepsPerSecond, float64(res.PeakHeapBytes)/(1<<20))
			if res.CalledSteps > 0 || res.RepeatedCalls > 0 {
				fmt.Fprintf(&b, "; the Http server saw %d iterations' calls, %d of them repeated", res.CalledSteps, res.RepeatedCalls)
			}
			b.WriteString("\n")
		}
	}
	for _, res := range r.Workloads {
		if res.CallGap.Count > 0 || res.FirstCall.Count > 0 {
			fmt.Fprintf(&b, "%s, measured at the Http steps' server: step-launch gap (call returns -> next call arrives) p50 %s, p99 %s, max %s ms over %d edges; start request -> first call p50 %s ms\n",
				res.Name, ms(res.CallGap.P50), res.CallGap.P99Text(), ms(res.CallGap.Max), res.CallGap.Count, ms(res.FirstCall.P50))
		}
	}
	b.WriteString("\n")

	steps := float64(max(r.Overall.StepsCompleted, 1))
	b.WriteString("AWS requests made by the system (benchmark's own reads excluded)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "operation\t"
	for _, res := range r.Workloads {
		header += res.Name + "\t"
	}
	fmt.Fprintln(tw, header+"total\tper step\tms/call\t")
	for _, op := range slices.Sorted(maps.Keys(r.Overall.AWS.Requests)) {
		line := op + "\t"
		for _, res := range r.Workloads {
			line += fmt.Sprintf("%d\t", res.AWS.Requests[op])
		}
		n := r.Overall.AWS.Requests[op]
		fmt.Fprintf(tw, "%s%d\t%.3f\t%.1f\t\n", line, n, float64(n)/steps, r.Overall.AWS.RequestMillis[op]/float64(max(n, 1)))
	}
	tw.Flush()
	u := r.Overall.AWS
	estimated := ""
	if u.ReportedCapacity {
		estimated = fmt.Sprintf(", as reported; %.2f per step estimated from the requests", u.EstimatedWriteUnits/steps)
	}
	fmt.Fprintf(&b, "DynamoDB: %.0f write units (%.2f per step%s, %.2f of them by failed writes), %.1f read units (%.3f per step); SQS: %d billed requests (%.3f per step, %d FIFO), %d empty receives not billed; SNS: %d billed publishes (%.2f per step); stream records read: %d\n",
		u.DynamoDBWriteUnits, u.DynamoDBWriteUnits/steps, estimated, u.FailedWriteUnits/steps, u.DynamoDBReadUnits, u.DynamoDBReadUnits/steps,
		u.SQSBilledRequests, float64(u.SQSBilledRequests)/steps, u.SQSFIFOBilledRequests, u.SQSEmptyReceives,
		u.SNSBilledMessages, float64(u.SNSBilledMessages)/steps, u.StreamRecords)
	b.WriteString("DynamoDB write units per step by item kind (sort key prefix; estimated from the requests):")
	for _, kind := range slices.Sorted(maps.Keys(u.WriteUnitsByKind)) {
		fmt.Fprintf(&b, " %s %.2f", kind, u.WriteUnitsByKind[kind]/steps)
	}
	b.WriteString("\nRun item written per commit, in write units (1 KB each, before a transaction doubles them), p50 / p90 / max:")
	for _, w := range r.Workloads {
		if p50, p90, most, ok := unitQuantiles(w.AWS.RunItemWrites); ok {
			fmt.Fprintf(&b, " %s %d / %d / %d;", w.Name, p50, p90, most)
		}
	}
	b.WriteString("\n\n")

	b.WriteString("Lambda functions (local stand-ins)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "function\tinvocations\trecords\tms here\tms/invocation\tms on AWS (modelled)\tinvocations per step\t")
	for _, name := range slices.Sorted(maps.Keys(r.Overall.Lambda)) {
		f := r.Overall.Lambda[name]
		per := 0.0
		if f.Invocations > 0 {
			per = float64(f.BilledMillis) / float64(f.Invocations)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%d\t%.3f\t\n", name, f.Invocations, f.Records, f.BilledMillis, per, f.ModelledMillis, float64(f.Invocations)/steps)
	}
	tw.Flush()

	b.WriteString("\nEstimated AWS cost per million steps (USD, us-east-1 list prices)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	header = "item\t"
	for _, res := range rows {
		header += res.Name + "\t"
	}
	fmt.Fprintln(tw, header)
	costRow := func(name string, f func(Cost) float64) {
		line := name + "\t"
		for _, res := range rows {
			line += fmt.Sprintf("%.3f\t", f(res.Cost))
		}
		fmt.Fprintln(tw, line)
	}
	costRow("DynamoDB writes", func(c Cost) float64 { return c.DynamoDBWrites })
	costRow("DynamoDB reads", func(c Cost) float64 { return c.DynamoDBReads })
	costRow("SQS", func(c Cost) float64 { return c.SQS })
	costRow("SNS (events)", func(c Cost) float64 { return c.SNS })
	costRow("Lambda requests", func(c Cost) float64 { return c.LambdaRequests })
	costRow("Lambda duration", func(c Cost) float64 { return c.LambdaDuration })
	costRow("API Gateway (REST)", func(c Cost) float64 { return c.APIGateway })
	costRow("CloudWatch Logs", func(c Cost) float64 { return c.Logs })
	costRow("X-Ray", func(c Cost) float64 { return c.XRay })
	costRow("timers (Scheduler)", func(c Cost) float64 { return c.Timers })
	costRow("DynamoDB Streams", func(c Cost) float64 { return c.Streams })
	costRow("total", func(c Cost) float64 { return c.Total })
	tw.Flush()

	b.WriteString("\nRecorded by the runs (their instance views' orchestration cost) beside the meter, USD per workload\n")
	for _, res := range r.Workloads {
		rc := res.RecordedCost
		if rc == nil {
			continue
		}
		verdict := "within 5 %"
		if !rc.Within(RecordedTolerance) {
			verdict = "NOT within 5 %"
		}
		fmt.Fprintf(&b, "  %s: recorded $%.8f, metered $%.8f, ratio %.4f: %s\n", res.Name, rc.RecordedUSD, rc.MeteredUSD, rc.Ratio, verdict)
		b.WriteString(rc.String())
	}

	b.WriteString("\nAssumptions\n")
	for _, a := range r.Assumptions {
		b.WriteString("  - " + a + "\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes\n")
		for _, n := range r.Notes {
			b.WriteString("  - " + n + "\n")
		}
	}
	if len(r.Overall.Failures) > 0 {
		b.WriteString("\nFailures\n")
		for _, f := range r.Overall.Failures {
			b.WriteString("  - " + f + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	return nil
}

// ms formats milliseconds with one decimal.
func ms(v float64) string {
	return fmt.Sprintf("%.1f", v)
}

// unitQuantiles returns the p50, p90 and largest of a histogram of write
// units; ok is false when it is empty.
func unitQuantiles(h map[int64]int64) (p50, p90, most int64, ok bool) {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	var seen int64
	for _, u := range slices.Sorted(maps.Keys(h)) {
		seen += h[u]
		if p50 == 0 && 2*seen >= n {
			p50 = u
		}
		if p90 == 0 && 10*seen >= 9*n {
			p90 = u
		}
		most = u
	}
	return p50, p90, most, true
}
