package metering

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/pricing"
)

// clock is a test clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestLedgerTakeEmptiesAndNilRecordsNothing(t *testing.T) {
	l := New()
	l.Add(pricing.DynamoDBReadUnits, 1.5)
	l.AddUsage(pricing.Usage{pricing.DynamoDBReadUnits: 0.5, pricing.SNSRequests: 0.1})
	l.Add(pricing.SQSRequests, 0)
	got := l.Take()
	if len(got) != 2 || got[pricing.DynamoDBReadUnits] != 2 || got[pricing.SNSRequests] != 0.1 {
		t.Fatalf("Take = %v", got)
	}
	if again := l.Take(); again != nil {
		t.Errorf("second Take = %v, want nil", again)
	}
	// A correction that cancels what was added leaves nothing.
	l.Add(pricing.DynamoDBWriteUnits, 2)
	l.Add(pricing.DynamoDBWriteUnits, -2)
	if got := l.Take(); got != nil {
		t.Errorf("Take after a cancelling correction = %v", got)
	}
	var none *Ledger
	none.Add(pricing.DynamoDBReadUnits, 1)
	none.AddUsage(pricing.Usage{pricing.SNSRequests: 1})
	if got := none.Take(); got != nil {
		t.Errorf("nil ledger Take = %v", got)
	}
	if From(context.Background()) != nil {
		t.Error("a context without a ledger has one")
	}
	if From(With(context.Background(), l)) != l {
		t.Error("With/From lost the ledger")
	}
}

// TestInvocationApportionsItsTime: at each moment the invocation's time
// goes in equal parts to the ledgers in flight, so their shares sum to the
// time at least one was; each ledger bears its share of the request.
func TestInvocationApportionsItsTime(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	inv := NewInvocation(c.now, 1024, nil) // 1 GB: GB-seconds are seconds
	a := inv.Begin(0.5)
	c.add(2 * time.Second) // a alone: 2 s
	b := inv.Begin(0.5)
	c.add(2 * time.Second) // both: 1 s each
	inv.End(b)
	c.add(1 * time.Second) // a alone: 1 s
	ga := a.Take()
	if !near(ga[pricing.LambdaGBSeconds], 4) || ga[pricing.LambdaRequests] != 0.5 {
		t.Errorf("a = %v, want 4 GB-s and half the request", ga)
	}
	// b ended without taking: its second is dropped, not given to a.
	c.add(3 * time.Second)
	inv.End(a)
	if got := a.Take(); got != nil {
		t.Errorf("a after End = %v, want nothing", got)
	}
	if got := b.Take(); got[pricing.LambdaGBSeconds] != 0 || got[pricing.LambdaRequests] != 0.5 {
		t.Errorf("b = %v, want its request share only", got)
	}
}

// TestTailBillsTheAverageTimeAfterTheLastTake: a ledger's first Take
// bills the handler's average tail; End measures the ledger's own.
func TestTailBillsTheAverageTimeAfterTheLastTake(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tail := &Tail{}
	for i := range 3 {
		inv := NewInvocation(c.now, 1024, tail)
		l := inv.Begin(1)
		c.add(time.Second)
		got := l.Take()
		// The first message has no history; later ones bill the 2 s tails
		// measured before them.
		want := 1.0
		if i > 0 {
			want = 3
		}
		if !near(got[pricing.LambdaGBSeconds], want) {
			t.Errorf("message %d: took %v GB-s, want %v", i, got[pricing.LambdaGBSeconds], want)
		}
		c.add(2 * time.Second) // the tail after its last write
		inv.End(l)
	}
	if !near(tail.estimate(), 2) {
		t.Errorf("tail estimate %v, want 2", tail.estimate())
	}
	// A message that never took bills nothing and is not observed.
	inv := NewInvocation(c.now, 1024, tail)
	l := inv.Begin(1)
	c.add(10 * time.Second)
	inv.End(l)
	if !near(tail.estimate(), 2) {
		t.Errorf("tail estimate %v after a message without writes, want 2", tail.estimate())
	}
}

func TestSettleAndSum(t *testing.T) {
	total := pricing.Usage{pricing.DynamoDBWriteUnits: 10, pricing.SNSRequests: 1}
	got := Settle(total, pricing.Usage{pricing.DynamoDBWriteUnits: -3, pricing.SNSRequests: -5, "nonsense": 4, pricing.SQSRequests: 2})
	if len(got) != 2 || got[pricing.DynamoDBWriteUnits] != 7 || got[pricing.SQSRequests] != 2 {
		t.Errorf("Settle = %v: a part below zero is dropped, unknown parts too", got)
	}
	if total[pricing.DynamoDBWriteUnits] != 10 {
		t.Error("Settle changed its argument")
	}
	if got := Settle(nil, pricing.Usage{pricing.SNSRequests: math.NaN()}); got != nil {
		t.Errorf("Settle of NaN = %v", got)
	}
	if got := Sum(pricing.Usage{pricing.SNSRequests: 1}, nil, pricing.Usage{pricing.SNSRequests: -1}); got != nil {
		t.Errorf("Sum to zero = %v, want nil", got)
	}
	if got := Sum(pricing.Usage{pricing.SNSRequests: 1}, pricing.Usage{pricing.SQSRequests: 2}); len(got) != 2 {
		t.Errorf("Sum = %v", got)
	}
}

func TestMarkers(t *testing.T) {
	ctx := context.Background()
	if IsUnmetered(ctx) {
		t.Error("plain context unmetered")
	}
	if !IsUnmetered(Unmetered(ctx)) {
		t.Error("Unmetered lost")
	}
	u := pricing.Usage{pricing.DynamoDBWriteUnits: 3}
	if got, ok := PrechargedFrom(Precharged(ctx, u)); !ok || got[pricing.DynamoDBWriteUnits] != 3 {
		t.Errorf("PrechargedFrom = %v, %v", got, ok)
	}
	if _, ok := PrechargedFrom(ctx); ok {
		t.Error("plain context precharged")
	}
}
