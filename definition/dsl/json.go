package dsl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
)

// object is a JSON object that keeps its keys in insertion order.
type object struct {
	keys []string
	vals []any
}

// set adds or replaces key k.
func (o *object) set(k string, v any) {
	for i, key := range o.keys {
		if key == k {
			o.vals[i] = v
			return
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// has reports whether key k is set.
func (o *object) has(k string) bool {
	for _, key := range o.keys {
		if key == k {
			return true
		}
	}
	return false
}

// number is a JSON number, written as its text.
type number string

// appendJSON appends the JSON text of o.
func (o *object) appendJSON(b []byte) ([]byte, error) {
	return appendValue(b, o)
}

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case *object:
		b = append(b, '{')
		for i, k := range t.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = appendValue(b, t.vals[i]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, t), nil
	case number:
		return append(b, t...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	}
	return nil, fmt.Errorf("internal: cannot write %T as JSON", v)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// jpath is a path in the model's notation: keys joined by dots, indexes in
// brackets, keys that would be ambiguous quoted in brackets.
type jpath string

// key returns the path of member k.
func (p jpath) key(k string) jpath {
	if model.PlainKey(k) {
		if p == "" {
			return jpath(k)
		}
		return p + jpath("."+k)
	}
	return p + jpath("["+strconv.Quote(k)+"]")
}

// at returns the path of element i.
func (p jpath) at(i int) jpath { return p + jpath("["+strconv.Itoa(i)+"]") }

// origin is where in the YAML a JSON value came from.
type origin struct {
	line  int
	field string
}

// SourceMap maps JSON paths of a translated document to the YAML lines and
// DSL fields they came from.
type SourceMap struct {
	lines map[string]origin
}

// record notes that the JSON value at p came from line of field.
func (s *SourceMap) record(p jpath, line int, field jpath) {
	s.lines[string(p)] = origin{line: line, field: string(field)}
}

// Locate returns the YAML line and DSL field of the JSON path p, or of its
// nearest recorded ancestor; ok is false when none is recorded.
func (s *SourceMap) Locate(p string) (line int, field string, ok bool) {
	if s == nil {
		return 0, "", false
	}
	for {
		if o, found := s.lines[p]; found {
			return o.line, o.field, true
		}
		cut := parentPath(p)
		if cut == p {
			return 0, "", false
		}
		p = cut
	}
}

// parentPath drops the last segment of a model path ("" stays "").
func parentPath(p string) string {
	if p == "" {
		return p
	}
	if strings.HasSuffix(p, "]") {
		// Find the '[' that opens the last segment, skipping a quoted key.
		depthQuote := false
		for i := len(p) - 2; i >= 0; i-- {
			switch {
			case p[i] == '"' && (i == 0 || p[i-1] != '\\'):
				depthQuote = !depthQuote
			case p[i] == '[' && !depthQuote:
				return p[:i]
			}
		}
		return ""
	}
	if i := strings.LastIndexAny(p, ".]"); i >= 0 {
		if p[i] == ']' {
			return p[:i+1]
		}
		return p[:i]
	}
	return ""
}
