package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/maestro-serverless/maestro/pricing"
)

// RecordedCost compares what a workload's runs recorded they cost their
// orchestration (each instance view's cost parts of kind "orchestration",
// its loop's or children's included) with what the meter measured the
// workload's requests were billed, item by item, in US dollars.
type RecordedCost struct {
	// Recorded sums the workload's instances' recorded orchestration
	// usage, by pricing part; RecordedUSD prices it.
	Recorded    pricing.Usage `json:"recorded"`
	RecordedUSD float64       `json:"recorded_usd"`
	// Metered is what the meter measured of the same parts: DynamoDB
	// write units as billed and read units, SQS and SNS requests as
	// billed, every function's invocations and its duration as measured
	// here at its deployed memory (arm64), the API's requests; MeteredUSD
	// prices it.
	Metered    pricing.Usage `json:"metered"`
	MeteredUSD float64       `json:"metered_usd"`
	// Ratio is RecordedUSD over MeteredUSD.
	Ratio float64 `json:"ratio"`
}

// RecordedTolerance is how far a workload's recorded cost may be from its
// metered one, as a fraction of it: the report says which are.
const RecordedTolerance = 0.05

// Within reports whether the recorded cost is within frac (0.05: 5 %) of
// the metered one.
func (r RecordedCost) Within(frac float64) bool {
	return r.MeteredUSD > 0 && math.Abs(r.RecordedUSD-r.MeteredUSD) <= frac*r.MeteredUSD
}

// meteredOrchestration is the meter's figures as the recorded parts.
func meteredOrchestration(u Usage, fns map[string]FunctionUsage, apiFunction string) pricing.Usage {
	m := pricing.Usage{
		pricing.DynamoDBWriteUnits: u.DynamoDBWriteUnits,
		pricing.DynamoDBReadUnits:  u.DynamoDBReadUnits,
		pricing.SQSRequests:        float64(u.SQSBilledRequests - u.SQSFIFOBilledRequests),
		pricing.SQSFIFORequests:    float64(u.SQSFIFOBilledRequests),
		pricing.SNSRequests:        float64(u.SNSBilledMessages),
		pricing.APIRequests:        float64(fns[apiFunction].Invocations),
	}
	for name, f := range fns {
		m[pricing.LambdaRequests] += float64(f.Invocations)
		m[pricing.LambdaGBSeconds] += float64(f.BilledMillis) / 1000 * float64(DeployedMemoryMB(name)) / 1024
	}
	return m
}

// orchestrationPart reports whether a cost part is the orchestration's.
func orchestrationPart(name string) bool { return pricing.KindOf(name) == pricing.KindOrchestration }

// recordedCost reads the recorded cost of instances insts of workflow wf
// (unmetered) and compares it with metered.
func recordedCost(ctx context.Context, c *client, wf string, insts []int64, metered pricing.Usage) (*RecordedCost, error) {
	rc := &RecordedCost{Recorded: pricing.Usage{}, Metered: metered}
	for _, id := range insts {
		v, err := c.instance(withoutMetering(ctx), wf, id)
		if err != nil {
			return nil, fmt.Errorf("read instance %d: %w", id, err)
		}
		if v.Cost == nil {
			continue
		}
		for name, p := range v.Cost.Parts {
			if orchestrationPart(name) {
				rc.Recorded[name] += p.Count
			}
		}
	}
	rc.RecordedUSD = pricing.Price(rc.Recorded).TotalUSD
	rc.MeteredUSD = pricing.Price(metered).TotalUSD
	if rc.MeteredUSD > 0 {
		rc.Ratio = rc.RecordedUSD / rc.MeteredUSD
	}
	return rc, nil
}

// String is one line per part: recorded and metered counts and dollars.
func (r RecordedCost) String() string {
	names := make([]string, 0, len(r.Metered))
	seen := map[string]bool{}
	for _, u := range []pricing.Usage{r.Metered, r.Recorded} {
		for n := range u {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	var b strings.Builder
	rp, mp := pricing.Price(r.Recorded), pricing.Price(r.Metered)
	for _, n := range names {
		fmt.Fprintf(&b, "    %-22s recorded %12.3f $%.8f  metered %12.3f $%.8f\n", n, r.Recorded[n], rp.Parts[n].USD, r.Metered[n], mp.Parts[n].USD)
	}
	return b.String()
}
