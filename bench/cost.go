package bench

// AWS list prices in US dollars, region us-east-1, as used on 2026-11-28
// (DynamoDB's on-demand prices are those in force since the November 2024
// reduction; free tiers are ignored).
const (
	// PriceDynamoDBWriteUnit is on-demand, $0.625 per million write request units.
	PriceDynamoDBWriteUnit = 0.625 / 1e6
	// PriceDynamoDBReadUnit is on-demand, $0.125 per million read request units.
	PriceDynamoDBReadUnit = 0.125 / 1e6
	// PriceSQSStandardRequest is $0.40 per million requests (64 KB chunks).
	PriceSQSStandardRequest = 0.40 / 1e6
	// PriceSQSFIFORequest is $0.50 per million FIFO requests (64 KB chunks).
	PriceSQSFIFORequest = 0.50 / 1e6
	// PriceSNSPublish is $0.50 per million published messages (64 KB
	// chunks; each entry of a PublishBatch counts).
	PriceSNSPublish = 0.50 / 1e6
	// PriceLambdaRequest is $0.20 per million invocations.
	PriceLambdaRequest = 0.20 / 1e6
	// PriceLambdaGBSecondARM is the arm64 duration price per GB-second.
	PriceLambdaGBSecondARM = 0.0000133334
	// PriceAPIGatewayRESTRequest is API Gateway REST APIs, $3.50 per
	// million requests (the first 333 million a month): the stack deploys
	// a REST API (infra/api.go; docs/deploy.md says why).
	PriceAPIGatewayRESTRequest = 3.50 / 1e6
	// PriceLogsIngestedGB is CloudWatch Logs' standard ingestion, $0.50 per
	// GB; each log event is billed 26 bytes more than its message.
	PriceLogsIngestedGB = 0.50
	// LogEventOverhead is the bytes CloudWatch Logs adds to each event.
	LogEventOverhead = 26
	// PriceXRayTrace is X-Ray, $5.00 per million traces recorded.
	PriceXRayTrace = 5.00 / 1e6
	// XRaySampledShare is the share of requests X-Ray's default sampling
	// rule records past its reservoir of one a second: 5%. (The reservoir
	// adds at most 2.6 million traces a month, $13, whatever the volume.)
	XRaySampledShare = 0.05
	// PriceSchedulerInvocation is EventBridge Scheduler, $1.00 per million
	// scheduled invocations; creating and deleting schedules is free.
	PriceSchedulerInvocation = 1.00 / 1e6
)

// Log lines the deployed stack writes besides the handlers' own.
const (
	// LambdaPlatformLogBytes is what Lambda writes to a function's log
	// for each invocation in the JSON format the stack deploys, at the
	// default system log level (INFO): a platform.start record (about 150
	// bytes) and a platform.report record with its metrics and X-Ray's
	// tracing field (about 420): two events.
	LambdaPlatformLogBytes = 150 + 420
	// LambdaPlatformLogEvents is those records' count.
	LambdaPlatformLogEvents = 2
	// APIAccessLogBytes is one line of the API stage's JSON access log
	// with the standard fields infra/api.go selects (request id, ip,
	// caller, user, request time, method, resource path, status,
	// protocol, response length): about 330 bytes.
	APIAccessLogBytes = 330
)

// DroppedTimerMillis is the modelled worker duration of a timer that fires
// after its run has ended and is dropped: a read of the run.
const DroppedTimerMillis = 10

// DeployedMemoryMB is the memory infra deploys function fn with by
// default (infra.DefaultFunctionSettings; infra's
// TestBenchmarkPricesTheDeployedFunctions holds the two together).
func DeployedMemoryMB(fn string) int {
	switch fn {
	case FunctionAPI, FunctionDecider:
		return 512
	default: // FunctionRouter, FunctionWorker
		return 256
	}
}

