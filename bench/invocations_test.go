package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvocationsCountBatches(t *testing.T) {
	calls := NewInvocations()
	var seen int
	sqsH := calls.SQS("worker", func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		seen += len(ev.Records)
		return events.SQSEventResponse{}, nil
	})
	streamH := calls.Stream("router", func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{}, nil
	})
	ctx := context.Background()
	_, err := sqsH(ctx, events.SQSEvent{Records: make([]events.SQSMessage, 3)})
	require.NoError(t, err)
	_, err = sqsH(ctx, events.SQSEvent{}) // empty: Lambda never delivers it
	require.NoError(t, err)
	_, err = sqsH(ctx, events.SQSEvent{Records: make([]events.SQSMessage, 2)})
	require.NoError(t, err)
	_, err = streamH(ctx, events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, 7)})
	require.NoError(t, err)

	u := calls.Usage()
	assert.Equal(t, 5, seen)
	assert.Equal(t, int64(2), u["worker"].Invocations)
	assert.Equal(t, int64(5), u["worker"].Records)
	assert.Equal(t, int64(1), u["router"].Invocations)
	assert.Equal(t, int64(7), u["router"].Records)
	assert.GreaterOrEqual(t, u["worker"].BilledMillis, int64(2), "each invocation bills at least 1 ms")

	calls.Reset()
	assert.Empty(t, calls.Usage())
}

func TestInvocationsHTTPLeavesReadsOut(t *testing.T) {
	calls := NewInvocations()
	var metered []bool
	h := calls.HTTP(FunctionAPI, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metered = append(metered, !unmetered(r.Context()))
	}))
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodPut} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/x", nil))
	}
	assert.Equal(t, []bool{true, false, true}, metered)
	assert.Equal(t, int64(2), calls.Usage()[FunctionAPI].Invocations)
}
