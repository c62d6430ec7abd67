// Command decider is the decision-worker Lambda: FIFO decision queue -> engine -> DynamoDB.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/metrics"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvTable)
	lambda.Start(metrics.FlushAfter(deps.Metrics, deps.Decider.Handle))
}
