package loopitems

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

const testBucket = "items-bucket"

// source is the items_from source of testBucket/key.
func testSource(key, format string, fields map[string]model.ParamType) engine.ItemsSource {
	return engine.ItemsSource{URI: "s3://" + testBucket + "/" + key, Format: format, Fields: fields}
}

// upto returns 0, 1 ... n-1.
func upto(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// readAll scans the object of src and reads all its items at once.
func readAll(t *testing.T, r *Reader, src engine.ItemsSource) (engine.ItemsObject, []engine.Values) {
	t.Helper()
	ctx := context.Background()
	obj, err := r.ScanItems(ctx, src)
	require.NoError(t, err)
	items, next, err := r.ReadItems(ctx, src, obj, obj.First, upto(obj.Total))
	require.NoError(t, err)
	require.Len(t, items, int(obj.Total))
	if obj.Total > 0 {
		require.Equal(t, obj.Total, next.Index)
	}
	return obj, items
}

// requireItemsError checks that err is an *engine.ItemsError about src
// that says want.
func requireItemsError(t *testing.T, err error, src engine.ItemsSource, want string) {
	t.Helper()
	var ie *engine.ItemsError
	require.ErrorAs(t, err, &ie)
	require.True(t, strings.HasPrefix(ie.Msg, "items_from "+src.URI), "%q does not start with items_from and the URI", ie.Msg)
	require.Contains(t, ie.Msg, want)
}

func TestFormats(t *testing.T) {
	long, double, boolean := model.TypeLong, model.TypeDouble, model.TypeBoolean
	tests := []struct {
		name   string
		format string
		body   string
		fields map[string]model.ParamType
		want   []engine.Values
	}{{
		name:   "jsonl with types",
		format: model.ItemsJSONL,
		body: `{"id":9007199254740993,"x":1.5,"ok":true,"tags":["a","b"],"ns":[1,2],"ds":[1,2.5],"m":{"k":"v","n":2}}` + "\r\n\n  \t\r\n" +
			`{"id":-2,"x":3,"ok":false,"tags":[],"name":"héllo ✓"}`,
		fields: map[string]model.ParamType{"id": long, "x": double, "ok": boolean},
		want: []engine.Values{
			{"id": int64(9007199254740993), "x": 1.5, "ok": true, "tags": []string{"a", "b"}, "ns": []int64{1, 2},
				"ds": []float64{1, 2.5}, "m": map[string]any{"k": "v", "n": int64(2)}},
			{"id": int64(-2), "x": float64(3), "ok": false, "tags": []string{}, "name": "héllo ✓"},
		},
	}, {
		name:   "csv with quotes and newlines",
		format: model.ItemsCSV,
		body:   "\ufeffname,note\r\nada,\"says \"\"hi\"\", twice\"\r\ngrace,\"two\r\nlines\"\r\nζ,\r\n\r\n",
		fields: map[string]model.ParamType{"name": model.TypeString},
		want: []engine.Values{
			{"name": "ada", "note": `says "hi", twice`},
			{"name": "grace", "note": "two\nlines"},
			{"name": "ζ", "note": ""},
		},
	}, {
		name:   "json array",
		format: model.ItemsJSON,
		body:   " \n[ {\"x\": 1.5}, {\"x\": 2.5, \"tags\": [\"a\", \"]\"], \"s\": \"}\\\"{\"} ,\r\n{\"x\": 3, \"big\": 9007199254740993} ] \n",
		fields: map[string]model.ParamType{"x": double},
		want: []engine.Values{
			{"x": 1.5},
			{"x": 2.5, "tags": []string{"a", "]"}, "s": `}"{`},
			{"x": float64(3), "big": int64(9007199254740993)},
		},
	}, {
		name:   "declared array and map types",
		format: model.ItemsJSONL,
		body:   `{"l":[],"d":[1,2],"sm":{"a":"b"}}`,
		fields: map[string]model.ParamType{"l": model.TypeLongArray, "d": model.TypeDoubleArray, "sm": model.TypeStringMap},
		want:   []engine.Values{{"l": []int64{}, "d": []float64{1, 2}, "sm": map[string]string{"a": "b"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemObjects()
			m.put(testBucket, "in", []byte(tt.body))
			obj, items := readAll(t, NewReader(m, []string{testBucket}), testSource("in", tt.format, tt.fields))
			require.Equal(t, tt.want, items)
			require.Equal(t, int64(len(tt.body)), obj.Size)
			require.NotEmpty(t, obj.ETag)
			if tt.format == model.ItemsCSV {
				require.Equal(t, []string{"name", "note"}, obj.Header)
			}
		})
	}
}

func TestEmptyObjects(t *testing.T) {
	tests := []struct {
		format, body string
		header       []string
	}{
		{model.ItemsJSONL, "", nil},
		{model.ItemsJSONL, "\n \r\n\t\n", nil},
		{model.ItemsCSV, "", nil},
		{model.ItemsCSV, "a,b\r\n", []string{"a", "b"}},
		{model.ItemsCSV, "\n\na,b", []string{"a", "b"}},
		{model.ItemsJSON, "", nil},
		{model.ItemsJSON, " \n ", nil},
		{model.ItemsJSON, "[]", nil},
		{model.ItemsJSON, " [ \n ] \n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.format+" "+strings.ReplaceAll(tt.body, "\n", `\n`), func(t *testing.T) {
			m := newMemObjects()
			m.put(testBucket, "in", []byte(tt.body))
			r := NewReader(m, []string{testBucket})
			src := testSource("in", tt.format, nil)
			obj, err := r.ScanItems(context.Background(), src)
			require.NoError(t, err)
			require.Zero(t, obj.Total)
			require.Equal(t, tt.header, obj.Header)
			_, _, err = r.ReadItems(context.Background(), src, obj, obj.First, []int64{0})
			requireItemsError(t, err, src, "item 0 wanted, but the object has 0 items")
		})
	}
}

func TestItemErrors(t *testing.T) {
	big := strings.Repeat("x", engine.MaxItemBytes)
	tests := []struct {
		name, format, body string
		fields             map[string]model.ParamType
		want               string
	}{
		{"jsonl array after a blank line", "jsonl", "{\"a\":1}\n\n[1,2]\n{\"a\":3}\n", nil, " line 3: not a JSON object but an array"},
		{"jsonl invalid", "jsonl", "{\"a\":1}\r\n{\"a\":\r\n", nil, " line 2: not a JSON object: "},
		{"jsonl trailing data", "jsonl", `{"a":1} {"b":2}`, nil, " line 1: not a JSON object: "},
		{"jsonl scalar", "jsonl", "{}\n42", nil, " line 2: not a JSON object but a number"},
		{"jsonl null", "jsonl", `{"a":null}`, nil, ` line 1: field "a": null is not a parameter value`},
		{"jsonl nested array", "jsonl", `{"a":[[1]]}`, nil, ` line 1: field "a": element 0: nested`},
		{"missing field", "jsonl", "{\"n\":1}\n{\"m\":2}", map[string]model.ParamType{"n": "LONG"}, ` line 2: no field "n" (declared LONG)`},
		{"wrong type", "jsonl", "{\"n\":1}\n{\"n\":\"two\"}", map[string]model.ParamType{"n": "LONG"}, ` line 2: field "n": a STRING, declared LONG`},
		{"double for long", "jsonl", `{"n":1.5}`, map[string]model.ParamType{"n": "LONG"}, `field "n": a DOUBLE, declared LONG`},
		{"reserved name", "jsonl", `{"loop_index":1}`, nil, ` line 1: field name "loop_index" is reserved`},
		{"reserved RUN_POLICY", "json", `[{"RUN_POLICY":"x"}]`, nil, `field name "RUN_POLICY" is reserved`},
		{"invalid name", "jsonl", `{"1abc":1}`, nil, `field name "1abc" is invalid`},
		{"empty name", "jsonl", `{"":1}`, nil, `field name "" is invalid`},
		{"maestro prefix", "jsonl", `{"maestro_x":1}`, nil, `must not start with "maestro_"`},
		{"jsonl too large", "jsonl", "{}\n\n{\"a\":\"" + big + "\"}\n", nil, " line 3: item larger than 65536 bytes"},
		{"csv typed field", "csv", "n\n1\n", map[string]model.ParamType{"n": "LONG"}, `field "n" is declared LONG, but a CSV item's fields are STRING`},
		{"csv reserved header", "csv", "a,step_id\n1,2\n", nil, ` line 1: CSV header: field name "step_id" is reserved`},
		{"csv duplicate header", "csv", "a,b,a\n", nil, `CSV header: field "a" is named twice`},
		{"csv header lacks a field", "csv", "a\n1\n", map[string]model.ParamType{"n": "STRING"}, `CSV header: no field "n"`},
		{"csv header too long", "csv", strings.Repeat("h", 20<<10) + "\n", nil, " line 1: header larger than 16384 bytes"},
		{"csv row too wide", "csv", "a,b\r\n1,2\r\n\"x\ny\",2,3\r\n", nil, " line 3: 3 fields, the header has 2"},
		{"csv row too narrow", "csv", "a,b\n\n1\n", nil, " line 3: 1 fields, the header has 2"},
		{"csv bare quote", "csv", "a\nx\ny\"z\n", nil, ` line 3: bare " in non-quoted-field`},
		{"csv unclosed quote", "csv", "a\nx\n\"abc\nd\n", nil, ` line 3: extraneous or missing " in quoted-field`},
		{"csv row too large", "csv", "a\n1\n\"" + big + "\"\n", nil, " line 3: item larger than 65536 bytes"},
		{"json not an array", "json", `{"a":1}`, nil, " line 1: not a JSON array"},
		{"json scalar element", "json", "[{\"a\":1},\n 2]", nil, " line 2, item 1 (byte 11): not a JSON object"},
		{"json trailing comma", "json", "[{},]", nil, " line 1, item 1 (byte 4): not a JSON object"},
		{"json missing comma", "json", "[{} {}]", nil, " item 1 (byte 4): want ',' or ']' after item 0"},
		{"json not closed", "json", "[{}, {}", nil, "the array is not closed"},
		{"json element not closed", "json", `[{"a":"}`, nil, ` line 1, item 0 (byte 1): not a JSON object: the object is not closed`},
		{"json invalid element", "json", `[{"a":}]`, nil, ` item 0 (byte 1): not a JSON object: invalid character`},
		{"json data after", "json", "[{}]\n x", nil, ` line 2 (byte 6): data after the array: 'x'`},
		{"json too large", "json", `[{}, {"a":"` + big + `"}]`, nil, " line 1, item 1 (byte 5): item larger than 65536 bytes"},
		{"unknown format", "xml", "", nil, `: unknown format "xml" (want jsonl, csv or json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemObjects()
			m.put(testBucket, "in", []byte(tt.body))
			src := testSource("in", tt.format, tt.fields)
			_, err := NewReader(m, []string{testBucket}).ScanItems(context.Background(), src)
			requireItemsError(t, err, src, tt.want)
		})
	}
}

func TestSourceErrors(t *testing.T) {
	m := newMemObjects()
	m.put(testBucket, "in.jsonl", []byte("{}\n"))
	tests := []struct {
		name, uri, want string
		fail            error
	}{
		{"other bucket", "s3://someone-elses/in.jsonl",
			`: bucket "someone-elses" may not be read: only the stack's signals bucket and its attached buckets (attachBuckets) may be read`, nil},
		{"not an S3 URI", "https://x/y", "is not an s3://bucket/key URI", nil},
		{"no key", "s3://" + testBucket + "/", "names no bucket and key", nil},
		{"missing object", "s3://" + testBucket + "/none.jsonl", ": no such object", nil},
		{"denied", "s3://" + testBucket + "/in.jsonl", ": access denied", ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m.fail = tt.fail
			src := engine.ItemsSource{URI: tt.uri, Format: "jsonl"}
			_, err := NewReader(m, []string{testBucket}).ScanItems(context.Background(), src)
			requireItemsError(t, err, src, tt.want)
		})
	}
}

// A read that fails is no ItemsError: the decision is tried again.
func TestTransportErrorIsNotItemsError(t *testing.T) {
	m := newMemObjects()
	m.put(testBucket, "in", []byte("{}\n{}\n"))
	r := NewReader(m, []string{testBucket})
	src := testSource("in", "jsonl", nil)
	obj, err := r.ScanItems(context.Background(), src)
	require.NoError(t, err)

	reset := errors.New("connection reset")
	m.fail = reset
	_, err = r.ScanItems(context.Background(), src)
	require.ErrorIs(t, err, reset)
	var ie *engine.ItemsError
	require.False(t, errors.As(err, &ie), "%v is an ItemsError", err)
	_, _, err = r.ReadItems(context.Background(), src, obj, obj.First, []int64{1})
	require.ErrorIs(t, err, reset)
	require.False(t, errors.As(err, &ie), "%v is an ItemsError", err)
}

func TestItemsLimit(t *testing.T) {
	t.Parallel()
	m := newMemObjects()
	m.put(testBucket, "many", []byte(strings.Repeat("{}\n", engine.MaxIterations+1)))
	src := testSource("many", "jsonl", nil)
	_, err := NewReader(m, []string{testBucket}).ScanItems(context.Background(), src)
	requireItemsError(t, err, src, ": more than 1000000 items, the limit of a foreach step")
}
