package bench

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// CallLog is the Http steps' server: it answers every call at once and
// records, per "<workflow id>/<instance id>/<step id>" path, when the call arrived and
// when its answer was written, so that the gap between a step's call
// returning and its successor's call arriving — what a user of the
// orchestrator waits for between two steps — is measured at the edge, the
// same measure as Temporal's end(i) → start(i+1). It is safe for
// concurrent use.
type CallLog struct {
	mu    sync.Mutex
	calls map[string]call
	// repeats counts the calls to a path already called.
	repeats int
}

type call struct{ in, out time.Time }

// NewCallLog returns an empty log.
func NewCallLog() *CallLog { return &CallLog{calls: map[string]call{}} }

// ServeHTTP answers {"ok": true} and records the call.
func (l *CallLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in := time.Now()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok": true}`)
	out := time.Now()
	k := strings.Trim(r.URL.Path, "/")
	l.mu.Lock()
	if _, seen := l.calls[k]; !seen { // a repeated call keeps the first
		l.calls[k] = call{in, out}
	} else {
		l.repeats++
	}
	l.mu.Unlock()
}

// Count returns how many paths were called and how many calls repeated a
// path already called.
func (l *CallLog) Count() (paths, repeats int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls), l.repeats
}

// Gaps returns, for one instance of workflow wf, the milliseconds from each upstream
// step's call returning to its downstream step's call arriving (for a
// fan-in, from the last upstream), and the time its first call arrived.
func (l *CallLog) Gaps(wf string, instance int64, ups map[string][]string) (gaps []float64, first time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	get := func(step string) (call, error) {
		c, ok := l.calls[fmt.Sprintf("%s/%d/%s", wf, instance, step)]
		if !ok {
			return call{}, fmt.Errorf("bench: %s instance %d step %s never called the server", wf, instance, step)
		}
		return c, nil
	}
	for down, us := range ups {
		d, err := get(down)
		if err != nil {
			return nil, time.Time{}, err
		}
		var last time.Time
		for _, u := range us {
			c, err := get(u)
			if err != nil {
				return nil, time.Time{}, err
			}
			if c.out.After(last) {
				last = c.out
			}
		}
		gaps = append(gaps, float64(d.in.Sub(last).Microseconds())/1000)
	}
	prefix := fmt.Sprintf("%s/%d/", wf, instance)
	for k, c := range l.calls {
		if strings.HasPrefix(k, prefix) && (first.IsZero() || c.in.Before(first)) {
			first = c.in
		}
	}
	return gaps, first, nil
}