// Cost is an estimate in US dollars per million steps, by item.
type Cost struct {
	DynamoDBWrites float64 `json:"dynamodb_writes"`
	DynamoDBReads  float64 `json:"dynamodb_reads"`
	SQS            float64 `json:"sqs"`
	SNS            float64 `json:"sns"`
	LambdaRequests float64 `json:"lambda_requests"`
	LambdaDuration float64 `json:"lambda_duration"`
	APIGateway     float64 `json:"api_gateway"`
	// Logs is CloudWatch Logs ingestion: the handlers' log and EMF lines,
	// Lambda's lines per invocation, the API's access log.
	Logs float64 `json:"logs"`
	// XRay is the traces the functions' active tracing records.
	XRay float64 `json:"xray"`
	// Timers is what the long timers handed to EventBridge Scheduler cost
	// when they fire: the invocation, its SQS message (sent, received,
	// deleted) and the worker's invocation. Every run arms one, its
	// workflow timeout, which its end deletes.
	Timers float64 `json:"timers"`
	// Streams is always 0: GetRecords made by Lambda triggers are free.
	Streams float64 `json:"streams"`
	Total   float64 `json:"total"`
}

// EstimateCost prices the usage of a run that completed steps steps, per
// million steps, as the stack deploys: each function at its memory
// (DeployedMemoryMB), a REST API, its logs and traces. logs is what the
// handlers logged; fns are the Lambda functions' invocations, apiFunction
// names the one behind API Gateway. A run with no steps costs nothing.
func EstimateCost(u Usage, logs LogUsage, fns map[string]FunctionUsage, apiFunction string, steps int64) Cost {
	if steps <= 0 {
		return Cost{}
	}
	perMillion := 1e6 / float64(steps)
	var invocations int64
	var gbSeconds float64
	for name, f := range fns {
		invocations += f.Invocations
		gbSeconds += float64(f.ModelledMillis) / 1000 * float64(DeployedMemoryMB(name)) / 1024
	}
	requests := fns[apiFunction].Invocations
	logBytes := logs.Bytes + LogEventOverhead*logs.Events +
		invocations*(LambdaPlatformLogBytes+LambdaPlatformLogEvents*LogEventOverhead) +
		requests*(APIAccessLogBytes+LogEventOverhead)
	// Schedules created and not deleted by a run's end fire. (A schedule
	// that fires deletes itself; the local schedule pump's DeleteSchedule
	// stands for that, so a benchmark in which long timers fire would be
	// priced low here: none of the workloads has one.)
	timers := float64(max(0, u.Requests["Scheduler.CreateSchedule"]-u.Requests["Scheduler.DeleteSchedule"]))
	standard := u.SQSBilledRequests - u.SQSFIFOBilledRequests
	c := Cost{
		DynamoDBWrites: u.DynamoDBWriteUnits * PriceDynamoDBWriteUnit * perMillion,
		DynamoDBReads:  u.DynamoDBReadUnits * PriceDynamoDBReadUnit * perMillion,
		SQS: (float64(standard)*PriceSQSStandardRequest +
			float64(u.SQSFIFOBilledRequests)*PriceSQSFIFORequest) * perMillion,
		LambdaRequests: float64(invocations) * PriceLambdaRequest * perMillion,
		LambdaDuration: gbSeconds * PriceLambdaGBSecondARM * perMillion,
		APIGateway:     float64(requests) * PriceAPIGatewayRESTRequest * perMillion,
		SNS:            float64(u.SNSBilledMessages) * PriceSNSPublish * perMillion,
		Logs:           float64(logBytes) / (1 << 30) * PriceLogsIngestedGB * perMillion,
		XRay:           float64(invocations) * XRaySampledShare * PriceXRayTrace * perMillion,
		Timers: timers * (PriceSchedulerInvocation + 3*PriceSQSStandardRequest + PriceLambdaRequest +
			DroppedTimerMillis/1000.0*float64(DeployedMemoryMB(FunctionWorker))/1024*PriceLambdaGBSecondARM) * perMillion,
	}
	c.Total = c.DynamoDBWrites + c.DynamoDBReads + c.SQS + c.SNS + c.LambdaRequests + c.LambdaDuration + c.APIGateway +
		c.Logs + c.XRay + c.Timers + c.Streams
	return c
}
