package expression

import (
	"reflect"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/maestro-serverless/maestro/model"
)

// compileCacheBytes bounds the memory of the compiled programs a Language
// keeps, as programBytes estimates it: 64 MiB.
const compileCacheBytes = 64 << 20

// compileCache remembers compiled programs. Compiling with expr costs about
// 100 µs, and definitions repeat expressions (the same edge condition on
// many edges, the same param on many steps). An entry is keyed by source and
// wanted type and records every scope lookup its compilation made; it is
// reused only when the current scope answers each of those lookups the same
// way, so a hit compiles to exactly what a fresh compilation would.
type compileCache struct {
	mu      sync.Mutex
	entries map[string][]*cacheEntry
	// bytes is the estimated memory of the entries' programs.
	bytes int64
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
	if prog.bytes > compileCacheBytes/4 {
		return // larger than any expression compiles to; never kept
	}
	if c.bytes+prog.bytes > compileCacheBytes {
		clear(c.entries)
		c.bytes = 0
	}
	c.entries[key] = append(c.entries[key], &cacheEntry{lookups: lookups, prog: prog})
	c.bytes += prog.bytes
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

// programBytes estimates the memory a compiled program holds: its syntax
// tree (about 150 bytes a node, types included), its source (kept by the
// program, its tree and its constants) and its constants. Measured within
// 25% of the heap it holds for sums, concatenations, long literals, regular
// expressions and folded arrays (TestProgramBytesEstimate).
func programBytes(src string, prog *vm.Program) int64 {
	c := &nodeCounter{}
	n := prog.Node()
	ast.Walk(&n, c)
	size := int64(1024 + 150*c.n + 3*len(src))
	for _, k := range prog.Constants {
		size += constBytes(k)
	}
	return size
}

// constBytes estimates the heap a constant holds: headers and contents.
func constBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return 16 + int64(len(x))
	case []any:
		n := int64(24)
		for _, e := range x {
			n += 16 + constBytes(e)
		}
		return n
	case map[string]any:
		n := int64(48)
		for k, e := range x {
			n += 32 + int64(len(k)) + constBytes(e)
		}
		return n
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Slice {
			return 24 + int64(rv.Len())*int64(rv.Type().Elem().Size())
		}
		return 16
	}
}

// nodeCounter counts the nodes of a syntax tree.
type nodeCounter struct{ n int }

func (c *nodeCounter) Visit(*ast.Node) { c.n++ }
