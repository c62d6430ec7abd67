package loopitems

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// cursorObjects are objects of each format with what makes cursors hard:
// CRLF, blank lines, quoted newlines, unicode, whitespace between elements.
func cursorObjects() map[string]string {
	var jsonl, csv, js strings.Builder
	csv.WriteString("id,text,note\r\n")
	js.WriteString("\n[\n")
	for i := range 23 {
		text := fmt.Sprintf("línea %d ✓", i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&jsonl, "{\"id\":%d,\"text\":%q,\"v\":[%d.5]}\r\n", i, text, i)
			fmt.Fprintf(&csv, "%d,\"%s\r\nnext \"\"line\"\"\",x\r\n", i, text)
		case 1:
			fmt.Fprintf(&jsonl, "\n  \n{\"id\":%d,\"text\":%q}\n", i, text)
			fmt.Fprintf(&csv, "\n%d,%s,\n", i, text)
		default:
			fmt.Fprintf(&jsonl, "{\"id\":%d,\"text\":%q,\"m\":{\"k\":\"}\"}}\n", i, text)
			fmt.Fprintf(&csv, "%d,\"a,\"\"b\"\"\n\nc\",%s\n", i, text)
		}
		if i > 0 {
			js.WriteString(" ,\r\n ")
		}
		fmt.Fprintf(&js, "{\"id\":%d,\"text\":%q,\"s\":\"[{\\\"\"}", i, text)
	}
	js.WriteString("\n]\n")
	jsonl.WriteString(`{"id":23,"text":"no newline at the end"}`)
	return map[string]string{model.ItemsJSONL: jsonl.String(), model.ItemsCSV: csv.String(), model.ItemsJSON: js.String()}
}

// Reading all items in batches of k, each from the cursor the last
// returned, gives the same items as one read; every cursor's line is the
// line of its offset.
func TestBatchesFromCursors(t *testing.T) {
	for format, body := range cursorObjects() {
		t.Run(format, func(t *testing.T) {
			_, r, src, _ := scanned(t, []byte(body), format)
			obj, all := readAll(t, r, src)
			require.GreaterOrEqual(t, obj.Total, int64(23))
			requireLineOf(t, body, obj.First)
			for k := int64(1); k <= obj.Total; k++ {
				var got []engine.Values
				at := obj.First
				for i := int64(0); i < obj.Total; i += k {
					items, next, err := r.ReadItems(context.Background(), src, obj, at, upto(min(i+k, obj.Total))[i:])
					require.NoError(t, err)
					require.Equal(t, min(i+k, obj.Total), next.Index)
					requireLineOf(t, body, next)
					got = append(got, items...)
					at = next
				}
				require.Equal(t, all, got, "batches of %d", k)
			}
		})
	}
}

// requireLineOf checks that c.Line is the line of byte c.Offset of body.
func requireLineOf(t *testing.T, body string, c engine.ItemsCursor) {
	t.Helper()
	require.Equal(t, int64(strings.Count(body[:c.Offset], "\n")+1), c.Line, "cursor %+v", c)
}

func TestReadItemsWithGaps(t *testing.T) {
	for format, body := range cursorObjects() {
		t.Run(format, func(t *testing.T) {
			_, r, src, _ := scanned(t, []byte(body), format)
			obj, all := readAll(t, r, src)

			items, next, err := r.ReadItems(context.Background(), src, obj, obj.First, []int64{2, 5, 9})
			require.NoError(t, err)
			require.Equal(t, []engine.Values{all[2], all[5], all[9]}, items)
			require.Equal(t, int64(10), next.Index)

			items, next, err = r.ReadItems(context.Background(), src, obj, next, []int64{12, obj.Total - 1})
			require.NoError(t, err)
			require.Equal(t, []engine.Values{all[12], all[obj.Total-1]}, items)
			require.Equal(t, obj.Total, next.Index)
		})
	}
}

