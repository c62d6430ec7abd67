package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Summary describes a sample of durations in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	// P99 is set only for a sample of at least MinP99Samples (absent from
	// the JSON otherwise): the 99th percentile of fewer is its largest
	// value or one of the few below it, Max says it plainly.
	P99  float64 `json:"p99_ms,omitempty"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// MinP99Samples is the smallest sample a Summary gives a p99 for.
const MinP99Samples = 200

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// values: the smallest value such that at least p percent of the sample
// is less than or equal to it. values need not be sorted; an empty sample
// gives NaN.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 || p <= 0 || p > 100 || math.IsNaN(p) {
		return math.NaN()
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return nearestRank(sorted, p)
}

func nearestRank(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(rank, 1)
	return sorted[min(rank, len(sorted))-1]
}

// Summarize returns the count, p50, max and mean of values, and their p99
// when there are at least MinP99Samples. An empty sample gives a zero
// Summary.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	s := Summary{
		Count: len(sorted),
		P50:   nearestRank(sorted, 50),
		Max:   sorted[len(sorted)-1],
		Mean:  sum / float64(len(sorted)),
	}
	if len(sorted) >= MinP99Samples {
		s.P99 = nearestRank(sorted, 99)
	}
	return s
}

// interval is a span of time in unix milliseconds, from <= to.
type interval struct{ from, to float64 }

// covered returns how long (ms) at least one of spans is open: the length of
// their union.
func covered(spans []interval) float64 {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var total, end float64
	for i, s := range spans {
		switch {
		case i == 0 || s.from > end:
			total += s.to - s.from
			end = s.to
		case s.to > end:
			total += s.to - end
			end = s.to
		}
	}
	return total
}

// P99Text is s's p99 for a report, or "max" and its largest value when the
// sample is too small for a p99.
func (s Summary) P99Text() string {
	if s.Count < MinP99Samples {
		return fmt.Sprintf("max %.1f", s.Max)
	}
	return fmt.Sprintf("%.1f", s.P99)
}
