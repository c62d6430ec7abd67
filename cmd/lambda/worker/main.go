// Command worker is the step-worker Lambda: work queue -> step execution / timers -> run inbox.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvTable, wiring.EnvWorkQueueURL)
	lambda.Start(deps.Worker.Handle)
}
