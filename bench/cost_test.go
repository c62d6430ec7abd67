package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEstimateCost(t *testing.T) {
	// 1,000 steps used 4,000 write units, 500 read units, 300 SQS requests
	// (100 of them FIFO), and three functions.
	u := Usage{DynamoDBWriteUnits: 4000, DynamoDBReadUnits: 500, SQSBilledRequests: 300, SQSFIFOBilledRequests: 100}
	fns := map[string]FunctionUsage{
		FunctionAPI:     {Invocations: 10, BilledMillis: 90000, ModelledMillis: 1000},
		FunctionRouter:  {Invocations: 40, BilledMillis: 2000, ModelledMillis: 2000},
		FunctionDecider: {Invocations: 50, BilledMillis: 5000, ModelledMillis: 5000},
	}
	c := EstimateCost(u, fns, FunctionAPI, 1000)
	const per = 1000 // a million steps is 1,000 times the run
	assert.InDelta(t, 4000*0.625e-6*per, c.DynamoDBWrites, 1e-9)
	assert.InDelta(t, 500*0.125e-6*per, c.DynamoDBReads, 1e-9)
	assert.InDelta(t, (200*0.40e-6+100*0.50e-6)*per, c.SQS, 1e-9)
	assert.InDelta(t, 100*0.20e-6*per, c.LambdaRequests, 1e-9)
	// Priced at the durations modelled for AWS, not those measured here.
	assert.InDelta(t, 8.0*0.125*0.0000133334*per, c.LambdaDuration, 1e-9)
	assert.InDelta(t, 10*1.00e-6*per, c.APIGateway, 1e-9)
	assert.Zero(t, c.Streams)
	assert.InDelta(t, c.DynamoDBWrites+c.DynamoDBReads+c.SQS+c.LambdaRequests+c.LambdaDuration+c.APIGateway, c.Total, 1e-9)
	assert.InDelta(t, 2.5+0.0625+0.13+0.02+0.01333+0.01, c.Total, 1e-4)
}

func TestEstimateCostWithoutSteps(t *testing.T) {
	assert.Equal(t, Cost{}, EstimateCost(Usage{DynamoDBWriteUnits: 10}, nil, FunctionAPI, 0))
}
