package bench

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEstimateCost(t *testing.T) {
	// 1,000 steps used 4,000 write units, 500 read units, 300 SQS requests
	// (100 of them FIFO), created 3 schedules and deleted one, logged 1,000 lines of 200
	// bytes, and ran three functions.
	u := Usage{DynamoDBWriteUnits: 4000, DynamoDBReadUnits: 500, SQSBilledRequests: 300, SQSFIFOBilledRequests: 100,
		Requests: map[string]int64{"Scheduler.CreateSchedule": 3, "Scheduler.DeleteSchedule": 1}}
	logs := LogUsage{Events: 1000, Bytes: 200_000}
	fns := map[string]FunctionUsage{
		FunctionAPI:     {Invocations: 10, BilledMillis: 90000, ModelledMillis: 1000},
		FunctionRouter:  {Invocations: 40, BilledMillis: 2000, ModelledMillis: 2000},
		FunctionDecider: {Invocations: 50, BilledMillis: 5000, ModelledMillis: 5000},
	}
	c := EstimateCost(u, logs, fns, FunctionAPI, 1000)
	const per = 1000 // a million steps is 1,000 times the run
	assert.InDelta(t, 4000*0.625e-6*per, c.DynamoDBWrites, 1e-9)
	assert.InDelta(t, 500*0.125e-6*per, c.DynamoDBReads, 1e-9)
	assert.InDelta(t, (200*0.40e-6+100*0.50e-6)*per, c.SQS, 1e-9)
	assert.InDelta(t, 100*0.20e-6*per, c.LambdaRequests, 1e-9)
	// Priced at the durations modelled for AWS, not those measured here,
	// each function at the memory it is deployed with: api and decider
	// 512 MB, router 256 MB.
	assert.InDelta(t, (1.0*0.5+2.0*0.25+5.0*0.5)*0.0000133334*per, c.LambdaDuration, 1e-9)
	assert.InDelta(t, 10*3.50e-6*per, c.APIGateway, 1e-9)
	// The handlers' lines (26 bytes more each), Lambda's two records per
	// invocation, an access log line per API request.
	logBytes := 200_000.0 + 26*1000 + 100*(570+2*26) + 10*(330+26)
	assert.InDelta(t, logBytes/(1<<30)*0.50*per, c.Logs, 1e-9)
	assert.InDelta(t, 100*0.05*5.00e-6*per, c.XRay, 1e-9)
	// Two schedules left to fire: each an invocation, an SQS message
	// sent, received and deleted, a worker invocation of 10 ms at 256 MB.
	assert.InDelta(t, 2*(1.00e-6+3*0.40e-6+0.20e-6+0.010*0.25*0.0000133334)*per, c.Timers, 1e-9)
	assert.Zero(t, c.Streams)
	assert.InDelta(t, c.DynamoDBWrites+c.DynamoDBReads+c.SQS+c.LambdaRequests+c.LambdaDuration+c.APIGateway+c.Logs+c.XRay+c.Timers, c.Total, 1e-9)
	assert.InDelta(t, 2.5+0.0625+0.13+0.02+0.04667+0.035+0.1364+0.025+0.0049, c.Total, 1e-3)
}

func TestEstimateCostWithoutSteps(t *testing.T) {
	assert.Equal(t, Cost{}, EstimateCost(Usage{DynamoDBWriteUnits: 10}, LogUsage{Bytes: 10}, nil, FunctionAPI, 0))
}

// TestLogMeter counts lines and bytes, and meteredLogs drops what a
// benchmark's own read logged.
func TestLogMeter(t *testing.T) {
	m := NewLogMeter()
	log := slog.New(meteredLogs{slog.NewJSONHandler(m, nil)})
	log.InfoContext(t.Context(), "counted")
	log.InfoContext(withoutMetering(t.Context()), "a status read's line")
	if _, err := m.Write([]byte("{\"a\":1}\n{\"b\":2}\n")); err != nil {
		t.Fatal(err)
	}
	u := m.Usage()
	assert.Equal(t, int64(3), u.Events)
	assert.Greater(t, u.Bytes, int64(16+len(`{"level":"INFO","msg":"counted"}`)))
	m.Reset()
	assert.Equal(t, LogUsage{}, m.Usage())
}