func TestReadItemsWant(t *testing.T) {
	_, r, src, obj := scanned(t, []byte("{}\n{}\n{}\n"), "jsonl")
	_, at, err := r.ReadItems(context.Background(), src, obj, obj.First, []int64{0})
	require.NoError(t, err)

	items, next, err := r.ReadItems(context.Background(), src, obj, at, nil)
	require.NoError(t, err)
	require.Empty(t, items)
	require.Equal(t, at, next)

	_, _, err = r.ReadItems(context.Background(), src, obj, at, []int64{1, 3})
	requireItemsError(t, err, src, ": item 3 wanted, but the object has 3 items")

	for _, want := range [][]int64{{0}, {2, 1}, {1, 1}} {
		_, _, err = r.ReadItems(context.Background(), src, obj, at, want)
		var ie *engine.ItemsError
		require.Error(t, err)
		require.NotErrorAs(t, err, &ie, "want %v: a caller's mistake is not the object's", want)
	}
}

func TestReadItemsChanged(t *testing.T) {
	m, r, src, obj := scanned(t, []byte("{\"a\":1}\n{\"a\":2}\n"), "jsonl")
	m.put(testBucket, "in", []byte("{\"a\":3}\n{\"a\":4}\n"))
	_, _, err := r.ReadItems(context.Background(), src, obj, obj.First, []int64{1})
	requireItemsError(t, err, src, ": changed since the loop started")
}

// A hostile object costs no more memory than an item: the reader stops
// at the first item too large, having read little of the object.
func TestHostileObjects(t *testing.T) {
	const big = MaxObjectBytes // the largest object scanned
	tests := []struct {
		name, format string
		object       patternObject
		want         string
	}{
		{"one huge line", "jsonl", patternObject{head: []byte("{}\n\n"), fill: 'x', size: big}, " line 3: item larger than 65536 bytes"},
		{"a quote never closed", "csv", patternObject{head: []byte("a\n1\n\""), fill: 'x', size: big}, " line 3: item larger than 65536 bytes"},
		{"newlines in a quote", "csv", patternObject{head: []byte("a\n\""), fill: '\n', size: big}, " line 2: item larger than 65536 bytes"},
		{"a huge header", "csv", patternObject{fill: 'h', size: big}, " line 1: header larger than 16384 bytes"},
		{"a huge element", "json", patternObject{head: []byte(`[{"a":"`), fill: 'x', size: big}, " item 0 (byte 1): item larger than 65536 bytes"},
		{"a deep element", "json", patternObject{head: []byte(`[{"a":`), fill: '[', size: big}, " item 0 (byte 1): item larger than 65536 bytes"},
		{"a larger object", "jsonl", patternObject{head: []byte("{}\n"), fill: '\n', size: big + 1}, ": the object is 67108865 bytes, more than the limit of 67108864 (64 MiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemObjects()
			m.putReader(testBucket, "in", tt.object, tt.object.size, `"hostile"`)
			src := testSource("in", tt.format, nil)
			_, err := NewReader(m, []string{testBucket}).ScanItems(context.Background(), src)
			requireItemsError(t, err, src, tt.want)
			require.Less(t, m.bytesServed(), int64(256<<10))
		})
	}
}

// Whitespace is read as it comes, not kept: 9 MiB of it between JSON
// elements take two GETs and no memory.
func TestLongWhitespace(t *testing.T) {
	t.Parallel()
	obj := patternObject{head: []byte("[{}"), fill: ' ', size: 9 << 20}
	m := newMemObjects()
	m.putReader(testBucket, "in", obj, obj.size, `"w"`)
	src := testSource("in", "json", nil)
	_, err := NewReader(m, []string{testBucket}).ScanItems(context.Background(), src)
	requireItemsError(t, err, src, "the array is not closed")
	require.Len(t, m.calls(), 2)
}

