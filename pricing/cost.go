package pricing

import "math"

// Parts of a run's recorded cost: each counts a billed quantity, priced at
// its unit price (Parts).
const (
	// FargateVCPUSeconds is vCPU-seconds of Fargate tasks on Linux/x86_64.
	FargateVCPUSeconds = "fargate_vcpu_seconds"
	// FargateGBSeconds is GB-seconds of memory of Fargate tasks on
	// Linux/x86_64.
	FargateGBSeconds = "fargate_gb_seconds"
	// FargateARMVCPUSeconds is vCPU-seconds of Fargate tasks on
	// Linux/arm64.
	FargateARMVCPUSeconds = "fargate_arm_vcpu_seconds"
	// FargateARMGBSeconds is GB-seconds of memory of Fargate tasks on
	// Linux/arm64.
	FargateARMGBSeconds = "fargate_arm_gb_seconds"
	// FargateStorageGBSeconds is GB-seconds of Fargate ephemeral storage
	// past the free 20 GB.
	FargateStorageGBSeconds = "fargate_storage_gb_seconds"
	// LambdaStepRequests is invocations of Lambda steps' functions.
	LambdaStepRequests = "lambda_step_requests"
	// LambdaStepGBSeconds is Lambda steps' functions' billed duration at
	// their memory, priced at the x86_64 rate: an invocation's report does
	// not name its function's architecture (arm64 is billed 20 % less).
	LambdaStepGBSeconds = "lambda_step_gb_seconds"

	// DynamoDBWriteUnits is on-demand write request units the run's
	// orchestration consumed.
	DynamoDBWriteUnits = "dynamodb_write_units"
	// DynamoDBReadUnits is on-demand read request units it consumed.
	DynamoDBReadUnits = "dynamodb_read_units"
	// SQSRequests is billed requests (64 KB chunks) to standard queues.
	SQSRequests = "sqs_requests"
	// SQSFIFORequests is billed requests (64 KB chunks) to FIFO queues.
	SQSFIFORequests = "sqs_fifo_requests"
	// SNSRequests is billed SNS publish requests (64 KB chunks).
	SNSRequests = "sns_requests"
	// SchedulerInvocations is EventBridge Scheduler schedules that fired.
	SchedulerInvocations = "scheduler_invocations"
	// APIRequests is REST API requests (a start request's share).
	APIRequests = "api_requests"
	// LambdaRequests is invocations of the orchestrator's own functions
	// (a message's share of its batch's invocation).
	LambdaRequests = "lambda_requests"
	// LambdaGBSeconds is the orchestrator's functions' duration at their
	// memory, arm64 (as the stack deploys them).
	LambdaGBSeconds = "lambda_gb_seconds"
)

// Kinds of cost a part belongs to; a recorded cost says which kinds it
// covers (Cost.Covers).
const (
	// KindFargate is the compute of steps that ran as Fargate tasks.
	KindFargate = "fargate"
	// KindLambdaSteps is the invocations of synchronous Lambda steps.
	KindLambdaSteps = "lambda_steps"
	// KindOrchestration is the orchestrator's own requests on the run's
	// behalf: DynamoDB, SQS, SNS, Scheduler, the API and its functions.
	KindOrchestration = "orchestration"
)

// part is a cost part's unit price and kind.
type part struct {
	unitUSD float64
	kind    string
}

// partOf returns the unit price and kind of a part a recorded cost may
// hold; ok is false for any other name.
func partOf(name string) (p part, ok bool) {
	switch name {
	case FargateVCPUSeconds:
		return part{FargateVCPUSecondX86, KindFargate}, true
	case FargateGBSeconds:
		return part{FargateGBSecondX86, KindFargate}, true
	case FargateARMVCPUSeconds:
		return part{FargateVCPUSecondARM, KindFargate}, true
	case FargateARMGBSeconds:
		return part{FargateGBSecondARM, KindFargate}, true
	case FargateStorageGBSeconds:
		return part{FargateStorageGBSecond, KindFargate}, true
	case LambdaStepRequests:
		return part{LambdaRequest, KindLambdaSteps}, true
	case LambdaStepGBSeconds:
		return part{LambdaGBSecondX86, KindLambdaSteps}, true
	case DynamoDBWriteUnits:
		return part{DynamoDBWriteUnit, KindOrchestration}, true
	case DynamoDBReadUnits:
		return part{DynamoDBReadUnit, KindOrchestration}, true
	case SQSRequests:
		return part{SQSStandardRequest, KindOrchestration}, true
	case SQSFIFORequests:
		return part{SQSFIFORequest, KindOrchestration}, true
	case SNSRequests:
		return part{SNSPublish, KindOrchestration}, true
	case SchedulerInvocations:
		return part{SchedulerInvocation, KindOrchestration}, true
	case APIRequests:
		return part{APIGatewayRESTRequest, KindOrchestration}, true
	case LambdaRequests:
		return part{LambdaRequest, KindOrchestration}, true
	case LambdaGBSeconds:
		return part{LambdaGBSecondARM, KindOrchestration}, true
	}
	return part{}, false
}

