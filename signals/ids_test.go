package signals

import (
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTriggerRequestID(t *testing.T) {
	m := map[string]Signal{
		"signal_a": sig("signal_a", 7, map[string]any{"x": "1"}),
		"signal_b": sig("signal_b", 3, nil),
	}
	id := TriggerRequestID("wf", 0, m, "")
	u, err := uuid.Parse(id)
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(5), u.Version())

	// Same match, built apart, with other params or payload: same id.
	same := map[string]Signal{
		"signal_b": {Name: "signal_b", Seq: 3, Payload: map[string]any{"p": 1}},
		"signal_a": {Name: "signal_a", Seq: 7},
	}
	assert.Equal(t, id, TriggerRequestID("wf", 0, same, ""))

	// Anything else that differs gives another id.
	distinct := []string{
		id,
		TriggerRequestID("wf2", 0, m, ""),
		TriggerRequestID("wf", 1, m, ""),
		TriggerRequestID("wf", 0, map[string]Signal{"signal_a": m["signal_a"]}, ""),
		TriggerRequestID("wf", 0, map[string]Signal{"signal_a": m["signal_a"], "signal_b": sig("signal_b", 4, nil)}, ""),
		TriggerRequestID("wf", 0, map[string]Signal{"signal_a": sig("signal_a", 3, nil), "signal_b": sig("signal_b", 7, nil)}, ""),
		TriggerRequestID("wf", 0, m, "dedup-1"),
		TriggerRequestID("wf", 0, m, "dedup-2"),
		TriggerRequestID("wf", 1, m, "dedup-1"),
		// Length prefixes keep field boundaries apart.
		TriggerRequestID("w", 0, map[string]Signal{"f": sig("f", 1, nil)}, ""),
		TriggerRequestID("wf", 0, map[string]Signal{"a": sig("a", 12, nil)}, ""),
		TriggerRequestID("wf", 0, map[string]Signal{"a1": sig("a1", 2, nil)}, ""),
	}
	seen := map[string]int{}
	for i, d := range distinct {
		if j, dup := seen[d]; dup {
			t.Errorf("ids %d and %d are equal: %s", j, i, d)
		}
		seen[d] = i
	}

	// With a dedup value the signals do not count.
	other := map[string]Signal{"signal_a": sig("signal_a", 99, nil)}
	assert.Equal(t, TriggerRequestID("wf", 0, m, "d"), TriggerRequestID("wf", 0, other, "d"))
}

// TestTriggerRequestIDConcurrent: 100 concurrent completions of the same
// match name one start, and 100 different matches name 100 starts.
func TestTriggerRequestIDConcurrent(t *testing.T) {
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := int64(1)
			if i%2 == 1 {
				seq = int64(1000 + i)
			}
			m := map[string]Signal{"a": sig("a", seq, nil), "b": sig("b", 1, nil)}
			id := TriggerRequestID("wf", 0, m, "")
			mu.Lock()
			ids[id]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Len(t, ids, 101)
	assert.Equal(t, 100, ids[TriggerRequestID("wf", 0, map[string]Signal{"a": sig("a", 1, nil), "b": sig("b", 1, nil)}, "")])
}
