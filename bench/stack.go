package bench

import "time"

// Function names under which the handlers' invocations are counted.
const (
	FunctionAPI     = "api"
	FunctionRouter  = "router"
	FunctionDecider = "decider"
	FunctionWorker  = "worker"
)

// sqsWaitTime is the SQS pumps' long-poll wait in the local stack; the
// bench waits at least this long for the system to go quiet.
const sqsWaitTime = time.Second
