// Package metering attributes what the orchestrator's own work is billed
// for to the run it was done for: a Ledger rides in the context of the
// handling of one message or request, the AWS SDK middleware of package
// metering/awsmeter adds each call's billed units to it, and the store
// moves what the ledger holds into the run's record with the next write
// it makes for the run (a commit, an inbox event, a creation). It imports
// nothing from AWS.
package metering

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/pricing"
)

// Invocation apportions a Lambda invocation among the ledgers of the
// messages (or the request) it handles: at every moment its duration is
// billed in equal parts to the ledgers then in flight (Begin to End), so
// that their shares sum to the time at least one was in flight. It is
// safe for concurrent use.
type Invocation struct {
	mu       sync.Mutex
	memoryMB int
	tail     *Tail
	now      func() time.Time
	last     time.Time
	// accrued holds the GB-seconds each ledger in flight, or ended and
	// not yet taken, has been billed since its last Take.
	accrued  map[*Ledger]float64
	inFlight map[*Ledger]bool
}

// NewInvocation returns the apportioner of an invocation of a function of
// memoryMB, reading the time from now (time.Now when nil). With tail, a
// ledger's first Take bills the estimate of its time after its last Take
// (Tail), which End then measures.
func NewInvocation(now func() time.Time, memoryMB int, tail *Tail) *Invocation {
	if now == nil {
		now = time.Now
	}
	return &Invocation{memoryMB: memoryMB, tail: tail, now: now, last: now(), accrued: map[*Ledger]float64{}, inFlight: map[*Ledger]bool{}}
}

// Tail estimates the time a handler's message is billed after the last
// write made for its run (its ledger's last Take): the committer's sends
// of the work its commit caused, its answer. No later write carries it,
// so each message's first Take bills the average tail of the handler's
// earlier messages instead (an exponentially weighted mean). A handler
// keeps one across its invocations. It is safe for concurrent use.
type Tail struct {
	mu   sync.Mutex
	mean float64
	n    int
}

// tailWeight is the weight of a new observation once tailWarmup were
// seen (a plain mean before).
const (
	tailWeight = 0.05
	tailWarmup = 20
)

func (t *Tail) observe(gbs float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	w := max(tailWeight, 1/float64(t.n))
	t.mean += w * (gbs - t.mean)
}

func (t *Tail) estimate() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mean
}

// Begin returns the ledger of one message, in flight from now on, billed
// requestShare of the invocation's request (1/messages of the batch).
func (inv *Invocation) Begin(requestShare float64) *Ledger {
	l := &Ledger{u: map[string]float64{}, inv: inv}
	if requestShare > 0 {
		l.u[pricing.LambdaRequests] = requestShare
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.advance()
	inv.inFlight[l] = true
	inv.accrued[l] = 0
	return l
}

// End takes l out of flight: the invocation's time from now on is the
// others'. What l accrued and did not take is dropped.
func (inv *Invocation) End(l *Ledger) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.advance()
	if inv.tail != nil && l.taken {
		inv.tail.observe(inv.accrued[l])
	}
	delete(inv.inFlight, l)
	delete(inv.accrued, l)
}

// advance bills the time since the last event to the ledgers in flight.
func (inv *Invocation) advance() {
	now := inv.now()
	if d := now.Sub(inv.last); d > 0 && len(inv.inFlight) > 0 && inv.memoryMB > 0 {
		each := d.Seconds() * float64(inv.memoryMB) / 1024 / float64(len(inv.inFlight))
		for l := range inv.inFlight {
			inv.accrued[l] += each
		}
	}
	inv.last = now
}

// take returns the GB-seconds l accrued since its last take.
func (inv *Invocation) take(l *Ledger) float64 {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.advance()
	gbs := inv.accrued[l]
	if _, ok := inv.accrued[l]; ok {
		inv.accrued[l] = 0
	}
	if inv.tail != nil && !l.taken {
		gbs += inv.tail.estimate()
	}
	l.taken = true
	return gbs
}

