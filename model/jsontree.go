package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// nodeKind is the JSON type of a node.
type nodeKind uint8

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// String names the kind as error messages do.
func (k nodeKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindObject:
		return "an object"
	default:
		return "an array"
	}
}

// node is one value of a generic JSON tree that, unlike map[string]any, keeps
// the order of object members and the literal text of numbers.
type node struct {
	kind    nodeKind
	b       bool     // kindBool
	s       string   // kindString: the value; kindNumber: the literal text
	members []member // kindObject, in document order
	elems   []*node  // kindArray
}

// member is one key/value pair of an object node.
type member struct {
	key string
	val *node
}

// get returns the value of key k, or nil.
func (n *node) get(k string) *node {
	for i := range n.members {
		if n.members[i].key == k {
			return n.members[i].val
		}
	}
	return nil
}

// maxDepth bounds the nesting of arrays and objects in a document.
const maxDepth = 1000

// parseJSON reads one JSON document (RFC 8259) into a tree. Number literals
// keep their text, object members their order. Syntax errors are fatal and
// reported with their line and column; duplicate object keys are reported at
// their path and the first occurrence is kept. Invalid UTF-8 in strings is
// replaced by U+FFFD, as encoding/json does.
//
// It is a small hand-written scanner rather than json.Decoder's Token API,
// which allocates an error value for every scalar token and made decoding a
// 300-step definition about ten times slower.
func parseJSON(data []byte, errs *errorList) (*node, error) {
	r := treeReader{data: data, errs: errs, keys: make(map[string]string, 64)}
	r.skipSpace()
	n, err := r.value(0)
	if err == nil {
		r.skipSpace()
		if r.pos < len(r.data) {
			err = fmt.Errorf("unexpected %s after the top-level value", r.describe())
		}
	}
	if err != nil {
		line, col := lineCol(data, int64(r.pos))
		return nil, fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
	}
	return n, nil
}

// treeReader scans a document into nodes.
type treeReader struct {
	data  []byte
	pos   int
	errs  *errorList
	keys  map[string]string // interned object keys
	slab  []node            // nodes are carved from here to save allocations
	stack []segment         // path of the value being read, for errors
	// Scratch stacks collect the children of open containers, so each
	// container gets one exactly sized slice.
	members []member
	elems   []*node
}

// pathString renders the current path as errors show it.
func (r *treeReader) pathString(last string) string {
	p := newRoot()
	for _, s := range r.stack {
		if s.index >= 0 {
			p = p.at(s.index)
		} else {
			p = p.key(s.key)
		}
	}
	return p.key(last).String()
}

// newNode returns a zeroed node from the slab.
func (r *treeReader) newNode(kind nodeKind) *node {
	if len(r.slab) == 0 {
		r.slab = make([]node, 128)
	}
	n := &r.slab[0]
	r.slab = r.slab[1:]
	n.kind = kind
	return n
}

