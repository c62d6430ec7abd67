// Package pricing is the one price table of the project: the AWS list
// prices the benchmark estimates a workload's cost with and a run's
// recorded cost is priced with. It imports nothing from AWS.
//
// Prices are US dollars in region us-east-1, as listed on 2026-11-28
// (Date), on these pages:
//
//   - DynamoDB on-demand (the prices in force since the November 2024
//     reduction): https://aws.amazon.com/dynamodb/pricing/on-demand/
//   - SQS: https://aws.amazon.com/sqs/pricing/
//   - SNS: https://aws.amazon.com/sns/pricing/
//   - Lambda: https://aws.amazon.com/lambda/pricing/
//   - API Gateway: https://aws.amazon.com/api-gateway/pricing/
//   - CloudWatch Logs: https://aws.amazon.com/cloudwatch/pricing/
//   - X-Ray: https://aws.amazon.com/xray/pricing/
//   - EventBridge Scheduler: https://aws.amazon.com/eventbridge/pricing/
//   - Fargate: https://aws.amazon.com/fargate/pricing/
//
// Free tiers are ignored.
package pricing

// Date is when the prices below were read from their sources.
const Date = "2026-11-28"

// Region is the region the prices are for.
const Region = "us-east-1"

// Requests and storage units.
const (
	// DynamoDBWriteUnit is on-demand, $0.625 per million write request units.
	DynamoDBWriteUnit = 0.625 / 1e6
	// DynamoDBReadUnit is on-demand, $0.125 per million read request units.
	DynamoDBReadUnit = 0.125 / 1e6
	// SQSStandardRequest is $0.40 per million requests (64 KB chunks).
	SQSStandardRequest = 0.40 / 1e6
	// SQSFIFORequest is $0.50 per million FIFO requests (64 KB chunks).
	SQSFIFORequest = 0.50 / 1e6
	// SNSPublish is $0.50 per million published messages (64 KB chunks;
	// each entry of a PublishBatch counts).
	SNSPublish = 0.50 / 1e6
	// LambdaRequest is $0.20 per million invocations.
	LambdaRequest = 0.20 / 1e6
	// LambdaGBSecondARM is Lambda's arm64 duration price per GB-second
	// (the first 7.5 billion GB-s a month).
	LambdaGBSecondARM = 0.0000133334
	// LambdaGBSecondX86 is Lambda's x86_64 duration price per GB-second
	// (the first 6 billion GB-s a month).
	LambdaGBSecondX86 = 0.0000166667
	// APIGatewayRESTRequest is API Gateway REST APIs, $3.50 per million
	// requests (the first 333 million a month).
	APIGatewayRESTRequest = 3.50 / 1e6
	// LogsIngestedGB is CloudWatch Logs' standard ingestion, $0.50 per GB.
	LogsIngestedGB = 0.50
	// LogEventOverhead is the bytes CloudWatch Logs bills each log event
	// beyond its message.
	LogEventOverhead = 26
	// XRayTrace is X-Ray, $5.00 per million traces recorded.
	XRayTrace = 5.00 / 1e6
	// SchedulerInvocation is EventBridge Scheduler, $1.00 per million
	// scheduled invocations; creating and deleting schedules is free.
	SchedulerInvocation = 1.00 / 1e6
)

// Fargate, per second (AWS lists them per hour and bills by the second,
// from the start of the image pull to the task's end, at least one minute).
const (
	// FargateVCPUSecondX86 is Linux/x86_64, $0.04048 per vCPU-hour.
	FargateVCPUSecondX86 = 0.04048 / 3600
	// FargateGBSecondX86 is Linux/x86_64, $0.004445 per GB-hour.
	FargateGBSecondX86 = 0.004445 / 3600
	// FargateVCPUSecondARM is Linux/arm64, $0.03238 per vCPU-hour.
	FargateVCPUSecondARM = 0.03238 / 3600
	// FargateGBSecondARM is Linux/arm64, $0.00356 per GB-hour.
	FargateGBSecondARM = 0.00356 / 3600
	// FargateStorageGBSecond is ephemeral storage past the 20 GB every
	// task has free, $0.000111 per GB-hour.
	FargateStorageGBSecond = 0.000111 / 3600
	// FargateMinimumSeconds is the least a Fargate task is billed for.
	FargateMinimumSeconds = 60
	// FargateFreeStorageGB is the ephemeral storage a task has at no charge.
	FargateFreeStorageGB = 20
)
