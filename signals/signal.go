package signals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/maestro-serverless/maestro/jsonnum"
)

// Limits of an announcement.
const (
	// MaxNameLength bounds a signal name, in characters.
	MaxNameLength = 512
	// MaxNameBytes bounds a signal name's UTF-8 encoding: the name is part
	// of DynamoDB partition keys (at most 2048 bytes), the param index's
	// beside a hex param name.
	MaxNameBytes = 1024
	// MaxParams bounds the params of one signal. Every param is indexed for
	// matching, and the index entries are written in the announce's own
	// DynamoDB transaction (100 items at most).
	MaxParams = 64
	// MaxParamNameBytes bounds a param name (it is part of the index key).
	MaxParamNameBytes = 128
	// MaxRequestIDLength bounds an announcement's request_id, in characters.
	MaxRequestIDLength = 128
)

// Signal is one stored signal instance.
type Signal struct {
	// Name is the signal name, e.g. "db/test/table1" or "s3://lake/events".
	Name string
	// Seq is the instance's sequence number, increasing per name.
	Seq int64
	// Params holds the LONG (int64) and STRING (string) params.
	Params map[string]any
	// Payload holds any other JSON the announcement carried (see the package
	// documentation for the Go types).
	Payload map[string]any
	// CreateTime is when the instance was stored, in Unix milliseconds.
	CreateTime int64
}

// Announce is an announcement of a signal: the body of POST /api/v3/signals,
// an SNS message, or what an S3 notification or a step output becomes.
type Announce struct {
	// Name is the signal name.
	Name string
	// Params holds the LONG (int64) and STRING (string) params; ParseAnnounce
	// always returns a non-nil map.
	Params map[string]any
	// Payload holds every body key other than name, params, request_id and
	// request_time; nil when there is none.
	Payload map[string]any
	// RequestID dedupes announcements; empty when not given.
	RequestID string
	// RequestTime is the announcer's time in Unix milliseconds; 0 when not given.
	RequestTime int64
}

// Body keys with a meaning of their own; every other key is payload.
const (
	keyName        = "name"
	keyParams      = "params"
	keyRequestID   = "request_id"
	keyRequestTime = "request_time"
)

// ParseAnnounce decodes and validates an announce body:
//
//	{"name": "...", "params": {k: LONG | STRING}, "request_id": "...",
//	 "request_time": <ms>, ...any other key goes to the payload}
//
// It returns every problem found, each as "<JSON path>: <rule>" (for example
// "name: is required" or "params.x: must be a LONG or a STRING, got a
// boolean"), sorted; the announcement is usable only when there are none.
// The caller bounds the body's size.
func ParseAnnounce(body []byte) (Announce, []string) {
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return Announce{}, []string{fmt.Sprintf("body: must be a JSON object; it is not valid JSON: %v", err)}
	}
	if kind := jsonKind(body); kind != "an object" {
		return Announce{}, []string{"body: must be a JSON object, got " + kind}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return Announce{}, []string{"body: must be a JSON object: " + err.Error()}
	}
	var a Announce
	var errs fieldErrors
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := fields[k]
		switch k {
		case keyName:
			if !isNull(raw) {
				a.Name, _ = decodeString(raw, keyName, &errs)
			}
		case keyParams:
			a.Params = decodeParams(raw, &errs)
		case keyRequestID:
			if isNull(raw) {
				continue
			}
			if id, ok := decodeString(raw, keyRequestID, &errs); ok {
				if id == "" {
					errs.addf(keyRequestID, "must be 1 to %d characters, got 0", MaxRequestIDLength)
				}
				a.RequestID = id
			}
		case keyRequestTime:
			if isNull(raw) {
				continue
			}
			if kind := jsonKind(raw); kind != "a number" {
				errs.addf(keyRequestTime, "must be a whole number of milliseconds, got %s", kind)
				continue
			}
			ms, ok := jsonnum.Long(string(raw))
			if !ok {
				errs.addf(keyRequestTime, "must be a whole number of milliseconds within int64, got %s", clip(string(raw)))
				continue
			}
			a.RequestTime = ms
		default:
			v, err := decodeAny(raw)
			if err != nil {
				// Unreachable for a body that decoded as an object; kept so
				// that a failure is reported, not dropped.
				errs.addf(pathKey("", k), "invalid JSON: %v", err)
				continue
			}
			if a.Payload == nil {
				a.Payload = make(map[string]any)
			}
			a.Payload[k] = v
		}
	}
	if a.Params == nil {
		a.Params = make(map[string]any)
	}
	for _, e := range a.validate() {
		if !errs.has(e.path) {
			errs = append(errs, e)
		}
	}
	return a, errs.strings()
}