func (r *treeReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// describe names the byte at the current position for error messages.
func (r *treeReader) describe() string {
	if r.pos >= len(r.data) {
		return "end of input"
	}
	return fmt.Sprintf("character %q", r.data[r.pos])
}

// value reads the value at the current position at the given nesting depth.
func (r *treeReader) value(depth int) (*node, error) {
	if r.pos >= len(r.data) {
		return nil, errors.New("unexpected end of input")
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return r.object(depth + 1)
	case c == '[':
		return r.array(depth + 1)
	case c == '"':
		s, err := r.string(false)
		if err != nil {
			return nil, err
		}
		n := r.newNode(kindString)
		n.s = s
		return n, nil
	case c == '-' || c >= '0' && c <= '9':
		s, err := r.number()
		if err != nil {
			return nil, err
		}
		n := r.newNode(kindNumber)
		n.s = s
		return n, nil
	case c == 't':
		return r.literal("true", kindBool, true)
	case c == 'f':
		return r.literal("false", kindBool, false)
	case c == 'n':
		return r.literal("null", kindNull, false)
	}
	return nil, fmt.Errorf("unexpected %s looking for the beginning of a value", r.describe())
}

func (r *treeReader) literal(word string, kind nodeKind, b bool) (*node, error) {
	if !bytes.HasPrefix(r.data[r.pos:], []byte(word)) {
		return nil, fmt.Errorf("invalid literal; expected %s", word)
	}
	r.pos += len(word)
	n := r.newNode(kind)
	n.b = b
	return n, nil
}

func (r *treeReader) object(depth int) (*node, error) {
	n, empty, err := r.open(depth, kindObject, '}')
	if err != nil {
		return nil, err
	}
	n.members = []member{}
	if empty {
		return n, nil
	}
	base := len(r.members)
	defer func() { r.members = r.members[:base] }()
	var seen map[string]struct{}
	for {
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return nil, fmt.Errorf("unexpected %s looking for an object key", r.describe())
		}
		k, err := r.string(true)
		if err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return nil, fmt.Errorf("unexpected %s after object key %q; expected ':'", r.describe(), k)
		}
		r.pos++
		r.skipSpace()
		r.stack = append(r.stack, segment{key: k, index: -1})
		v, err := r.value(depth)
		r.stack = r.stack[:len(r.stack)-1]
		if err != nil {
			return nil, err
		}
		if duplicateKey(r.members[base:], &seen, k) {
			r.errs.errs = append(r.errs.errs, &FieldError{Path: r.pathString(k), Msg: "duplicate key"})
		} else {
			r.members = append(r.members, member{key: k, val: v})
		}
		done, err := r.next('}', "an object", "an object member")
		if err != nil {
			return nil, err
		}
		if done {
			n.members = append(make([]member, 0, len(r.members)-base), r.members[base:]...)
			return n, nil
		}
	}
}

func (r *treeReader) array(depth int) (*node, error) {
	n, empty, err := r.open(depth, kindArray, ']')
	if err != nil {
		return nil, err
	}
	n.elems = []*node{}
	if empty {
		return n, nil
	}
	base := len(r.elems)
	defer func() { r.elems = r.elems[:base] }()
	for {
		r.skipSpace()
		r.stack = append(r.stack, segment{index: len(r.elems) - base})
		e, err := r.value(depth)
		r.stack = r.stack[:len(r.stack)-1]
		if err != nil {
			return nil, err
		}
		r.elems = append(r.elems, e)
		done, err := r.next(']', "an array", "an array element")
		if err != nil {
			return nil, err
		}
		if done {
			n.elems = append(make([]*node, 0, len(r.elems)-base), r.elems[base:]...)
			return n, nil
		}
	}
}

// open enters the object or array whose opening byte is at r.pos, depth
// levels deep: it returns the container's node, of kind, and whether its
// closing byte end follows at once (it is empty).
func (r *treeReader) open(depth int, kind nodeKind, end byte) (n *node, empty bool, err error) {
	if depth > maxDepth {
		return nil, false, fmt.Errorf("nesting deeper than %d levels", maxDepth)
	}
	r.pos++ // '{' or '['
	n = r.newNode(kind)
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == end {
		r.pos++
		return n, true, nil
	}
	return n, false, nil
}

// next reads what follows a member or an element (after) of a container
// (in): ',' when more follow, or its closing byte end (done).
func (r *treeReader) next(end byte, in, after string) (done bool, err error) {
	r.skipSpace()
	if r.pos >= len(r.data) {
		return false, errors.New("unexpected end of input in " + in)
	}
	switch r.data[r.pos] {
	case ',':
		r.pos++
		return false, nil
	case end:
		r.pos++
		return true, nil
	}
	return false, fmt.Errorf("unexpected %s after %s; expected ',' or '%c'", r.describe(), after, end)
}

// number scans a number literal and returns its text.
func (r *treeReader) number() (string, error) {
	d := r.data
	start := r.pos
	i := r.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case digits() == 0:
		r.pos = i
		return "", errors.New("invalid number: expected a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			r.pos = i
			return "", errors.New("invalid number: expected a digit after the decimal point")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			r.pos = i
			return "", errors.New("invalid number: expected a digit in the exponent")
		}
	}
	r.pos = i
	return string(d[start:i]), nil
}

