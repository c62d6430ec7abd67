package pricing

// The step-type model: what a run records for its orchestration per step,
// by how the step runs, as the full benchmark (`maestro bench`) measured
// runs recording it on ModelDate (docs/cost.md): the "chain" workload's
// NoOp steps and the "httpchain" workload's Http steps, their totals over
// their steps. An estimate for a workflow that has no run to take one from
// uses it; it covers the orchestration only (a step's compute depends on
// what it runs) and goes stale as the code changes, which is why it is
// dated.

// ModelDate is when the benchmark the model was read from ran.
const ModelDate = "2026-11-29"

// RunModel is what a run records besides its steps: its start request and
// the API function's invocation.
func RunModel() Usage {
	return Usage{APIRequests: 1, LambdaRequests: 1}
}

// StepModel is what a run records per step: a step a worker runs (work:
// Http, Lambda, Ecs, Batch, ...) or one decided in its commit (NoOp, Join).
func StepModel(work bool) Usage {
	if work {
		// httpchain: 175 write units, 105 read units, 11.5 SNS and 15 SQS
		// requests, 0.258 GB-s and 5 worker requests over 50 steps.
		return Usage{DynamoDBWriteUnits: 3.5, DynamoDBReadUnits: 2.1, SNSRequests: 0.23, SQSRequests: 0.3,
			LambdaRequests: 0.1, LambdaGBSeconds: 0.00516}
	}
	// chain: 1,225 write units, 52.5 read units, 51.5 SNS requests and
	// 0.571 GB-s over 500 steps.
	return Usage{DynamoDBWriteUnits: 2.45, DynamoDBReadUnits: 0.105, SNSRequests: 0.103, LambdaGBSeconds: 0.00114}
}
