package orchestrator

import (
	"slices"
	"testing"
)

// TestIterationRanks: Maestro's length-prefixed encoding of iteration ids,
// which sorts as the numbers do, and its decoding, which refuses what it
// did not write.
func TestIterationRanks(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{1, "11"}, {9, "19"}, {10, "210"}, {344, "3344"}, {123456789, "9123456789"}, {1234567890, "A1234567890"}, {12345678901, "B12345678901"}} {
		if got := encodeRankPart(c.n); got != c.want {
			t.Errorf("encodeRankPart(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	ids := []int64{1, 2, 9, 10, 11, 99, 100, 1_000_000_000, 9_999_999_999, 10_000_000_000}
	for i := 1; i < len(ids); i++ {
		if a, b := encodeRankPart(ids[i-1]), encodeRankPart(ids[i]); a >= b {
			t.Errorf("%q (%d) does not sort before %q (%d)", a, ids[i-1], b, ids[i])
		}
	}
	if got := encodeRank([]int64{344, 3, 23}); got != "3344-13-223" {
		t.Errorf("encodeRank = %q", got)
	}
	if got, err := decodeRank("3344-13-223"); err != nil || !slices.Equal(got, []int64{344, 3, 23}) {
		t.Errorf("decodeRank = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1", "13-", "344", "2x4", "10", "1-1", "3344--13", "20"} {
		if got, err := decodeRank(bad); err == nil {
			t.Errorf("decodeRank(%q) = %v, want an error", bad, got)
		}
	}
	for v, want := range map[any]string{"a b": "a b", int64(-3): "-3", 1.0: "1.0", 2.5: "2.5", true: "true", 1e300: "1e+300"} {
		if got := loopValueString(v); got != want {
			t.Errorf("loopValueString(%v) = %q, want %q", v, got, want)
		}
	}
}
