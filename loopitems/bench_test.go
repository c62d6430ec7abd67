package loopitems

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

// BenchmarkScanItems scans a jsonl object of 100,000 lines held in memory.
func BenchmarkScanItems(b *testing.B) {
	var body bytes.Buffer
	for i := range 100_000 {
		fmt.Fprintf(&body, "{\"file\":\"s3://bucket/path/to/file-%06d.parquet\",\"n\":%d,\"size\":%d.25,\"ok\":true}\n", i, i, i*7)
	}
	m := newMemObjects()
	m.put(testBucket, "in", body.Bytes())
	r := NewReader(m, []string{testBucket})
	src := testSource("in", "jsonl", map[string]model.ParamType{"file": model.TypeString, "n": model.TypeLong})
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		obj, err := r.ScanItems(context.Background(), src)
		if err != nil || obj.Total != 100_000 {
			b.Fatalf("%+v, %v", obj, err)
		}
	}
}
