package ecsstep

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
)

// A stopped task's event gives what Fargate billed it for: from its image
// pull's start (or its start) to its stop, at its size and architecture.
func TestJobEndedReportsFargateCompute(t *testing.T) {
	r := &Runner{cfg: Config{StartedBy: "maestro-test"}}
	base := `"taskArn":"arn:aws:ecs:us-east-1:1:task/c/abc","lastStatus":"STOPPED","startedBy":"maestro-test",
		"stopCode":"EssentialContainerExited","containers":[{"name":"user","exitCode":%s}]`
	for _, tc := range []struct {
		name   string
		detail string
		want   pricing.Usage
	}{
		{"x86 from the image pull", `"launchType":"FARGATE","cpu":"1024","memory":"2048","pullStartedAt":"2026-11-28T10:00:00.000Z","startedAt":"2026-11-28T10:00:20Z","stoppedAt":"2026-11-28T10:01:30.200Z"`,
			pricing.Usage{pricing.FargateVCPUSeconds: 91, pricing.FargateGBSeconds: 182}},
		{"arm64 with storage, from its start", `"launchType":"FARGATE","cpu":"512","memory":"1024","startedAt":"2026-11-28T10:00:00Z","stoppedAt":"2026-11-28T10:02:00Z",
			"ephemeralStorage":{"sizeInGiB":30},"attributes":[{"name":"ecs.cpu-architecture","value":"arm64"}]`,
			pricing.Usage{pricing.FargateARMVCPUSeconds: 60, pricing.FargateARMGBSeconds: 120, pricing.FargateStorageGBSeconds: 1200}},
		{"a minute at least", `"launchType":"FARGATE","cpu":"256","memory":"512","pullStartedAt":"2026-11-28T10:00:00Z","stoppedAt":"2026-11-28T10:00:05Z"`,
			pricing.Usage{pricing.FargateVCPUSeconds: 15, pricing.FargateGBSeconds: 30}},
		{"on EC2 the instances are billed, not the task", `"launchType":"EC2","cpu":"1024","memory":"2048","pullStartedAt":"2026-11-28T10:00:00Z","stoppedAt":"2026-11-28T10:05:00Z"`, nil},
		{"never started", `"launchType":"FARGATE","cpu":"1024","memory":"2048","stoppedAt":"2026-11-28T10:05:00Z"`, nil},
		{"times that are not RFC 3339", `"launchType":"FARGATE","cpu":"1024","memory":"2048","pullStartedAt":"yesterday","stoppedAt":"2026-11-28T10:05:00Z"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, exit := range []string{"0", "1"} {
				detail := "{" + fmt.Sprintf(base, exit) + "," + tc.detail + "}"
				ev := orchestrator.JobEvent{Source: "aws.ecs", DetailType: "ECS Task State Change", Detail: json.RawMessage(detail)}
				_, c, ok, err := r.JobEnded(context.Background(), ev)
				if err != nil || !ok {
					t.Fatalf("exit %s: JobEnded: ok %v, %v", exit, ok, err)
				}
				if len(c.Compute) != len(tc.want) {
					t.Fatalf("exit %s: compute %v, want %v", exit, c.Compute, tc.want)
				}
				for k, v := range tc.want {
					if c.Compute[k] != v {
						t.Errorf("exit %s: %s = %v, want %v", exit, k, c.Compute[k], v)
					}
				}
			}
		})
	}
}