// Validate checks an announcement built in code (from an S3 object, an SNS
// message or a step output) against the rules ParseAnnounce applies, and
// returns the problems as "<JSON path>: <rule>", sorted; nil when valid.
func (a Announce) Validate() []string {
	return a.validate().strings()
}

// validate applies the rules on decoded values.
func (a Announce) validate() fieldErrors {
	var errs fieldErrors
	if msg := checkName(a.Name); msg != "" {
		errs.add(keyName, msg)
	}
	if len(a.Params) > MaxParams {
		errs.addf(keyParams, "must have at most %d entries, got %d", MaxParams, len(a.Params))
	}
	for k, v := range a.Params {
		p := pathKey(keyParams, k)
		if k == "" {
			errs.add(p, "param names must not be empty")
		}
		if len(k) > MaxParamNameBytes {
			errs.addf(p, "param names must be at most %d bytes, got %d", MaxParamNameBytes, len(k))
		}
		switch v.(type) {
		case int64, string:
		default:
			errs.addf(p, "must be a LONG or a STRING, got %s", describe(v))
		}
	}
	for k := range a.Payload {
		switch k {
		case keyName, keyParams, keyRequestID, keyRequestTime:
			errs.addf(pathKey("payload", k), "%q is a field of the announcement and cannot be a payload key", k)
		}
	}
	if n := utf8.RuneCountInString(a.RequestID); n > MaxRequestIDLength {
		errs.addf(keyRequestID, "must be 1 to %d characters, got %d", MaxRequestIDLength, n)
	}
	if a.RequestTime < 0 {
		errs.addf(keyRequestTime, "must not be negative, got %d", a.RequestTime)
	}
	return errs
}

// checkName returns why name is not a valid signal name, or "".
// CheckName reports why name is not a valid signal name, or nil.
func CheckName(name string) error {
	if msg := checkName(name); msg != "" {
		return fmt.Errorf("signal name %s", msg)
	}
	return nil
}

func checkName(name string) string {
	if name == "" {
		return "is required"
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		return fmt.Sprintf("must be at most %d characters, got %d", MaxNameLength, n)
	}
	if len(name) > MaxNameBytes {
		return fmt.Sprintf("must be at most %d bytes in UTF-8, got %d", MaxNameBytes, len(name))
	}
	if !utf8.ValidString(name) {
		return "must be valid UTF-8"
	}
	if strings.TrimSpace(name) != name {
		return "must not start or end with white space"
	}
	for i, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("must be printable; it holds %U at byte %d", r, i)
		}
	}
	return ""
}

// Body returns the JSON announce body that ParseAnnounce reads back as a:
// the payload keys beside name, params, request_id (when set) and
// request_time (when set). It fails when a value cannot be written as JSON.
func (a Announce) Body() ([]byte, error) {
	m := make(map[string]any, len(a.Payload)+4)
	for k, v := range a.Payload {
		m[k] = v
	}
	m[keyName] = a.Name
	params := a.Params
	if params == nil {
		params = map[string]any{}
	}
	m[keyParams] = params
	if a.RequestID != "" {
		m[keyRequestID] = a.RequestID
	}
	if a.RequestTime != 0 {
		m[keyRequestTime] = a.RequestTime
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding announcement of %q: %w", a.Name, err)
	}
	return b, nil
}

