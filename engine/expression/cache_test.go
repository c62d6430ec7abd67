package expression

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

// TestProgramBytesEstimate: the estimate of a program's memory, which bounds
// the compile cache, is close to the heap programs of every shape hold.
func TestProgramBytesEstimate(t *testing.T) {
	for name, gen := range map[string]func(i int) string{
		"sum":           func(i int) string { return fmt.Sprintf("%d + 1", i) },
		"concatenation": func(i int) string { return fmt.Sprintf("'%d' + '%s'", i, strings.Repeat("x", 100)) },
		"long literal":  func(i int) string { return fmt.Sprintf("'%d%s' matches 'a'", i, strings.Repeat("x", 9000)) },
		"many nodes":    func(i int) string { return strings.Repeat("1 + ", 400) + fmt.Sprint(i) },
		"regex":         func(i int) string { return fmt.Sprintf("'%d' matches '%s'", i, strings.Repeat("(a|b)", 1500)) },
		"folded array":  func(i int) string { return fmt.Sprintf("[%s%d]", strings.Repeat("'abcdefghij',", 700), i) },
	} {
		l := New(DefaultLimits())
		const n = 100
		progs := make([]*Program, 0, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := 0; i < n; i++ {
			p, err := l.compile(gen(i), "", &recordingScope{scope: model.Scope{}})
			if err != nil {
				t.Fatal(err)
			}
			progs = append(progs, p)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := float64(after.HeapAlloc-before.HeapAlloc) / n
		est := float64(progs[n/2].bytes)
		t.Logf("%s: %.0f bytes held, %.0f estimated", name, held, est)
		if est < 0.8*held || est > 1.6*held+1024 {
			t.Errorf("%s: %.0f bytes held a program, estimated %.0f", name, held, est)
		}
		runtime.KeepAlive(progs)
	}
}

// TestCompileCacheIsBoundedByBytes: programs are kept up to the byte bound
// whatever their count, and a program over a quarter of it is never kept.
func TestCompileCacheIsBoundedByBytes(t *testing.T) {
	l := New(DefaultLimits())
	var peak int64
	for i := 0; i < 600; i++ { // ~250 KB each: 150 MB compiled in all
		if _, err := l.Compile(strings.Repeat("1 + ", 400)+fmt.Sprint(i), "", model.Scope{}); err != nil {
			t.Fatal(err)
		}
		if l.cache.bytes > compileCacheBytes {
			t.Fatalf("cache holds %d bytes", l.cache.bytes)
		}
		peak = max(peak, l.cache.bytes)
	}
	if peak < compileCacheBytes*3/4 {
		t.Fatalf("cache held at most %d bytes", peak)
	}
}
