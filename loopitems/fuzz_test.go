package loopitems

import (
	"context"
	"errors"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

var fuzzFormats = []string{model.ItemsJSONL, model.ItemsCSV, model.ItemsJSON}

// FuzzScanItems checks that any object is scanned without a panic, that a
// scan's failure is the object's (an ItemsError), and that after a scan
// the items read at once and in pairs from cursors are Total.
func FuzzScanItems(f *testing.F) {
	seeds := map[int][]string{
		0: {"{\"a\":1}\n\n{\"b\":[1.5,2]}\r\n", "{}\n{\"loop_index\":1}\n", "[1]\n", `{"m":{"x":"y"}}`},
		1: {"a,b\r\n1,2\r\n\"x\ny\",\"\"\"\"\n", "a\n\"open\n", "a,b\n1\n", "\ufeffa\n\n1\n"},
		2: {"[{\"a\":1}, {\"b\":\"]\"}]", "[]", " [ {} ,\n{} ] ", "[{},]", `[{"a":"\"}"}]`},
	}
	for format, bodies := range seeds {
		for _, b := range bodies {
			f.Add(uint8(format), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, format uint8, body []byte) {
		m := newMemObjects()
		m.put(testBucket, "in", body)
		r := NewReader(m, []string{testBucket})
		src := testSource("in", fuzzFormats[int(format)%len(fuzzFormats)], nil)
		ctx := context.Background()
		obj, err := r.ScanItems(ctx, src)
		var ie *engine.ItemsError
		if err != nil {
			if !errors.As(err, &ie) {
				t.Fatalf("ScanItems: %v is no ItemsError", err)
			}
			return
		}
		if obj.Total == 0 {
			return
		}
		all, next, err := r.ReadItems(ctx, src, obj, obj.First, upto(obj.Total))
		if err != nil || int64(len(all)) != obj.Total || next.Index != obj.Total {
			t.Fatalf("ReadItems of %d items scanned: %d items, cursor %+v, %v", obj.Total, len(all), next, err)
		}
		at := obj.First
		for i := int64(0); i < obj.Total; i += 2 {
			items, next, err := r.ReadItems(ctx, src, obj, at, upto(min(i+2, obj.Total))[i:])
			if err != nil || len(items) != int(min(2, obj.Total-i)) {
				t.Fatalf("ReadItems from %+v: %d items, %v", at, len(items), err)
			}
			at = next
		}
	})
}
