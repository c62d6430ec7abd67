package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

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

func TestCallClockModelsDurationOnAWS(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name  string
		calls [][2]int // begin, end in ms from t0
		svc   []string
		d     int // the invocation's duration here, ms
		want  time.Duration
	}{
		{name: "no calls", d: 12, want: 12 * time.Millisecond},
		{name: "a slow DynamoDB call", calls: [][2]int{{2, 2002}}, svc: []string{"DynamoDB"}, d: 2010,
			want: 10*time.Millisecond + 5*time.Millisecond},
		{name: "side by side: in flight 0-300 once, each call charged", calls: [][2]int{{0, 200}, {100, 300}},
			svc: []string{"DynamoDB", "SQS"}, d: 300, want: 5*time.Millisecond + 20*time.Millisecond},
		{name: "one after the other", calls: [][2]int{{0, 1}, {5, 6}}, svc: []string{"DynamoDB", "DynamoDB"}, d: 10,
			want: 8*time.Millisecond + 10*time.Millisecond},
		{name: "a call outliving the handler counts to its end", calls: [][2]int{{4, -1}}, svc: []string{"SNS"}, d: 10,
			want: 4 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := withCallClock(context.Background())
			type ev struct {
				at    int
				begin bool
				svc   string
			}
			var evs []ev
			for i, call := range tc.calls {
				evs = append(evs, ev{call[0], true, tc.svc[i]})
				if call[1] >= 0 {
					evs = append(evs, ev{call[1], false, tc.svc[i]})
				}
			}
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
			for _, e := range evs {
				if e.begin {
					c.begin(at(e.at))
				} else {
					c.end(at(e.at), e.svc)
				}
			}
			assert.Equal(t, tc.want, c.modelled(time.Duration(tc.d)*time.Millisecond, at(tc.d)))
		})
	}
}

func TestInvocationsTimeTheHandlersCalls(t *testing.T) {
	calls := NewInvocations()
	now := time.Unix(1000, 0)
	calls.now = func() time.Time { return now }
	h := calls.SQS("worker", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		c := callClockFrom(ctx)
		require.NotNil(t, c, "the handler's context carries its invocation's clock")
		// A call the emulator answers in 30 ms: 5 ms on AWS.
		c.begin(now)
		now = now.Add(30 * time.Millisecond)
		c.end(now, "DynamoDB")
		return events.SQSEventResponse{}, nil
	})
	_, err := h(context.Background(), events.SQSEvent{Records: make([]events.SQSMessage, 1)})
	require.NoError(t, err)
	u := calls.Usage()["worker"]
	assert.GreaterOrEqual(t, u.BilledMillis, int64(30))
	assert.Less(t, u.ModelledMillis, u.BilledMillis-20, "the emulator's 30 ms are billed as 5")
	assert.GreaterOrEqual(t, u.ModelledMillis, int64(5))
}
