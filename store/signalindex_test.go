package store

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// indexValues are LONG and STRING values around the encodings' edges.
func indexValues(r *rand.Rand) []any {
	long := strings.Repeat("x", layout.IndexedStringBytes)
	vals := []any{
		int64(0), int64(1), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64 - 1),
		int64(1 << 53), int64(1<<53 + 1), int64(-(1 << 53) - 1), int64(20260101), int64(255), int64(256),
		"", "a", "ab", "abc", "b", "#", "$", "%", "~", "Z", "é", "日本", "a\x00b", long, long + "a", long + "b",
		long[:layout.IndexedStringBytes-1], long[:layout.IndexedStringBytes-1] + "y", long + long, "20260101",
	}
	for range 200 {
		if r.IntN(2) == 0 {
			vals = append(vals, int64(r.Uint64()))
			continue
		}
		b := make([]byte, r.IntN(2*layout.IndexedStringBytes))
		for i := range b {
			b[i] = "ab\x00\xff#$"[r.IntN(6)]
		}
		vals = append(vals, string(b))
	}
	return vals
}

// TestSignalIndexKeysOrderLikeValues: the sort keys of exact values order
// as the values compare, LONGs before STRINGs, and truncated strings never
// order against the values they differ from.
func TestSignalIndexKeysOrderLikeValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := indexValues(r)
	for _, a := range vals {
		ka, err := layout.SignalIndexSK(a, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range vals {
			kb, _ := layout.SignalIndexSK(b, 7)
			_, aLong := a.(int64)
			_, bLong := b.(int64)
			if aLong != bLong {
				if (ka < kb) != aLong {
					t.Fatalf("LONG/STRING keys interleave: %q vs %q", ka, kb)
				}
				continue
			}
			less := signals.Compare(model.OpLess, a, b)
			eq := signals.Compare(model.OpEqual, a, b)
			_, ea, _ := layout.IndexValue(a)
			_, eb, _ := layout.IndexValue(b)
			switch {
			case eq && ka != kb:
				t.Fatalf("equal values %q and %q have keys %q and %q", a, b, ka, kb)
			case ea && eb && less && ka >= kb:
				t.Fatalf("%q < %q but key %q >= %q", a, b, ka, kb)
			case ea && !eb && less && ka >= kb:
				t.Fatalf("%q < %q (truncated) but key %q >= %q", a, b, ka, kb)
			}
		}
	}
}

// inRange reports whether sk satisfies a key condition built by indexRange.
func inRange(t *testing.T, cond string, values map[string]types.AttributeValue, sk string) bool {
	t.Helper()
	s := func(k string) string { return values[k].(*types.AttributeValueMemberS).Value }
	switch cond {
	case "begins_with(sk, :p)":
		return strings.HasPrefix(sk, s(":p"))
	case "sk BETWEEN :lo AND :hi":
		return s(":lo") <= sk && sk <= s(":hi")
	}
	t.Fatalf("unknown key condition %q", cond)
	return false
}

// TestSignalIndexRangesHoldEveryMatch: for every operator and value, the key
// range a lookup reads holds every stored value that satisfies the
// condition; for exact values and LONGs it holds nothing else.
func TestSignalIndexRangesHoldEveryMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := indexValues(r)
	ops := []model.SignalOperator{model.OpEqual, model.OpGreater, model.OpGreaterEqual, model.OpLess, model.OpLessEqual}
	for _, want := range vals {
		for _, op := range ops {
			cond, values, ok, err := indexRange(signals.Condition{Param: "p", Op: op, Value: want})
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range vals {
				sk, _ := layout.SignalIndexSK(got, 42)
				match := signals.Compare(op, got, want)
				in := ok && inRange(t, cond, values, sk)
				if match && !in {
					t.Fatalf("%v %s %v holds but key %q is outside %s %v", got, op, want, sk, cond, values)
				}
				_, exactGot, _ := layout.IndexValue(got)
				_, exactWant, _ := layout.IndexValue(want)
				if in && !match && exactGot && exactWant {
					t.Fatalf("%v %s %v does not hold but key %q is inside %s", got, op, want, sk, cond)
				}
			}
		}
	}
}

func TestSignalIndexRejectsOtherTypes(t *testing.T) {
	if _, err := layout.SignalIndexSK(1.5, 1); err == nil {
		t.Fatal("a DOUBLE value was indexed")
	}
	if _, _, _, err := indexRange(signals.Condition{Param: "p", Op: model.OpEqual, Value: true}); err == nil {
		t.Fatal("a BOOLEAN condition built a key range")
	}
}
