// Command router is the stream-router Lambda: DynamoDB stream -> SQS / Scheduler / SNS events.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/metrics"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvDecisionQueueURL, wiring.EnvWorkQueueURL, wiring.EnvWorkQueueARN,
		wiring.EnvScheduleGroup, wiring.EnvSchedulerRoleARN, wiring.EnvEventsTopicARN)
	lambda.Start(metrics.FlushAfter(deps.Metrics, deps.Router.Handle))
}
