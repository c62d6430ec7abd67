package engine

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Size limits of evaluated params. The state of a run is stored in DynamoDB
// (gzipped, in items of at most 400 KB), and a decision holds it in memory:
// params past these limits fail their step (or, for workflow params, the
// run) with an error naming the limit, instead of wedging the run or
// exhausting the Lambda's memory.
const (
	// MaxStepParamsBytes bounds one step's evaluated params (and a run's
	// workflow params) as JSON: Maestro's params size limit of 750,000
	// characters.
	MaxStepParamsBytes = 750_000
	// MaxRunParamsBytes bounds the evaluated params of a whole run, workflow
	// params and every step's, as JSON.
	MaxRunParamsBytes = 2 << 20
	// MaxStepOutputsBytes bounds the output params one step attempt reports,
	// as JSON: they travel in one inbox item and are kept in the step's
	// attempt item, both under DynamoDB's 400 KB item limit.
	MaxStepOutputsBytes = 256 << 10
)

// CheckOutputs fails when outputs exceed MaxStepOutputsBytes as JSON.
func CheckOutputs(outputs map[string]any) error {
	if n, over := jsonSizeUpTo(outputs, MaxStepOutputsBytes); over {
		return fmt.Errorf("the step's outputs are more than %d bytes as JSON (at least %d), over the limit of %d bytes per step", MaxStepOutputsBytes, n, MaxStepOutputsBytes)
	}
	return nil
}

// excludeWorkflowParams is the exclude argument of checkParamsSize for the
// workflow params.
const excludeWorkflowParams = -2

// checkParamsSize fails when params (of what, for the message) exceed
// MaxStepParamsBytes, or when, in place of the params of exclude (a step
// index, or excludeWorkflowParams), they take the run's params past
// MaxRunParamsBytes. On success the caller stores params there.
func (d *decider) checkParamsSize(what string, params Values, exclude int) error {
	n, over := jsonSizeUpTo(params, MaxStepParamsBytes)
	if over {
		return fmt.Errorf("%s are more than %d bytes as JSON, over the limit of %d (Maestro's params size limit)", what, MaxStepParamsBytes, MaxStepParamsBytes)
	}
	if d.runBytes < 0 {
		d.runBytes, _ = jsonSizeUpTo(d.st.Params, math.MaxInt64)
		for i := range d.st.Steps {
			m, _ := jsonSizeUpTo(d.st.Steps[i].Params, math.MaxInt64)
			d.runBytes += m
		}
	}
	old := d.st.Params
	if exclude >= 0 {
		old = d.st.Steps[exclude].Params
	}
	oldBytes, _ := jsonSizeUpTo(old, math.MaxInt64)
	rest := d.runBytes - oldBytes
	if rest+n > MaxRunParamsBytes {
		return fmt.Errorf("%s are %d bytes as JSON; with the run's other params (%d bytes) that is over the limit of %d bytes of params per run", what, n, rest, MaxRunParamsBytes)
	}
	d.runBytes = rest + n
	return nil
}

// jsonSizeUpTo returns the size of v encoded as JSON by encoding/json, or
// reports over as soon as it passes limit (so a huge value costs no more
// than limit bytes of scanning).
func jsonSizeUpTo(v any, limit int64) (n int64, over bool) {
	s := sizer{limit: limit}
	s.add(v)
	return s.n, s.n > limit
}

type sizer struct{ n, limit int64 }

func (s *sizer) add(v any) {
	if s.n > s.limit {
		return
	}
	switch x := v.(type) {
	case nil:
		s.n += 4
	case bool:
		if x {
			s.n += 4
		} else {
			s.n += 5
		}
	case string:
		s.str(x)
	case int64:
		s.n += int64(len(strconv.AppendInt(nil, x, 10)))
	case float64:
		s.float(x)
	case Values:
		s.values(x)
	case map[string]any:
		s.n++
		for k, e := range x {
			s.str(k)
			s.n += 2 // ':' and ',' (or the closing brace)
			s.add(e)
			if s.n > s.limit {
				return
			}
		}
		if len(x) == 0 {
			s.n++
		}
	case []any:
		sizeList(s, x, s.add)
	case []string:
		sizeList(s, x, s.str)
	case []int64:
		s.list(len(x))
		for _, e := range x {
			s.n += int64(len(strconv.AppendInt(nil, e, 10)))
		}
	case []float64:
		s.list(len(x))
		for _, e := range x {
			s.float(e)
		}
	case []bool:
		sizeList(s, x, func(b bool) { s.add(b) })
	case map[string]string:
		s.n++
		for k, e := range x {
			s.str(k)
			s.str(e)
			s.n += 2
			if s.n > s.limit {
				return
			}
		}
		if len(x) == 0 {
			s.n++
		}
	default:
		s.n += 16 // not a normalized value; counted, not encoded
	}
}

// sizeList adds array xs, each element by add, stopping once past the
// limit.
func sizeList[T any](s *sizer, xs []T, add func(T)) {
	s.list(len(xs))
	for _, e := range xs {
		add(e)
		if s.n > s.limit {
			return
		}
	}
}

// list adds the brackets and commas of an array of n elements.
func (s *sizer) list(n int) {
	s.n += 2
	if n > 1 {
		s.n += int64(n - 1)
	}
}

// float adds a number as encoding/json writes it.
func (s *sizer) float(f float64) {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b = b[:n-1] // e-07 is written e-7
		}
	}
	s.n += int64(len(b))
}

// values adds params in Values' typed form: {"name":{"type":"T","value":v}}.
func (s *sizer) values(v Values) {
	if v == nil {
		s.n += 4
		return
	}
	s.n++
	for k, e := range v {
		s.str(k)
		s.n += 2 // ':' and ',' (or the closing brace)
		t, err := TypeOf(e)
		s.n += int64(len(`{"type":"`) + len(t) + len(`","value":`) + 1)
		if m, ok := e.(map[string]any); ok && err == nil {
			s.values(Values(m))
		} else {
			s.add(e)
		}
		if s.n > s.limit {
			return
		}
	}
	if len(v) == 0 {
		s.n++
	}
}

// str adds a JSON string: quotes plus each byte, escaped as encoding/json
// escapes it (HTML-safe).
func (s *sizer) str(x string) {
	s.n += 2 + int64(len(x))
	if s.n > s.limit {
		return
	}
	for i := 0; i < len(x); {
		c := x[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				s.n++
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				s.n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(x[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			s.n += 5 // \ufffd for one byte
		case r == '\u2028' || r == '\u2029':
			s.n += 3
		}
		i += size
	}
}
