// Command signals is the signal-ingest Lambda: S3 object notifications and
// messages of the incoming-signals topic, from the signal-ingest queue,
// become signals; malformed ones go to the queue's dead-letter queue.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/metrics"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvTable, wiring.EnvSignalDLQURL)
	lambda.Start(metrics.FlushAfter(deps.Metrics, deps.Ingest.Handle))
}
