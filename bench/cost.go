package bench

import (
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/resources"
)

// XRaySampledShare is the share of requests X-Ray's default sampling rule
// records past its reservoir of one a second: 5%. (The reservoir adds at
// most 2.6 million traces a month, $13, whatever the volume.)
const XRaySampledShare = 0.05

// Prices are package pricing's, the one price table (dated, with its
// sources), which the runtime records runs' cost with too.

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
// default (resources.FunctionMemoryMB, which infra.DefaultFunctionSettings
// deploys; infra's TestBenchmarkPricesTheDeployedFunctions holds the
// template to it).
func DeployedMemoryMB(fn string) int {
	return resources.FunctionMemoryMB(fn)
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
	logBytes := logs.Bytes + pricing.LogEventOverhead*logs.Events +
		invocations*(LambdaPlatformLogBytes+LambdaPlatformLogEvents*pricing.LogEventOverhead) +
		requests*(APIAccessLogBytes+pricing.LogEventOverhead)
	// Schedules created and not deleted by a run's end fire. (A schedule
	// that fires deletes itself; the local schedule pump's DeleteSchedule
	// stands for that, so a benchmark in which long timers fire would be
	// priced low here: none of the workloads has one.)
	timers := float64(max(0, u.Requests["Scheduler.CreateSchedule"]-u.Requests["Scheduler.DeleteSchedule"]))
	standard := u.SQSBilledRequests - u.SQSFIFOBilledRequests
	c := Cost{
		DynamoDBWrites: u.DynamoDBWriteUnits * pricing.DynamoDBWriteUnit * perMillion,
		DynamoDBReads:  u.DynamoDBReadUnits * pricing.DynamoDBReadUnit * perMillion,
		SQS: (float64(standard)*pricing.SQSStandardRequest +
			float64(u.SQSFIFOBilledRequests)*pricing.SQSFIFORequest) * perMillion,
		LambdaRequests: float64(invocations) * pricing.LambdaRequest * perMillion,
		LambdaDuration: gbSeconds * pricing.LambdaGBSecondARM * perMillion,
		APIGateway:     float64(requests) * pricing.APIGatewayRESTRequest * perMillion,
		SNS:            float64(u.SNSBilledMessages) * pricing.SNSPublish * perMillion,
		Logs:           float64(logBytes) / (1 << 30) * pricing.LogsIngestedGB * perMillion,
		XRay:           float64(invocations) * XRaySampledShare * pricing.XRayTrace * perMillion,
		Timers: timers * (pricing.SchedulerInvocation + 3*pricing.SQSStandardRequest + pricing.LambdaRequest +
			DroppedTimerMillis/1000.0*float64(DeployedMemoryMB(FunctionWorker))/1024*pricing.LambdaGBSecondARM) * perMillion,
	}
	c.Total = c.DynamoDBWrites + c.DynamoDBReads + c.SQS + c.SNS + c.LambdaRequests + c.LambdaDuration + c.APIGateway +
		c.Logs + c.XRay + c.Timers + c.Streams
	return c
}
