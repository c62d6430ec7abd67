package model

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the encoder's output")

// nonDefinitions lists the corpus files that are not workflow definitions and
// why (see testdata/README.md).
func nonDefinitions() map[string]string {
	return map[string]string{
		"fixtures/sample-invalid-wf.json":    "Maestro's negative fixture: \"definition\" instead of \"workflow\"",
		"fixtures/sample-retry-strings.json": "ParsableLong values, not a definition",
		"fixtures/sample-timeouts.json":      "timeout values, not a definition",
		"extra/sample-job-template-1.json":   "a job template, not a definition",
	}
}

// corpusFiles returns the corpus files relative to testdata/corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"*.json", "fixtures/*.json", "extra/*.json"} {
		m, err := filepath.Glob(filepath.Join("testdata", "corpus", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(filepath.Join("testdata", "corpus"), f)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	if len(out) != 49 { // 22 top-level samples, 19 fixtures, 8 extra
		t.Fatalf("found %d corpus files, want 49", len(out))
	}
	return out
}

// corpusDefinitions returns the corpus files that are workflow
// definitions: corpusFiles but nonDefinitions.
func corpusDefinitions(t testing.TB) []string {
	t.Helper()
	skip := nonDefinitions()
	var out []string
	for _, name := range corpusFiles(t) {
		if _, ok := skip[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// parseCorpus decodes corpus definition name.
func parseCorpus(t testing.TB, name string) *Definition {
	t.Helper()
	d, err := ParseDefinition(readCorpus(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestEveryCorpusFileDecodes(t *testing.T) {
	skip := nonDefinitions()
	decoded := 0
	for _, name := range corpusFiles(t) {
		_, err := ParseDefinition(readCorpus(t, name))
		if why, ok := skip[name]; ok {
			if err == nil || err.Error() != "workflow: required" {
				t.Errorf("%s (%s): want error %q, got %v", name, why, "workflow: required", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		decoded++
	}
	if want := len(corpusFiles(t)) - len(skip); decoded != want {
		t.Errorf("decoded %d definitions, want %d", decoded, want)
	}
}

// TestCorpusRoundTrip checks, for every corpus definition, that
// JSON -> model -> JSON -> model gives an equal model and that the written
// JSON says what the input said, modulo enum case and `true` conditions.
func TestCorpusRoundTrip(t *testing.T) {
	for _, name := range corpusDefinitions(t) {
		t.Run(name, func(t *testing.T) {
			in := readCorpus(t, name)
			d1, err := ParseDefinition(in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := d1.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			d2, err := ParseDefinition(out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(d1, d2) {
				t.Errorf("model changed across a round trip:\nfirst  %+v\nsecond %+v", d1.Workflow, d2.Workflow)
			}
			want, got := semantic(t, in), semantic(t, out)
			if !reflect.DeepEqual(want, got) {
				wj, _ := json.MarshalIndent(want, "", " ")
				gj, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("output differs from input:\nwant %s\ngot  %s", wj, gj)
			}
		})
	}
}

// TestCorpusGolden compares the encoder's output with testdata/golden.
func TestCorpusGolden(t *testing.T) {
	for _, name := range corpusDefinitions(t) {
		out, err := parseCorpus(t, name).MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, out, "", "  "); err != nil {
			t.Fatalf("%s: output is not JSON: %v", name, err)
		}
		pretty.WriteByte('\n')
		golden := filepath.Join("testdata", "golden", filepath.FromSlash(name))
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v (run with -update to create it)", name, err)
		}
		if !bytes.Equal(want, pretty.Bytes()) {
			t.Errorf("%s: output differs from %s:\n%s", name, golden, pretty.Bytes())
		}
	}
}

// TestCorpusThroughYAML decodes every corpus definition as YAML (JSON is
// YAML) and expects the same model as the JSON decoder gives.
func TestCorpusThroughYAML(t *testing.T) {
	for _, name := range corpusDefinitions(t) {
		in := readCorpus(t, name)
		fromJSON, err := ParseDefinition(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fromYAML, err := ParseDefinitionYAML(in)
		if err != nil {
			t.Fatalf("%s as YAML: %v", name, err)
		}
		if !reflect.DeepEqual(fromJSON, fromYAML) {
			a, _ := fromJSON.MarshalJSON()
			b, _ := fromYAML.MarshalJSON()
			t.Errorf("%s: YAML decoding differs:\njson %s\nyaml %s", name, a, b)
		}
	}
}

// semantic decodes JSON into generic values normalised for comparison:
// null members dropped (the model treats them as absent), empty
// "transition" objects dropped (Maestro reads {} as no transition), boolean
// successor conditions turned into strings, and enum values upper-cased.
func semantic(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return normalise(v, "")
}

func normalise(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			if m, ok := e.(map[string]any); ok && k == "transition" && len(m) == 0 {
				continue
			}
			if key == "successors" {
				if b, ok := e.(bool); ok {
					e = strconv.FormatBool(b)
				}
			}
			out[k] = normalise(e, k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e, key)
		}
		return out
	case string:
		switch key {
		case "type", "mode", "rule", "failure_mode", "criticality", "namespace", "run_strategy":
			return strings.ToUpper(x)
		}
	}
	return v
}

func TestNonDefinitionFixturesDecodeAsValues(t *testing.T) {
	var retries map[string]ParsableLong
	if err := json.Unmarshal(readCorpus(t, "fixtures/sample-retry-strings.json"), &retries); err != nil {
		t.Fatal(err)
	}
	wantRetries := map[string]string{"number1": "${foo}", "number2": "bar", "number3": "1+4"}
	for k, want := range wantRetries {
		if got := retries[k].Expr; got != want {
			t.Errorf("%s: Expr = %q, want %q", k, got, want)
		}
	}
	var timeouts map[string]ParsableDuration
	if err := json.Unmarshal(readCorpus(t, "fixtures/sample-timeouts.json"), &timeouts); err != nil {
		t.Fatal(err)
	}
	wantTimeouts := map[string]int64{"timeout1": 12345, "timeout2": 86400 + 600 + 5, "timeout3": 123456}
	for k, want := range wantTimeouts {
		if got := timeouts[k]; got.Seconds != want || got.Expr != "" {
			t.Errorf("%s = %+v, want %d seconds", k, got, want)
		}
	}
}

// TestCorpusValidates runs Validate over the corpus: every definition is
// valid except the two negative fixtures, which fail for their reason.
func TestCorpusValidates(t *testing.T) {
	want := map[string][]string{
		"fixtures/sample-dag-with-cycle-wf.json": {"workflow.steps: cycle: job.2 -> job.3 -> job.4 -> job.2"},
		"fixtures/sample-invalid-cron-wf-def.json": {
			`workflow.time_triggers[0].cron: cron "0 30 * * *": end of range (30) above maximum (23): 30`,
		},
	}
	for _, name := range corpusDefinitions(t) {
		d := parseCorpus(t, name)
		var got []string
		for _, e := range Validate(d, ValidateOptions{Now: fixedNow}) {
			got = append(got, e.Error())
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, want[name]) {
			t.Errorf("%s: errors %q, want %q", name, got, want[name])
		}
	}
}

func TestInvalidWorkflowFixture(t *testing.T) {
	_, err := ParseDefinition(readCorpus(t, "fixtures/sample-invalid-wf.json"))
	var errs Errors
	if !asErrors(err, &errs) || len(errs) != 1 || errs[0].Path != "workflow" || errs[0].Msg != "required" {
		t.Fatalf("got %v, want workflow: required", err)
	}
	// Validate reports the same for a definition built without a workflow.
	if got := Validate(&Definition{}, ValidateOptions{}); len(got) != 1 || got[0].Error() != "workflow: required" {
		t.Fatalf("Validate = %v", got)
	}
}
