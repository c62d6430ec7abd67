package model

import (
	"reflect"
	"testing"
)

// FuzzParseDefinition checks that decoding and validating never panic, and
// that whatever decodes is written back as JSON that decodes to an equal model.
func FuzzParseDefinition(f *testing.F) {
	for _, name := range corpusFiles(f) {
		f.Add(readCorpus(f, name))
	}
	for _, seed := range []string{
		`{"workflow":{"id":"w","steps":[{"step":{"id":"a","type":"NoOp"}}]}}`,
		`{"properties":{"run_strategy":7},"workflow":{"id":"w","time_triggers":[{"type":"cron","cron":"0 0 12 ? * MON-FRI *","timezone":"US/Pacific"}],"steps":[]}}`,
		`{"workflow":{"params":{"m":{"type":"MAP","value":{"a":{"type":"double","value":"1.50"}}}},"steps":[{"while":{"id":"w","condition":"x","steps":[]}}]}}`,
		`{"workflow":{"steps":[{"step":{"id":"a","transition":{"successors":{"a":true}}}}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDefinition(data)
		_ = Validate(d, ValidateOptions{Now: fixedNow})
		if err != nil {
			if d != nil {
				t.Fatalf("a failed parse returned a definition")
			}
			return
		}
		out, err := d.MarshalJSON()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		d2, err := ParseDefinition(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if !reflect.DeepEqual(d, d2) {
			out2, _ := d2.MarshalJSON()
			t.Fatalf("round trip changed the model:\n%s\n%s", out, out2)
		}
	})
}
