package orchestrator

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// heavyDefinition is a definition of about size bytes of JSON, made of
// steps whose params are expressions (what costs most memory compiled)
// and literals.
func heavyDefinition(id string, size int) []byte {
	var steps []string
	total := 0
	for i := 0; total < size; i++ {
		s := fmt.Sprintf(`{"step":{"id":"s%d","type":"NoOp","params":{"e":{"type":"LONG","expression":"%s%d"},`+
			`"l":{"type":"STRING","value":"%s"},"c":{"type":"BOOLEAN","expression":"step_id matches '^s[0-9]+$' && %d > 0"}}}}`,
			i, strings.Repeat("1 + ", 40), i, strings.Repeat("v", 200), i)
		steps = append(steps, s)
		total += len(s)
	}
	return []byte(`{"properties":{"owner":"cache"},"workflow":{"id":"` + id + `","steps":[` + strings.Join(steps, ",") + `]}}`)
}

// TestGraphBytesEstimate: what a compiled version is estimated to hold is
// close to the heap it holds, so the cache's bound is a bound on memory.
func TestGraphBytesEstimate(t *testing.T) {
	const n = 8
	data := make([][]byte, n)
	for i := range data {
		data[i] = heavyDefinition(fmt.Sprintf("wf%d", i), 115_000)
	}
	kept := make([]compiled, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range data {
		// A language per version: no program shared through its cache.
		eval := engine.NewEvaluator(expression.New(expression.DefaultLimits()))
		def, err := model.ParseDefinition(data[i])
		if err != nil {
			t.Fatal(err)
		}
		g, err := engine.Compile(def.Workflow, eval)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, compiled{graph: g, def: def, bytes: g.Bytes() + definitionBytesPerJSONByte*int64(len(data[i]))})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc-before.HeapAlloc) / n
	est := float64(kept[0].bytes)
	t.Logf("a 115 KB version holds %.1f MiB, estimated %.1f MiB", held/(1<<20), est/(1<<20))
	if est < 0.8*held || est > 2*held {
		t.Fatalf("estimated %.0f bytes, holds %.0f", est, held)
	}
	runtime.KeepAlive(kept)
}

// TestGraphCacheIsBoundedByBytes: the cache never holds more than its
// bound, however many versions pass through it, and keeps what fits.
func TestGraphCacheIsBoundedByBytes(t *testing.T) {
	c := newGraphCache(1000)
	for v := int64(1); v <= 50; v++ {
		c.put(graphKey{"wf", v}, compiled{bytes: 90})
		if c.bytes > 1000 {
			t.Fatalf("holds %d bytes", c.bytes)
		}
		if _, ok := c.get(graphKey{"wf", v}); !ok {
			t.Fatalf("version %d not kept", v)
		}
	}
	c.put(graphKey{"wf", 51}, compiled{bytes: 251}) // over a quarter: not kept
	if _, ok := c.get(graphKey{"wf", 51}); ok {
		t.Fatal("an entry over a quarter of the bound was kept")
	}
	c.put(graphKey{"wf", 50}, compiled{bytes: 90}) // replacing counts once
	if c.bytes%90 != 0 {
		t.Fatalf("holds %d bytes", c.bytes)
	}
}
