package orchestrator

import (
	"math"
	"testing"
)

// TestRoundBudgetHalves: a round whose commit the store found too large is
// retried with half the events, starts and ends, down to one event deciding
// one step.
func TestRoundBudgetHalves(t *testing.T) {
	b := fullRound()
	if b.events != math.MaxInt || b.starts != maxStartsPerDecision || b.ends != maxEndsPerDecision {
		t.Fatalf("full round %+v", b)
	}
	var seen []roundBudget
	for {
		next, ok := b.halve()
		if !ok {
			break
		}
		seen = append(seen, next)
		b = next
		if len(seen) > 20 {
			t.Fatal("halving does not end")
		}
	}
	if b != (roundBudget{events: 1, starts: 1, ends: 1}) {
		t.Fatalf("last budget %+v, want one event, one start, one end", b)
	}
	if seen[0] != (roundBudget{events: 32, starts: maxStartsPerDecision / 2, ends: maxEndsPerDecision / 2}) {
		t.Errorf("first halving %+v", seen[0])
	}
}
