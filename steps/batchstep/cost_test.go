package batchstep

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
)

// A Batch job's end on a Fargate compute environment gives what Fargate
// billed it for; on EC2, nothing of its own.
func TestJobEndedReportsFargateCompute(t *testing.T) {
	r := &Runner{}
	for _, tc := range []struct {
		name   string
		detail string
		want   pricing.Usage
	}{
		{"Fargate", `"platformCapabilities":["FARGATE"],"startedAt":1764324000000,"stoppedAt":1764324090500,
			"container":{"exitCode":%s,"resourceRequirements":[{"type":"VCPU","value":"0.5"},{"type":"MEMORY","value":"1024"}]}`,
			pricing.Usage{pricing.FargateVCPUSeconds: 45.5, pricing.FargateGBSeconds: 91}},
		{"Fargate on arm64 with storage", `"platformCapabilities":["FARGATE"],"startedAt":1764324000000,"stoppedAt":1764324001000,
			"container":{"exitCode":%s,"resourceRequirements":[{"type":"VCPU","value":"1"},{"type":"MEMORY","value":"2048"}],
			"ephemeralStorage":{"sizeInGiB":21},"runtimePlatform":{"cpuArchitecture":"ARM64"}}`,
			pricing.Usage{pricing.FargateARMVCPUSeconds: 60, pricing.FargateARMGBSeconds: 120, pricing.FargateStorageGBSeconds: 60}},
		{"EC2", `"platformCapabilities":["EC2"],"startedAt":1764324000000,"stoppedAt":1764324090000,
			"container":{"exitCode":%s,"resourceRequirements":[{"type":"VCPU","value":"1"},{"type":"MEMORY","value":"1024"}]}`, nil},
		{"never started", `"platformCapabilities":["FARGATE"],"stoppedAt":1764324090000,
			"container":{"exitCode":%s,"resourceRequirements":[{"type":"VCPU","value":"1"},{"type":"MEMORY","value":"1024"}]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, end := range []struct{ status, exit string }{{"SUCCEEDED", "0"}, {"FAILED", "1"}} {
				detail := `{"jobId":"j-1","status":"` + end.status + `",` + strings.Replace(tc.detail, "%s", end.exit, 1) + `}`
				ev := orchestrator.JobEvent{Source: "aws.batch", DetailType: "Batch Job State Change", Detail: json.RawMessage(detail)}
				_, c, ok, err := r.JobEnded(context.Background(), ev)
				if err != nil || !ok {
					t.Fatalf("%s: JobEnded: ok %v, %v", end.status, ok, err)
				}
				if len(c.Compute) != len(tc.want) {
					t.Fatalf("%s: compute %v, want %v", end.status, c.Compute, tc.want)
				}
				for k, v := range tc.want {
					if c.Compute[k] != v {
						t.Errorf("%s: %s = %v, want %v", end.status, k, c.Compute[k], v)
					}
				}
			}
		})
	}
}