// string scans a string literal and returns its value; keys are interned.
func (r *treeReader) string(key bool) (string, error) {
	d := r.data
	r.pos++ // opening quote
	start := r.pos
	i := start
	for i < len(d) {
		c := d[i]
		if c == '"' {
			r.pos = i + 1
			raw := d[start:i]
			if key {
				if s, ok := r.keys[string(raw)]; ok {
					return s, nil
				}
				s := string(raw)
				r.keys[s] = s
				return s, nil
			}
			return string(raw), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	// Slow path: escapes, control characters or non-ASCII text.
	var b []byte
	b = append(b, d[start:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			r.pos = i + 1
			return string(b), nil
		case c < 0x20:
			r.pos = i
			return "", fmt.Errorf("invalid control character %q in a string", c)
		case c == '\\':
			if i+1 >= len(d) {
				r.pos = i
				return "", errors.New("unexpected end of input in a string escape")
			}
			i++
			switch d[i] {
			case '"', '\\', '/':
				b = append(b, d[i])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				ru, ok := hex4(d, i+1)
				if !ok {
					r.pos = i
					return "", errors.New("invalid \\u escape in a string")
				}
				i += 4
				if utf16.IsSurrogate(ru) {
					if lo, ok := hex4(d, i+3); ok && i+2 < len(d) && d[i+1] == '\\' && d[i+2] == 'u' {
						if pair := utf16.DecodeRune(ru, lo); pair != utf8.RuneError {
							ru = pair
							i += 6
						} else {
							ru = utf8.RuneError
						}
					} else {
						ru = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, ru)
			default:
				r.pos = i
				return "", fmt.Errorf("invalid escape %q in a string", d[i])
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			ru, size := utf8.DecodeRune(d[i:])
			if ru == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, d[i:i+size]...)
			}
			i += size
		}
	}
	r.pos = i
	return "", errors.New("unexpected end of input in a string")
}

// hex4 decodes four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var v rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// duplicateKey reports whether key k is among the members read so far.
// Small objects are scanned; larger ones get an index.
func duplicateKey(members []member, seen *map[string]struct{}, k string) bool {
	const scanLimit = 16
	if len(members) < scanLimit && *seen == nil {
		for i := range members {
			if members[i].key == k {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(members))
		for _, m := range members {
			(*seen)[m.key] = struct{}{}
		}
	}
	if _, ok := (*seen)[k]; ok {
		return true
	}
	(*seen)[k] = struct{}{}
	return false
}

// lineCol converts a byte offset into 1-based line and column numbers.
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:offset] {
		if c == '\n' {
			line++
			col = 1
			continue
		}
		col++
	}
	return line, col
}

// raw returns the node as compact JSON. Numbers keep their literal text and
// objects their member order, so a value read and written back is unchanged
// except for insignificant white space and string escapes.
func (n *node) raw() RawJSON {
	return RawJSON(appendNode(nil, n))
}

// appendNode appends the compact JSON form of n to b.
func appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		return strconv.AppendBool(b, n.b)
	case kindNumber:
		return append(b, n.s...)
	case kindString:
		return appendString(b, n.s)
	case kindArray:
		b = append(b, '[')
		for i, e := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, e)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, m := range n.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = appendNode(b, m.val)
		}
		return append(b, '}')
	}
}

// generic converts n into the values encoding/json produces for any with
// UseNumber: nil, bool, json.Number, string, []any and map[string]any.
func (n *node) generic() any {
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.b
	case kindNumber:
		return json.Number(n.s)
	case kindString:
		return n.s
	case kindArray:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = e.generic()
		}
		return out
	default:
		out := make(map[string]any, len(n.members))
		for _, m := range n.members {
			out[m.key] = m.val.generic()
		}
		return out
	}
}

// appendString appends s as a JSON string. Unlike encoding/json it leaves
// '<', '>' and '&' alone, so text such as SEL expressions stays readable.
// Invalid UTF-8 is replaced by U+FFFD, as encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendGeneric appends a decoded-JSON value (as produced by generic, or
// built by code) to b. Maps are written with sorted keys. Values of other Go
// types are encoded with encoding/json.
func appendGeneric(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case string:
		return appendString(b, t), nil
	case json.Number:
		if t == "" {
			return append(b, '0'), nil
		}
		return append(b, t...), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendGeneric(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendGeneric(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode value of type %T: %w", v, err)
		}
		return append(b, data...), nil
	}
}
