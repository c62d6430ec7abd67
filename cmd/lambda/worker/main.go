// Command worker is the step-worker Lambda: work queue -> step execution, timers, time-trigger
// firings and schedule syncs, purges.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/metrics"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvTable, wiring.EnvWorkQueueURL, wiring.EnvWorkQueueARN,
		wiring.EnvScheduleGroup, wiring.EnvSchedulerRoleARN)
	lambda.Start(metrics.FlushAfter(deps.Metrics, deps.Worker.Handle))
}
