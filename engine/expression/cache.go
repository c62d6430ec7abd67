package expression

import (
	"sync"

	"github.com/maestro-serverless/maestro/model"
)

// compileCacheSize bounds the compiled programs a Language keeps.
const compileCacheSize = 4096

// compileCache remembers compiled programs. Compiling with expr costs about
// 100 µs, and definitions repeat expressions (the same edge condition on
// many edges, the same param on many steps). An entry is keyed by source and
// wanted type and records every scope lookup its compilation made; it is
// reused only when the current scope answers each of those lookups the same
// way, so a hit compiles to exactly what a fresh compilation would.
type compileCache struct {
	mu      sync.Mutex
	entries map[string][]*cacheEntry
	n       int
}

type cacheEntry struct {
	lookups []lookup
	prog    *Program
}

// lookup is one scope lookup made while compiling.
type lookup struct {
	name string
	typ  model.ParamType
	ok   bool
}

func newCompileCache() *compileCache {
	return &compileCache{entries: make(map[string][]*cacheEntry)}
}

func cacheKey(src string, want model.ParamType) string { return string(want) + "\x00" + src }

func (c *compileCache) get(key string, scope model.Scope) *Program {
	c.mu.Lock()
	list := c.entries[key]
	c.mu.Unlock()
next:
	for _, e := range list {
		for _, l := range e.lookups {
			if t, ok := scope.Lookup(l.name); ok != l.ok || t != l.typ {
				continue next
			}
		}
		return e.prog
	}
	return nil
}

func (c *compileCache) put(key string, lookups []lookup, prog *Program) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= compileCacheSize {
		clear(c.entries)
		c.n = 0
	}
	c.entries[key] = append(c.entries[key], &cacheEntry{lookups: lookups, prog: prog})
	c.n++
}

// recordingScope performs lookups on a scope and remembers them.
type recordingScope struct {
	scope model.Scope
	seen  []lookup
}

func (r *recordingScope) Lookup(name string) (model.ParamType, bool) {
	t, ok := r.scope.Lookup(name)
	for _, l := range r.seen {
		if l.name == name {
			return t, ok
		}
	}
	r.seen = append(r.seen, lookup{name: name, typ: t, ok: ok})
	return t, ok
}
