// Command api is the API Lambda behind API Gateway (REST API, proxy integration).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/maestro-serverless/maestro/lambdas/api"
	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/metrics"
)

func main() {
	deps := wiring.MustBuildFromEnv(wiring.EnvTable)
	lambda.Start(metrics.FlushAfter(deps.Metrics, api.LambdaHandler(api.NewHandler(api.ServicesOf(deps.Orchestrator), api.Options{Logger: deps.Logger, MemoryMB: wiring.LambdaMemoryMB("api")}))))
}
