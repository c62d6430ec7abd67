package signals

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestParseAnnounce(t *testing.T) {
	long := strings.Repeat("p", 513)
	manyParams := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"p` + strings.Repeat("x", i) + `":1`
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name string
		body string
		want Announce
		errs []string
	}{
		{
			name: "minimal",
			body: `{"name":"signal_a"}`,
			want: Announce{Name: "signal_a", Params: map[string]any{}},
		},
		{
			name: "full",
			body: `{"name":"db/test/table1","params":{"foo":"bat","watermark":123456,"neg":-7},
				"request_id":"r-1","request_time":1234567,"extra":{"a":[1,2.5,"x",null,true]},"n":1e400}`,
			want: Announce{
				Name:   "db/test/table1",
				Params: map[string]any{"foo": "bat", "watermark": int64(123456), "neg": int64(-7)},
				Payload: map[string]any{
					"extra": map[string]any{"a": []any{json.Number("1"), json.Number("2.5"), "x", nil, true}},
					"n":     json.Number("1e400"),
				},
				RequestID:   "r-1",
				RequestTime: 1234567,
			},
		},
		{
			name: "integral numbers in other notations",
			body: `{"name":"s3://lake/events","params":{"a":1.0,"b":1e3,"c":12.5e1,"d":-0,"e":9223372036854775807,"f":-9223372036854775808,"g":0.0e99999999999},"request_time":1.7e12}`,
			want: Announce{
				Name: "s3://lake/events",
				Params: map[string]any{"a": int64(1), "b": int64(1000), "c": int64(125), "d": int64(0),
					"e": int64(math.MaxInt64), "f": int64(math.MinInt64), "g": int64(0)},
				RequestTime: 1_700_000_000_000,
			},
		},
		{
			name: "null optional fields",
			body: `{"name":"a","params":null,"request_id":null,"request_time":null}`,
			want: Announce{Name: "a", Params: map[string]any{}},
		},
		{
			name: "name required",
			body: `{"params":{"a":1}}`,
			want: Announce{Params: map[string]any{"a": int64(1)}},
			errs: []string{"name: is required"},
		},
		{
			name: "null name",
			body: `{"name":null}`,
			want: Announce{Params: map[string]any{}},
			errs: []string{"name: is required"},
		},
		{
			name: "name wrong type reported once",
			body: `{"name":5}`,
			want: Announce{Params: map[string]any{}},
			errs: []string{"name: must be a string, got a number"},
		},
		{
			name: "name rules",
			body: `{"name":" a"}`,
			want: Announce{Name: " a", Params: map[string]any{}},
			errs: []string{"name: must not start or end with white space"},
		},
		{
			name: "name not printable",
			body: `{"name":"a\u0007b"}`,
			want: Announce{Name: "a\u0007b", Params: map[string]any{}},
			errs: []string{"name: must be printable; it holds U+0007 at byte 1"},
		},
		{
			name: "name too long",
			body: `{"name":"` + long + `"}`,
			want: Announce{Name: long, Params: map[string]any{}},
			errs: []string{"name: must be at most 512 characters, got 513"},
		},
		{
			name: "bad param values",
			body: `{"name":"a","params":{"b":true,"f":1.5,"big":9223372036854775808,"tiny":1e-3,"o":{},"arr":[],"nil":null,"ok":"x","a.b":false}}`,
			want: Announce{Name: "a", Params: map[string]any{"ok": "x"}},
			errs: []string{
				`params.arr: must be a LONG or a STRING, got an array`,
				`params.b: must be a LONG or a STRING, got a boolean`,
				`params.big: must be a LONG (a whole number from -9223372036854775808 to 9223372036854775807) or a STRING, got 9223372036854775808`,
				`params.f: must be a LONG (a whole number from -9223372036854775808 to 9223372036854775807) or a STRING, got 1.5`,
				`params.nil: must be a LONG or a STRING, got null`,
				`params.o: must be a LONG or a STRING, got an object`,
				`params.tiny: must be a LONG (a whole number from -9223372036854775808 to 9223372036854775807) or a STRING, got 1e-3`,
				`params["a.b"]: must be a LONG or a STRING, got a boolean`,
			},
		},
		{
			name: "params not an object",
			body: `{"name":"a","params":[1]}`,
			want: Announce{Name: "a", Params: map[string]any{}},
			errs: []string{"params: must be an object of LONG or STRING values, got an array"},
		},
		{
			name: "empty param name",
			body: `{"name":"a","params":{"":1}}`,
			want: Announce{Name: "a", Params: map[string]any{"": int64(1)}},
			errs: []string{`params[""]: param names must not be empty`},
		},
		{
			name: "too many params",
			body: `{"name":"a","params":` + manyParams(65) + `}`,
			errs: []string{"params: must have at most 64 entries, got 65"},
		},
		{
			name: "param name too long",
			body: `{"name":"a","params":{"` + strings.Repeat("p", 129) + `":1}}`,
			want: Announce{Name: "a", Params: map[string]any{strings.Repeat("p", 129): int64(1)}},
			errs: []string{`params.` + strings.Repeat("p", 129) + `: param names must be at most 128 bytes, got 129`},
		},
		{
			name: "request fields",
			body: `{"name":"a","request_id":"","request_time":-1}`,
			want: Announce{Name: "a", Params: map[string]any{}, RequestTime: -1},
			errs: []string{"request_id: must be 1 to 128 characters, got 0", "request_time: must not be negative, got -1"},
		},
		{
			name: "request fields wrong types",
			body: `{"name":"a","request_id":7,"request_time":"5"}`,
			want: Announce{Name: "a", Params: map[string]any{}},
			errs: []string{"request_id: must be a string, got a number", "request_time: must be a whole number of milliseconds, got a string"},
		},
		{
			name: "request time fraction",
			body: `{"name":"a","request_time":1.5}`,
			want: Announce{Name: "a", Params: map[string]any{}},
			errs: []string{"request_time: must be a whole number of milliseconds within int64, got 1.5"},
		},
		{
			name: "request id too long",
			body: `{"name":"a","request_id":"` + strings.Repeat("r", 129) + `"}`,
			want: Announce{Name: "a", Params: map[string]any{}, RequestID: strings.Repeat("r", 129)},
			errs: []string{"request_id: must be 1 to 128 characters, got 129"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := ParseAnnounce([]byte(tt.body))
			assert.Equal(t, tt.errs, errs)
			if tt.want.Params != nil || tt.errs == nil {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestParseAnnounceNotAnObject(t *testing.T) {
	tests := []struct{ body, err string }{
		{``, "body: must be a JSON object; it is not valid JSON: unexpected end of JSON input"},
		{`{"name":"a"} x`, "body: must be a JSON object; it is not valid JSON: invalid character 'x' after top-level value"},
		{`{"name":"a",}`, "body: must be a JSON object; it is not valid JSON: invalid character '}' looking for beginning of object key string"},
		{`null`, "body: must be a JSON object, got null"},
		{` [] `, "body: must be a JSON object, got an array"},
		{`"a"`, "body: must be a JSON object, got a string"},
		{`12`, "body: must be a JSON object, got a number"},
	}
	for _, tt := range tests {
		a, errs := ParseAnnounce([]byte(tt.body))
		assert.Equal(t, []string{tt.err}, errs, tt.body)
		assert.Equal(t, Announce{}, a)
	}
}

func TestParseAnnounceCorpusRequest(t *testing.T) {
	a, errs := ParseAnnounce(readTestdata(t, "sample-signal-create-request.json"))
	require.Empty(t, errs)
	assert.Equal(t, Announce{
		Name:        "signal_a",
		Params:      map[string]any{"foo": "bat", "watermark": int64(123456), "updated_by": "tester"},
		Payload:     map[string]any{"extra": map[string]any{"source": map[string]any{"id": "test-id"}}},
		RequestID:   "test-request-id",
		RequestTime: 1234567,
	}, a)
}

func TestAnnounceValidate(t *testing.T) {
	tests := []struct {
		name string
		a    Announce
		errs []string
	}{
		{"valid", Announce{Name: "a", Params: map[string]any{"x": int64(1), "y": "s"}}, nil},
		{"nil params", Announce{Name: "a"}, nil},
		{"int is not normalized", Announce{Name: "a", Params: map[string]any{"x": 1}}, []string{"params.x: must be a LONG or a STRING, got a value of Go type int"}},
		{"float", Announce{Name: "a", Params: map[string]any{"x": 1.5}}, []string{"params.x: must be a LONG or a STRING, got the number 1.5"}},
		{"invalid utf-8", Announce{Name: "a\xffb"}, []string{"name: must be valid UTF-8"}},
		{"reserved payload key", Announce{Name: "a", Payload: map[string]any{"params": 1}}, []string{`payload.params: "params" is a field of the announcement and cannot be a payload key`}},
		{"trailing tab", Announce{Name: "a\t"}, []string{"name: must not start or end with white space"}},
		{"512 runes", Announce{Name: strings.Repeat("é", 512)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.errs, tt.a.Validate())
		})
	}
}

func TestAnnounceBodyRoundTrip(t *testing.T) {
	a := Announce{
		Name:        "s3://lake/events",
		Params:      map[string]any{"dt": "20260105", "size": int64(12)},
		Payload:     map[string]any{"extra": map[string]any{"n": json.Number("1.50")}},
		RequestID:   "r",
		RequestTime: 5,
	}
	body, err := a.Body()
	require.NoError(t, err)
	got, errs := ParseAnnounce(body)
	require.Empty(t, errs)
	assert.Equal(t, a, got)

	_, err = Announce{Name: "a", Payload: map[string]any{"c": make(chan int)}}.Body()
	assert.ErrorContains(t, err, `encoding announcement of "a"`)
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   any
		want any
		err  string
	}{
		{in: "s", want: "s"},
		{in: int64(-3), want: int64(-3)},
		{in: 7, want: int64(7)},
		{in: int8(-8), want: int64(-8)},
		{in: int16(16), want: int64(16)},
		{in: int32(32), want: int64(32)},
		{in: uint(9), want: int64(9)},
		{in: uint8(8), want: int64(8)},
		{in: uint16(16), want: int64(16)},
		{in: uint32(32), want: int64(32)},
		{in: uint64(math.MaxInt64), want: int64(math.MaxInt64)},
		{in: uint64(math.MaxInt64 + 1), err: "must be a LONG or a STRING, got the number 9223372036854775808"},
		{in: json.Number("20500101"), want: int64(20500101)},
		{in: json.Number("2.5e1"), want: int64(25)},
		{in: json.Number("2.5"), err: "got the number 2.5"},
		{in: json.Number("0x10"), err: "got the number 0x10"},
		{in: 3.0, want: int64(3)},
		{in: float32(4), want: int64(4)},
		{in: -9223372036854775808.0, want: int64(math.MinInt64)},
		{in: 9223372036854775808.0, err: "got the number 9.223372036854776e+18"},
		{in: 3.5, err: "got the number 3.5"},
		{in: math.NaN(), err: "got the number NaN"},
		{in: math.Inf(1), err: "got the number +Inf"},
		{in: nil, err: "got null"},
		{in: true, err: "got a boolean"},
		{in: []any{}, err: "got an array"},
		{in: map[string]any{}, err: "got an object"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if !parsed(t, got, err, tt.err, "%#v", tt.in) {
			continue
		}
		assert.Equal(t, tt.want, got, "%#v", tt.in)
	}
}

// parsed checks the result of a parse (or a conversion) that should fail
// with an error holding wantErr, when that is set, and returned nothing;
// otherwise that it succeeded, which it reports.
func parsed(t *testing.T, got any, err error, wantErr string, msgAndArgs ...any) bool {
	t.Helper()
	if wantErr != "" {
		assert.ErrorContains(t, err, wantErr, msgAndArgs...)
		assert.Nil(t, got, msgAndArgs...)
		return false
	}
	require.NoError(t, err, msgAndArgs...)
	return true
}

// FuzzParseAnnounce checks that parsing never panics, that every problem is
// reported with a path, that a clean parse passes Validate, and that its
// body parses back to an equal announcement.
func FuzzParseAnnounce(f *testing.F) {
	f.Add(readTestdata(f, "sample-signal-create-request.json"))
	for _, seed := range []string{
		`{"name":"signal_a","params":{"foo":"bat","watermark":123456,"updated_by":"tester"}}`,
		`{"name":"db/test/table1","params":{"vtts_utc_dateint":"20500101","vtts_utc_hour":"00"},"request_id":"x","request_time":1}`,
		`{"name":"s3://lake/events","params":{"a":1e3,"b":-0,"c":1.5},"p":{"q":[1,2.50,null]}}`,
		`{"name":" x","params":[],"request_time":-1}`,
		`{"name":"a","params":{"":true}}`,
		`[1,2]`,
		`{"name":"\u00e9\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, errs := ParseAnnounce(body)
		for _, e := range errs {
			if !strings.Contains(e, ": ") {
				t.Fatalf("error without a path: %q", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		if v := a.Validate(); v != nil {
			t.Fatalf("parsed clean but Validate says %v", v)
		}
		out, err := a.Body()
		if err != nil {
			t.Fatalf("Body: %v", err)
		}
		b, errs := ParseAnnounce(out)
		if errs != nil {
			t.Fatalf("re-parse of %s: %v", out, errs)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the announcement:\n%#v\n%#v", a, b)
		}
	})
}
