package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// FieldError is one problem found in a definition, located by the JSON path of
// the offending field (e.g. "workflow.steps[3].step.transition.successors").
type FieldError struct {
	// Path is the JSON path of the field; empty for the document itself.
	Path string
	// Msg names the rule that failed and the value that failed it.
	Msg string
}

// Error returns "<path>: <msg>", or just the message when the path is empty.
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Errors is every problem found in one definition. Decoding and validation
// report all problems at once rather than stopping at the first; an empty
// Errors means there were none.
type Errors []*FieldError

// Error joins every message, one per line.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns es as an error, or nil when es is empty. It spares callers the
// typed-nil trap of returning an empty Errors as a non-nil error.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Sorted returns a copy of es ordered by path, then message. Validation reports
// errors in the order it walks the definition; Sorted gives a stable order for
// comparisons that do not care how the walk went.
func (es Errors) Sorted() Errors {
	out := append(Errors(nil), es...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Msg < out[j].Msg
	})
	return out
}

// path is a JSON path built lazily: each element points at its parent and the
// string form is only made when an error needs it. Elements are carved from
// a shared slab, since a walk makes one for nearly every field it visits.
// Every path starts at a root made by newRoot.
type path struct {
	parent *path
	name   string // object key, when index == -1
	index  int    // array index; -1 for a key; -2 for the root
	alloc  *pathAlloc
}

// pathAlloc hands out path elements in chunks.
type pathAlloc struct {
	slab []path
}

func (a *pathAlloc) next() *path {
	if len(a.slab) == 0 {
		a.slab = make([]path, 256)
	}
	p := &a.slab[0]
	a.slab = a.slab[1:]
	return p
}

// newRoot returns the root path of a document.
func newRoot() *path {
	a := &pathAlloc{}
	r := a.next()
	*r = path{index: -2, alloc: a}
	return r
}

// key returns the path of member k of the object at p.
func (p *path) key(k string) *path {
	q := p.alloc.next()
	*q = path{parent: p, name: k, index: -1, alloc: p.alloc}
	return q
}

// at returns the path of element i of the array at p.
func (p *path) at(i int) *path {
	q := p.alloc.next()
	*q = path{parent: p, index: i, alloc: p.alloc}
	return q
}

// loc is a path that is only built when an error needs it: a built base
// path followed by up to three pending segments. Walks pass locs to the
// fields they check, so that fields without errors cost no allocation.
type loc struct {
	base *path
	n    int // pending segments in seg
	seg  [3]segment
}

// segment is one pending step of a loc: an object key, or an array index
// when index >= 0.
type segment struct {
	key   string
	index int
}

// here returns p as a loc.
func (p *path) here() loc { return loc{base: p} }

// get builds the path.
func (l loc) get() *path {
	p := l.base
	for _, s := range l.seg[:l.n] {
		if s.index >= 0 {
			p = p.at(s.index)
		} else {
			p = p.key(s.key)
		}
	}
	return p
}

// fix builds the path once, so that the locs of its children stay cheap.
func (l loc) fix() loc {
	if l.n == 0 {
		return l
	}
	return loc{base: l.get()}
}

// push returns l extended by s, building the oldest pending segment when
// all three are in use.
func (l loc) push(s segment) loc {
	if l.n == len(l.seg) {
		first := loc{base: l.base, n: 1, seg: [3]segment{l.seg[0]}}
		l = loc{base: first.get(), n: 2, seg: [3]segment{l.seg[1], l.seg[2]}}
	}
	l.seg[l.n] = s
	l.n++
	return l
}

// key returns the loc of member k.
func (l loc) key(k string) loc { return l.push(segment{key: k, index: -1}) }

// at returns the loc of element i.
func (l loc) at(i int) loc { return l.push(segment{index: i}) }

// String renders the path: keys joined by dots, indexes in brackets, and keys
// that would be ambiguous after a dot (containing '.', brackets, quotes, spaces
// or empty) quoted in brackets: workflow.params["a.b"]. The root is "".
func (p *path) String() string {
	var parts []*path
	for q := p; q != nil && q.index != -2; q = q.parent {
		parts = append(parts, q)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		q := parts[i]
		switch {
		case q.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(q.index))
			b.WriteByte(']')
		case PlainKey(q.name):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(q.name)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(q.name))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// PlainKey reports whether k can follow a dot in a field path without
// ambiguity (else it is written ["k"]), the rule of every path an error
// names.
func PlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		switch {
		case r == '.' || r == '[' || r == ']' || r == '"' || r == '\\':
			return false
		case r <= ' ' || r == 0x7f:
			return false
		}
	}
	return true
}

// errorList collects field errors during a walk.
type errorList struct {
	errs Errors
}

// add records msg at p.
func (l *errorList) add(p *path, msg string) {
	l.errs = append(l.errs, &FieldError{Path: p.String(), Msg: msg})
}

// addf records a formatted message at p.
func (l *errorList) addf(p *path, format string, args ...any) {
	l.add(p, fmt.Sprintf(format, args...))
}