// Ledger accumulates billed quantities by pricing part. Counts may be
// negative (a correction of what was charged in advance). A nil *Ledger
// records nothing. It is safe for concurrent use.
type Ledger struct {
	mu  sync.Mutex
	u   map[string]float64
	inv *Invocation
	// taken is set by the ledger's first Take (guarded by inv.mu).
	taken bool
}

// New returns an empty ledger that bills no invocation.
func New() *Ledger {
	return &Ledger{u: map[string]float64{}}
}

// Add adds n of part.
func (l *Ledger) Add(part string, n float64) {
	if l == nil || n == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.u[part] += n
}

// AddUsage adds every count of u.
func (l *Ledger) AddUsage(u pricing.Usage) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range u {
		l.u[k] += v
	}
}

// Take returns what the ledger holds, with its invocation's duration
// since the last Take, and empties it. A write that fails after taking
// gives it back (AddUsage). Nil when there is nothing.
func (l *Ledger) Take() pricing.Usage {
	if l == nil {
		return nil
	}
	var gbs float64
	if l.inv != nil {
		gbs = l.inv.take(l)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if gbs > 0 {
		l.u[pricing.LambdaGBSeconds] += gbs
	}
	if len(l.u) == 0 {
		return nil
	}
	out := make(pricing.Usage, len(l.u))
	for k, v := range l.u {
		if v != 0 {
			out[k] = v
		}
	}
	clear(l.u)
	if len(out) == 0 {
		return nil
	}
	return out
}

type ledgerKey struct{}

// With returns ctx carrying l: the work done with it is billed to l.
func With(ctx context.Context, l *Ledger) context.Context {
	return context.WithValue(ctx, ledgerKey{}, l)
}

// From returns the ledger ctx carries, or nil.
func From(ctx context.Context) *Ledger {
	l, _ := ctx.Value(ledgerKey{}).(*Ledger)
	return l
}

type unmeteredKey struct{}

// Unmetered returns ctx for calls whose usage the caller has charged in
// advance as an estimate it does not correct (a committer's dispatch of
// its commit's messages, see store's afterCommit): the meter skips them.
func Unmetered(ctx context.Context) context.Context {
	return context.WithValue(ctx, unmeteredKey{}, true)
}

// IsUnmetered reports whether ctx's calls are left out (Unmetered).
func IsUnmetered(ctx context.Context) bool {
	v, _ := ctx.Value(unmeteredKey{}).(bool)
	return v
}

type prechargedKey struct{}

// Precharged returns ctx for a call whose usage u the caller has already
// charged (a commit that records its own write units): the meter adds only
// the difference between what the call is billed and u.
func Precharged(ctx context.Context, u pricing.Usage) context.Context {
	return context.WithValue(ctx, prechargedKey{}, u)
}

// PrechargedFrom returns what Precharged charged in advance for ctx's
// call, and whether it did.
func PrechargedFrom(ctx context.Context) (pricing.Usage, bool) {
	u, ok := ctx.Value(prechargedKey{}).(pricing.Usage)
	return u, ok
}

// Sum returns the signed sum of us, parts with a zero count left out
// (nil when nothing is left).
func Sum(us ...pricing.Usage) pricing.Usage {
	var out pricing.Usage
	for _, u := range us {
		for k, v := range u {
			if v == 0 {
				continue
			}
			if out == nil {
				out = pricing.Usage{}
			}
			out[k] += v
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Settle adds the signed counts of delta to a copy of total and returns
// it; a part that would fall below zero is kept at zero (a correction
// larger than what it corrects). Parts pricing does not know are dropped.
func Settle(total, delta pricing.Usage) pricing.Usage {
	out := pricing.Usage{}
	for k, v := range total {
		if v > 0 && pricing.KindOf(k) != "" {
			out[k] = v
		}
	}
	for k, v := range delta {
		if pricing.KindOf(k) == "" || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if n := out[k] + v; n > 0 {
			out[k] = n
		} else {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
