package signals

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// FuzzParseLong checks parseLong against math/big on JSON number text.
func FuzzParseLong(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "1e3", "12.50e1", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "1e-1", "100e-2", "01", "1.", "-", "0.0e-5", "1E+18"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseLong(s)
		isNumber := isJSONNumber(s)
		if ok && !isNumber {
			t.Fatalf("parseLong(%q) accepted text that is not a JSON number", s)
		}
		if !isNumber || len(s) > 64 || strings.ContainsAny(s, "eE") && len(s) > 24 {
			return // keep math/big's work small
		}
		r, valid := new(big.Rat).SetString(s)
		if !valid {
			if strings.ContainsAny(s, "eE") {
				return // math/big refuses exponents beyond its limit
			}
			t.Fatalf("math/big cannot read JSON number %q", s)
		}
		want := r.IsInt() && r.Num().IsInt64()
		if ok != want {
			t.Fatalf("parseLong(%q) ok = %v, want %v", s, ok, want)
		}
		if ok && r.Num().Int64() != got {
			t.Fatalf("parseLong(%q) = %d, want %s", s, got, r.Num())
		}
	})
}

// isJSONNumber reports whether s is exactly one JSON number.
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') || strings.TrimSpace(s) != s {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	_, isNum := v.(json.Number)
	return isNum && !dec.More() && dec.InputOffset() == int64(len(s))
}

// FuzzParseS3Notification checks that parsing never panics and that every
// object parsed maps to an announcement of LONG and STRING params.
func FuzzParseS3Notification(f *testing.F) {
	f.Add([]byte(s3Body("lake", "events/dt%3D20260105/hour%3D00/part-0", "e", "ObjectCreated:Put")))
	f.Add([]byte(s3Body("lake", "a+b/%2B/x", "", "ObjectRemoved:Delete")))
	f.Add([]byte(`{"Service":"Amazon S3","Event":"s3:TestEvent"}`))
	f.Add([]byte(`{"Records":[{"s3":{"object":{"size":-1}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		objs, err := ParseS3Notification(body)
		if err != nil {
			if objs != nil {
				t.Fatalf("objects with an error")
			}
			return
		}
		for _, o := range objs {
			a := FromS3(o, []Rule{{Prefix: "x", Name: "rule"}})
			if a.Name != "rule" && !strings.HasPrefix(a.Name, "s3://"+o.Bucket) {
				t.Fatalf("name %q for %+v", a.Name, o)
			}
			for k, v := range a.Params {
				switch v.(type) {
				case int64, string:
				default:
					t.Fatalf("param %q is %T", k, v)
				}
			}
			if a.Params[S3ParamKey] != o.Key || a.RequestID == "" {
				t.Fatalf("announcement %+v of %+v", a, o)
			}
		}
	})
}

// FuzzParseSNSMessage checks that unwrapping never panics and that a body
// that is not an envelope comes back unchanged.
func FuzzParseSNSMessage(f *testing.F) {
	f.Add([]byte(`{"Type":"Notification","TopicArn":"arn","Message":"{\"name\":\"a\"}"}`))
	f.Add([]byte(`{"name":"a","params":{}}`))
	f.Add([]byte(`{"Type":"Notification","TopicArn":"arn","Message":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := ParseSNSMessage(body)
		if err != nil {
			return
		}
		var env map[string]json.RawMessage
		if json.Unmarshal(body, &env) == nil && env["Type"] != nil && env["Message"] != nil && env["TopicArn"] != nil {
			return
		}
		if !bytes.Equal(msg, body) {
			t.Fatalf("raw body changed: %q -> %q", body, msg)
		}
	})
}