// DecodeParams reads signal params stored as JSON: LONG values become
// int64 exactly, STRING values string (Normalize); nil when there are
// none. Both stores read them through it.
func DecodeParams(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := jsonnum.Decode(raw, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		n, err := Normalize(v)
		if err != nil {
			return nil, fmt.Errorf("param %q: %w", k, err)
		}
		m[k] = n
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// Normalize converts a LONG or STRING value from another source to the Go
// type signals use: string stays string; int, int8..int64, uint..uint64
// within int64, json.Number holding a whole number within int64, and an
// integral float32 or float64 within int64 become int64. Anything else is an
// error naming what it got.
func Normalize(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64, int, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		if n, ok := jsonnum.Int64(x); ok {
			return n, nil
		}
	case json.Number:
		if n, ok := jsonnum.Long(string(x)); ok {
			return n, nil
		}
	case float64:
		if n, ok := fromFloat(x); ok {
			return n, nil
		}
	case float32:
		if n, ok := fromFloat(float64(x)); ok {
			return n, nil
		}
	}
	return nil, fmt.Errorf("must be a LONG or a STRING, got %s", describe(v))
}

// fromFloat converts an integral f within int64 to int64.
func fromFloat(f float64) (int64, bool) {
	// -2^63 is exact in float64; 2^63 is the first value above MaxInt64.
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false // NaN and ±Inf fail one of the tests too
	}
	return int64(f), true
}

// decodeParams decodes the params object, reporting each bad value.
func decodeParams(raw json.RawMessage, errs *fieldErrors) map[string]any {
	if isNull(raw) {
		return nil
	}
	if kind := jsonKind(raw); kind != "an object" {
		errs.addf(keyParams, "must be an object of LONG or STRING values, got %s", kind)
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		errs.addf(keyParams, "invalid JSON: %v", err)
		return nil
	}
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		p := pathKey(keyParams, k)
		switch kind := jsonKind(v); kind {
		case "a string":
			if s, ok := decodeString(v, p, errs); ok {
				out[k] = s
			}
		case "a number":
			n, ok := jsonnum.Long(string(v))
			if !ok {
				errs.addf(p, "must be a LONG (a whole number from %d to %d) or a STRING, got %s",
					int64(math.MinInt64), int64(math.MaxInt64), clip(string(v)))
				continue
			}
			out[k] = n
		default:
			errs.addf(p, "must be a LONG or a STRING, got %s", kind)
		}
	}
	return out
}

// decodeString decodes a JSON string at path p.
func decodeString(raw json.RawMessage, p string, errs *fieldErrors) (string, bool) {
	if kind := jsonKind(raw); kind != "a string" {
		errs.addf(p, "must be a string, got %s", kind)
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		errs.addf(p, "invalid JSON string: %v", err)
		return "", false
	}
	return s, true
}

// decodeAny decodes a payload value, numbers as json.Number.
func decodeAny(raw json.RawMessage) (any, error) {
	var v any
	if err := jsonnum.Decode(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// jsonKind names the kind of the JSON value raw, as error messages say it.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// describe names a Go value's kind for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + clip(string(x))
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return "the number " + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case uint, uint64:
		return fmt.Sprintf("the number %d", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("a value of Go type %T", v)
	}
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// fieldError is one problem at a JSON path.
type fieldError struct {
	path, msg string
}

// fieldErrors collects problems.
type fieldErrors []fieldError

func (es *fieldErrors) add(path, msg string) {
	*es = append(*es, fieldError{path, msg})
}

func (es *fieldErrors) addf(path, format string, args ...any) {
	es.add(path, fmt.Sprintf(format, args...))
}

// has reports whether a problem at path is already recorded.
func (es fieldErrors) has(path string) bool {
	for _, e := range es {
		if e.path == path {
			return true
		}
	}
	return false
}

// strings renders the problems as "<path>: <msg>", sorted; nil when none.
func (es fieldErrors) strings() []string {
	if len(es) == 0 {
		return nil
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.path + ": " + e.msg
	}
	sort.Strings(out)
	return out
}

// pathKey returns the path of member k of the object at parent: a dotted key,
// or a quoted one in brackets when a dot would be ambiguous (params["a.b"]).
func pathKey(parent, k string) string {
	if plainKey(k) {
		if parent == "" {
			return k
		}
		return parent + "." + k
	}
	return parent + "[" + strconv.Quote(k) + "]"
}

// plainKey reports whether k can follow a dot in a path without ambiguity.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r == '.' || r == '[' || r == ']' || r == '"' || r == '\\' || r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}
