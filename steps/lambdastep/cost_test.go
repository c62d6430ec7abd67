package lambdastep

import (
	"encoding/base64"
	"testing"

	"github.com/maestro-serverless/maestro/pricing"
)

// An invocation's log tail gives what it was billed for: its REPORT line's
// billed duration at its memory size.
func TestBilledReadsTheReportLine(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, tail string
		want       pricing.Usage
	}{
		{"a REPORT line", b64("START RequestId: 1 Version: $LATEST\nhello\nEND RequestId: 1\nREPORT RequestId: 1\tDuration: 1499.21 ms\tBilled Duration: 1500 ms\tMemory Size: 512 MB\tMax Memory Used: 70 MB\tInit Duration: 120.5 ms\t\n"),
			pricing.Usage{pricing.LambdaStepRequests: 1, pricing.LambdaStepGBSeconds: 0.75}},
		{"no REPORT line", b64("hello\n"), nil},
		{"no tail", "", nil},
		{"not base64", "%%%", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := billed(tc.tail)
			if len(got) != len(tc.want) {
				t.Fatalf("billed = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}