// Recorded returns the kinds of cost the runtime records on a run, in
// order. What a run costs otherwise (CloudWatch Logs and X-Ray, Batch jobs
// on EC2, asynchronous Lambda steps, the stream router's work) is not in
// its recorded cost.
func Recorded() []string { return []string{KindFargate, KindLambdaSteps, KindOrchestration} }

// KindOf returns the kind of cost part name belongs to ("" for a name that
// is not a part).
func KindOf(name string) string {
	p, _ := partOf(name)
	return p.kind
}

// LambdaInvocation returns the usage of one invocation billed for
// billedMillis at memoryMB.
func LambdaInvocation(billedMillis, memoryMB int64) Usage {
	if billedMillis < 0 || memoryMB <= 0 {
		return nil
	}
	return Usage{LambdaStepRequests: 1, LambdaStepGBSeconds: float64(billedMillis) / 1000 * float64(memoryMB) / 1024}
}

// Usage counts billed quantities by part (the constants above). A nil
// Usage is empty.
type Usage map[string]float64

// Add adds u's counts to a copy of t and returns it; t is not changed.
// Parts that are not known, and counts that are not finite or are
// negative, are dropped.
func (t Usage) Add(u Usage) Usage {
	if len(u) == 0 {
		return t
	}
	out := make(Usage, len(t)+len(u))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range u {
		if _, ok := partOf(k); !ok || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			continue
		}
		out[k] += v
	}
	return out
}

// Part is one part of a cost: the quantity billed and its price.
type Part struct {
	Count float64 `json:"count"`
	USD   float64 `json:"usd"`
}

// Cost is a priced Usage.
type Cost struct {
	// TotalUSD is the sum of the parts.
	TotalUSD float64 `json:"total_usd"`
	// Parts are the billed quantities by part, with their prices.
	Parts map[string]Part `json:"parts"`
	// Covers names the kinds of cost the total includes: it is what the
	// runtime records (Recorded), not everything the run cost.
	Covers []string `json:"covers"`
	// PricesOf is the date of the price table (Date).
	PricesOf string `json:"prices_of"`
}

// USDOf is the part of the total that parts of kind (KindFargate, ...)
// make up.
func (c Cost) USDOf(kind string) float64 {
	var usd float64
	for name, p := range c.Parts {
		if KindOf(name) == kind {
			usd += p.USD
		}
	}
	return usd
}

// Price prices u with the table.
func Price(u Usage) Cost {
	c := Cost{Parts: map[string]Part{}, Covers: Recorded(), PricesOf: Date}
	for k, n := range u {
		p, ok := partOf(k)
		if !ok || n <= 0 {
			continue
		}
		usd := n * p.unitUSD
		c.Parts[k] = Part{Count: n, USD: usd}
		c.TotalUSD += usd
	}
	return c
}

// Fargate returns the usage of a Fargate task of cpu CPU units (1024 a
// vCPU) and memoryMiB of memory that was billed from start to stop (unix
// ms: the start of its image pull and its end) with storageGiB of
// ephemeral storage (0: the default 20), on arm64 or x86_64. Fargate
// bills by the second, rounded up, and at least a minute.
func Fargate(cpu, memoryMiB, storageGiB int, arm bool, startMillis, stopMillis int64) Usage {
	if cpu <= 0 || memoryMiB <= 0 || stopMillis < startMillis || startMillis <= 0 {
		return nil
	}
	secs := float64(max((stopMillis-startMillis+999)/1000, FargateMinimumSeconds))
	vcpu, gb := FargateVCPUSeconds, FargateGBSeconds
	if arm {
		vcpu, gb = FargateARMVCPUSeconds, FargateARMGBSeconds
	}
	u := Usage{vcpu: float64(cpu) / 1024 * secs, gb: float64(memoryMiB) / 1024 * secs}
	if extra := storageGiB - FargateFreeStorageGB; extra > 0 {
		u[FargateStorageGBSeconds] = float64(extra) * secs
	}
	return u
}
