package definition_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition"
)

// def300 builds a 300-step definition the way users write them: a chain with
// a fan-out, edge conditions, literal params and one expression param per
// step referring to a workflow param and to its predecessor's param.
func def300(exprEvery int) []byte {
	var b strings.Builder
	b.WriteString(`{"properties":{"owner":"bench","run_strategy":"parallel"},"workflow":{"id":"bench-300",`)
	b.WriteString(`"params":{"base":{"value":5,"type":"LONG"},"name":{"value":"x","type":"STRING"}},"steps":[`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		succ := ""
		if i+1 < 300 {
			succ = fmt.Sprintf(`"s%d":"base > 0"`, i+1)
		}
		if i+2 < 300 && i%10 == 0 {
			succ += fmt.Sprintf(`,"s%d":"true"`, i+2)
		}
		params := fmt.Sprintf(`"n":{"value":%d,"type":"LONG"},"label":{"value":"step ${name} %d","type":"STRING"}`, i, i)
		if exprEvery > 0 && i%exprEvery == 0 && i > 0 {
			params += fmt.Sprintf(`,"e":{"expression":"base + s%d__n * 2","type":"LONG"}`, i-1)
		}
		fmt.Fprintf(&b, `{"step":{"id":"s%d","type":"NoOp","params":{%s},"transition":{"successors":{%s}}}}`, i, params, succ)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkCheck300 is the API's create-time path: decode, validate and
// type-check every expression of a 300-step definition.
func BenchmarkCheck300(b *testing.B) {
	for _, every := range []int{0, 10, 1} {
		data := def300(every)
		b.Run(fmt.Sprintf("expr-every-%d-steps", every), func(b *testing.B) {
			c := definition.NewChecker()
			if _, err := c.Check(data, definition.JSON); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Check(data, definition.JSON); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Cold: a new checker (empty compile cache) for every check.
		b.Run(fmt.Sprintf("expr-every-%d-steps-cold", every), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := definition.NewChecker().Check(data, definition.JSON); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
