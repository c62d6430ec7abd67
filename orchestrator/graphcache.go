package orchestrator

import (
	"sync"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// graphCacheBytes bounds the estimated memory of the compiled versions an
// Orchestrator keeps: 64 MiB, whatever their number.
const graphCacheBytes = 64 << 20

// definitionBytesPerJSONByte is how much memory a decoded definition holds
// per byte of its JSON (maps, slices and strings of the model).
const definitionBytesPerJSONByte = 4

// compiled is a stored version ready to run.
type compiled struct {
	graph *engine.Graph
	def   *model.Definition
	// bytes estimates what the entry holds: the graph's compiled
	// expressions and the decoded definition.
	bytes int64
}

type graphKey struct {
	workflowID string
	version    int64
}

// graphCache keeps compiled versions, bounded by their estimated bytes:
// versions are immutable, so entries need no invalidation, and when one
// more would pass the bound the cache starts over. It is safe for
// concurrent use.
type graphCache struct {
	mu      sync.Mutex
	limit   int64
	bytes   int64
	entries map[graphKey]compiled
}

func newGraphCache(limit int64) *graphCache {
	return &graphCache{limit: limit, entries: make(map[graphKey]compiled)}
}

func (c *graphCache) get(k graphKey) (compiled, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e, ok
}

// put keeps e unless it alone is over a quarter of the bound.
func (c *graphCache) put(k graphKey, e compiled) {
	if e.bytes > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[k]; ok {
		c.bytes -= old.bytes
	}
	if c.bytes+e.bytes > c.limit {
		clear(c.entries)
		c.bytes = 0
	}
	c.entries[k] = e
	c.bytes += e.bytes
}
