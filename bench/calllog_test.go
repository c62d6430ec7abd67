package bench

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallLogGaps: the gap of an edge runs from the upstream call's answer
// to the downstream call's arrival, from the last upstream of a fan-in; a
// step that never called is an error; instances of other workflows with the
// same id and step ids do not count.
func TestCallLogGaps(t *testing.T) {
	l := NewCallLog()
	t0 := time.UnixMilli(1_800_000_000_000)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	l.calls["w/7/a"] = call{at(0), at(10)}
	l.calls["w/7/b"] = call{at(40), at(45)}
	l.calls["w/7/c"] = call{at(20), at(30)}
	l.calls["w/7/d"] = call{at(100), at(101)}
	l.calls["other/7/a"] = call{at(-500), at(-400)}
	gaps, first, err := l.Gaps("w", 7, map[string][]string{"b": {"a"}, "d": {"b", "c"}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []float64{30, 55}, gaps)
	assert.Equal(t, at(0), first)
	_, _, err = l.Gaps("w", 8, map[string][]string{"b": {"a"}})
	assert.ErrorContains(t, err, "w instance 8 step b never called")
	_, _, err = l.Gaps("other", 7, map[string][]string{"b": {"a"}})
	assert.ErrorContains(t, err, "other instance 7 step b never called")

	// The handler records a call by its path, once.
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest("GET", "/w/9/x", nil))
	assert.JSONEq(t, `{"ok": true}`, rec.Body.String())
	assert.Contains(t, l.calls, "w/9/x")

	// Count says how many paths were called and how many calls repeated one.
	paths, repeats := l.Count()
	l.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/w/9/x", nil))
	l.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/w/10/x", nil))
	p, r := l.Count()
	assert.Equal(t, []int{paths + 1, repeats + 1}, []int{p, r}, "one new path, one repeat")
}
