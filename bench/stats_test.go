package bench

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100..1, unsorted on purpose
	}
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"single", []float64{7}, 50, 7},
		{"single p99", []float64{7}, 99, 7},
		{"even count p50 is lower middle", []float64{4, 1, 3, 2}, 50, 2},
		{"odd count p50 is middle", []float64{5, 1, 3}, 50, 3},
		{"p100 is max", []float64{5, 1, 3}, 100, 5},
		{"tiny p is min", []float64{5, 1, 3}, 1, 1},
		{"1..100 p50", hundred, 50, 50},
		{"1..100 p99", hundred, 99, 99},
		{"1..100 p99.5", hundred, 99.5, 100},
		{"ten values p99 is max", []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, 99, 9},
		{"ten values p90", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{"negative values", []float64{-3, -1, -2}, 50, -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Percentile(tt.values, tt.p))
		})
	}
}

func TestPercentileRejects(t *testing.T) {
	for _, p := range []float64{0, -1, 101, math.NaN()} {
		assert.True(t, math.IsNaN(Percentile([]float64{1, 2}, p)), "p=%v", p)
	}
	assert.True(t, math.IsNaN(Percentile(nil, 50)))
}

func TestPercentileLeavesInputAlone(t *testing.T) {
	in := []float64{3, 1, 2}
	Percentile(in, 50)
	assert.Equal(t, []float64{3, 1, 2}, in)
}

func TestSummarize(t *testing.T) {
	twoHundred := make([]float64, 200)
	for i := range twoHundred {
		twoHundred[i] = float64(200 - i) // 200 .. 1
	}
	tests := []struct {
		name   string
		values []float64
		want   Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{4}, Summary{Count: 1, P50: 4, Max: 4, Mean: 4}},
		{"several, no p99 under 200", []float64{10, 0, 2, 4}, Summary{Count: 4, P50: 2, Max: 10, Mean: 4}},
		{"200, a p99", twoHundred, Summary{Count: 200, P50: 100, P99: 198, Max: 200, Mean: 100.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Summarize(tt.values))
		})
	}
	assert.Equal(t, "max 10.0", Summarize([]float64{10, 0, 2, 4}).P99Text())
	assert.Equal(t, "198.0", Summarize(twoHundred).P99Text())
}

func TestCovered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []interval
		want  float64
	}{
		{"none", nil, 0},
		{"one", []interval{{10, 30}}, 20},
		{"apart, the gap left out", []interval{{0, 10}, {50, 70}}, 30},
		{"overlapping, out of order", []interval{{20, 40}, {0, 30}}, 40},
		{"nested", []interval{{0, 100}, {10, 20}, {30, 40}}, 100},
		{"touching", []interval{{0, 10}, {10, 25}}, 25},
		{"a long one spans the next two", []interval{{0, 50}, {5, 10}, {45, 60}, {80, 90}}, 70},
	} {
		if got := covered(tc.spans); got != tc.want {
			t.Errorf("%s: covered(%v) = %v, want %v", tc.name, tc.spans, got, tc.want)
		}
	}
}