// ScanItems reads in GETs of 8 MiB; ReadItems sizes its first GET from the
// object's average item size, doubles the next ones, and stops once it
// has the last item wanted.
func TestRangeGets(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := 0; b.Len() < 17<<20; i++ {
		fmt.Fprintf(&b, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat("p", 1000))
	}
	m, _, src, obj := scanned(t, b.Bytes(), "jsonl")
	require.Equal(t, []getCall{{"in", 0, 8<<20 - 1}, {"in", 8 << 20, 16<<20 - 1}, {"in", 16 << 20, 24<<20 - 1}}, m.calls())

	avg := float64(obj.Size) / float64(obj.Total)
	tests := []struct {
		name string
		want []int64
		gets []int64 // the lengths of the GETs
	}{
		{"one item", []int64{3}, []int64{readChunk}},
		{"a batch", upto(200), []int64{int64(avg*200*1.5) + 4<<10}},
		{"far ahead", []int64{4000}, []int64{int64(avg*4001*1.5) + 4<<10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(m, []string{testBucket}) // its cache empty
			before := len(m.calls())
			items, _, err := r.ReadItems(context.Background(), src, obj, obj.First, tt.want)
			require.NoError(t, err)
			require.Len(t, items, len(tt.want))
			require.Equal(t, int64(tt.want[len(tt.want)-1]), items[len(items)-1]["i"])
			var gets []int64
			for _, c := range m.calls()[before:] {
				gets = append(gets, c.to-c.from+1)
			}
			require.Equal(t, tt.gets, gets)
		})
	}
}

// A read that goes on from where the last stopped takes its items from
// the chunk the last fetched, kept by the version scanned.
func TestReadsShareTheirChunks(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&b, "{\"i\":%d}\n", i)
	}
	m, r, src, obj := scanned(t, b.Bytes(), "jsonl")
	before := len(m.calls())
	at := obj.First
	for i := int64(0); i < obj.Total; i += 25 {
		items, next, err := r.ReadItems(context.Background(), src, obj, at, upto(min(i+25, obj.Total))[i:])
		require.NoError(t, err)
		require.Equal(t, i, items[0]["i"])
		at = next
	}
	require.Len(t, m.calls()[before:], 1, "%d bytes in one chunk of %d: one GET for 200 reads", obj.Size, readChunk)

	// The object is replaced: the cached chunk is still the version the
	// loop scanned (its ETag), and a read that must fetch fails.
	m.put(testBucket, "in", bytes.ReplaceAll(b.Bytes(), []byte(`"i"`), []byte(`"j"`)))
	items, _, err := r.ReadItems(context.Background(), src, obj, obj.First, []int64{0})
	require.NoError(t, err)
	require.Equal(t, int64(0), items[0]["i"], "the scanned version's bytes")
	_, _, err = NewReader(m, []string{testBucket}).ReadItems(context.Background(), src, obj, obj.First, []int64{0})
	var ie *engine.ItemsError
	require.ErrorAs(t, err, &ie)
	require.Contains(t, ie.Msg, "changed since the loop started")
}

// When the items wanted are larger than the average, ReadItems fetches
// more in GETs doubling up to 8 MiB.
func TestRangeGetsDouble(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString(strings.Repeat("{}\n", 10000))
	for i := range 1000 {
		fmt.Fprintf(&b, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat("p", 10000))
	}
	m, r, src, obj := scanned(t, b.Bytes(), "jsonl")
	_, at, err := r.ReadItems(context.Background(), src, obj, obj.First, []int64{9999})
	require.NoError(t, err)

	before := len(m.calls())
	items, _, err := r.ReadItems(context.Background(), src, obj, at, upto(11000)[10000:])
	require.NoError(t, err)
	require.Len(t, items, 1000)
	require.Equal(t, int64(999), items[999]["i"])
	gets := m.calls()[before:]
	require.Greater(t, len(gets), 2)
	require.Equal(t, firstChunk(obj, at, 10999), gets[0].to-gets[0].from+1)
	for i := 1; i < len(gets); i++ {
		require.Equal(t, gets[i-1].to+1, gets[i].from)
		require.Equal(t, min(2*(gets[i-1].to-gets[i-1].from+1), maxChunk), gets[i].to-gets[i].from+1)
	}
}
