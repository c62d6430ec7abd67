package pricing

import (
	"math"
	"testing"
)

func TestFargate(t *testing.T) {
	for _, tc := range []struct {
		name              string
		cpu, mem, storage int
		arm               bool
		start, stop       int64
		want              Usage
	}{
		{"a minute at least", 256, 512, 0, false, 1000, 2000, Usage{FargateVCPUSeconds: 15, FargateGBSeconds: 30}},
		{"rounded up to the second", 1024, 2048, 0, false, 1000, 1000 + 90_001, Usage{FargateVCPUSeconds: 91, FargateGBSeconds: 182}},
		{"arm64", 512, 1024, 0, true, 1, 120_001, Usage{FargateARMVCPUSeconds: 60, FargateARMGBSeconds: 120}},
		{"storage past 20 GB", 1024, 1024, 30, false, 1, 60_001, Usage{FargateVCPUSeconds: 60, FargateGBSeconds: 60, FargateStorageGBSeconds: 600}},
		{"no start", 256, 512, 0, false, 0, 2000, nil},
		{"stop before start", 256, 512, 0, false, 3000, 2000, nil},
		{"no cpu", 0, 512, 0, false, 1000, 2000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Fargate(tc.cpu, tc.mem, tc.storage, tc.arm, tc.start, tc.stop)
			if len(got) != len(tc.want) {
				t.Fatalf("Fargate = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestPrice(t *testing.T) {
	// A 0.25 vCPU, 0.5 GB x86 task for an hour: $0.01012 + $0.0022225.
	u := Fargate(256, 512, 0, false, 1, 3600_000+1)
	c := Price(u)
	if want := 0.04048/4 + 0.004445/2; math.Abs(c.TotalUSD-want) > 1e-12 {
		t.Errorf("total %v, want %v", c.TotalUSD, want)
	}
	if p := c.Parts[FargateVCPUSeconds]; p.Count != 900 || math.Abs(p.USD-0.01012) > 1e-12 {
		t.Errorf("vCPU part %+v", p)
	}
	if len(c.Covers) != 3 || c.Covers[0] != KindFargate || c.Covers[1] != KindLambdaSteps || c.Covers[2] != KindOrchestration || c.PricesOf != Date {
		t.Errorf("covers %v, prices of %q", c.Covers, c.PricesOf)
	}
	if z := Price(nil); z.TotalUSD != 0 || z.Parts == nil || len(z.Covers) == 0 {
		t.Errorf("an empty usage prices as %+v: want 0 with its parts and what it covers", z)
	}
}

func TestAdd(t *testing.T) {
	a := Usage{FargateVCPUSeconds: 1}
	b := a.Add(Usage{FargateVCPUSeconds: 2, "unknown_part": 5, FargateGBSeconds: math.NaN(), FargateARMGBSeconds: -1, FargateStorageGBSeconds: math.Inf(1)})
	if a[FargateVCPUSeconds] != 1 {
		t.Errorf("Add changed its receiver: %v", a)
	}
	if len(b) != 1 || b[FargateVCPUSeconds] != 3 {
		t.Errorf("Add = %v, want only %s: 3", b, FargateVCPUSeconds)
	}
	if got := Usage(nil).Add(Usage{FargateGBSeconds: 2}); got[FargateGBSeconds] != 2 {
		t.Errorf("nil.Add = %v", got)
	}
}

func TestLambdaInvocation(t *testing.T) {
	u := LambdaInvocation(1500, 512)
	if u[LambdaStepRequests] != 1 || u[LambdaStepGBSeconds] != 0.75 {
		t.Fatalf("LambdaInvocation(1500 ms, 512 MB) = %v, want 1 request and 0.75 GB-s", u)
	}
	if c := Price(u); math.Abs(c.TotalUSD-(0.2/1e6+0.75*0.0000166667)) > 1e-15 {
		t.Errorf("priced %v", c.TotalUSD)
	}
	if LambdaInvocation(10, 0) != nil || LambdaInvocation(-1, 128) != nil {
		t.Error("an invocation without memory or with a negative duration is billed something")
	}
}
