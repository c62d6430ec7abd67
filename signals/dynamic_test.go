package signals

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const at = "artifacts.maestro_dynamic_output"

func TestParseDynamicOutput(t *testing.T) {
	// The artifact of Maestro's sample-kubernetes-output-wf.
	sample := `{"signal_outputs":[{"value":{"name":{"value":"demo_table","type":"STRING"}},"type":"MAP",
	  "evaluated_result":{"name":"demo_table"},"evaluated_time": 1625871404000}],"type":"DYNAMIC_OUTPUT"}`
	got, problems := ParseDynamicOutput([]byte(sample), at)
	require.Empty(t, problems)
	require.Len(t, got, 1)
	assert.Equal(t, "demo_table", got[0].Name)
	assert.Empty(t, got[0].Params)

	// Strings and whole numbers are params, the rest payload (Maestro's
	// SignalTransformer); without evaluated_result, value's definitions.
	got, problems = ParseDynamicOutput([]byte(`{"signal_outputs":[
	  {"evaluated_result":{"name":"t","dt":"2026","n":12,"f":1.5,"ok":true,"m":{"a":1}}},
	  {"value":{"name":{"value":"u","type":"STRING"},"k":{"value":3,"type":"LONG"},"plain":"x"}}],"info":{"message":"hi"}}`), at)
	require.Empty(t, problems)
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"dt": "2026", "n": int64(12)}, got[0].Params)
	assert.Equal(t, []string{"f", "m", "ok"}, sortedKeys(got[0].Payload))
	assert.Equal(t, Announce{Name: "u", Params: map[string]any{"k": int64(3), "plain": "x"}}, got[1])

	many := make([]string, MaxDynamicOutputs+1)
	for i := range many {
		many[i] = `{"evaluated_result":{"name":"s"}}`
	}
	manyParams := make([]string, MaxParams+1)
	for i := range manyParams {
		manyParams[i] = fmt.Sprintf(`"p%d":"v"`, i)
	}
	for _, tc := range []struct{ body, want string }{
		{`[]`, at + ": must be an object with signal_outputs, got an array"},
		{`{"signal_outputs":{}}`, at + ".signal_outputs: must be an array of MAP params, got an object"},
		{`{"signal_outputs":[],"type":"RETRY"}`, at + `.type: must be DYNAMIC_OUTPUT, got "RETRY"`},
		{`{"signal_outputs":[],"extra":1}`, at + ".extra: unknown field"},
		{`{"signal_outputs":["x"]}`, at + ".signal_outputs[0]: must be a MAP param"},
		{`{"signal_outputs":[{"type":"MAP"}]}`, at + ".signal_outputs[0]: needs evaluated_result or value"},
		{`{"signal_outputs":[{"type":"STRING","evaluated_result":{"name":"a"}}]}`, at + `.signal_outputs[0].type: must be MAP, got "STRING"`},
		{`{"signal_outputs":[{"evaluated_result":[1]}]}`, at + ".signal_outputs[0].evaluated_result: must be an object with name"},
		{`{"signal_outputs":[{"evaluated_result":{"dt":"x"}}]}`, at + ".signal_outputs[0].evaluated_result.name: is required"},
		{`{"signal_outputs":[{"evaluated_result":{"name":7}}]}`, at + ".signal_outputs[0].evaluated_result.name: must be a string, got a number"},
		{`{"signal_outputs":[{"evaluated_result":{"name":" a"}}]}`, at + ".signal_outputs[0].evaluated_result.name: must not start or end with white space"},
		{`{"signal_outputs":[{"evaluated_result":{"name":"a",` + strings.Join(manyParams, ",") + `}}]}`, at + ".signal_outputs[0].evaluated_result: must have at most 64 entries"},
		{`{"signal_outputs":[{"evaluated_result":{"name":"a","big":["` + strings.Repeat("x", maxPayloadBytes) + `"]}}]}`, at + ".signal_outputs[0].evaluated_result: the values other than params are"},
		{`{"signal_outputs":[` + strings.Join(many, ",") + `]}`, at + ".signal_outputs: must have at most 20 signal outputs, got 21"},
	} {
		got, problems := ParseDynamicOutput([]byte(tc.body), at)
		assert.Nil(t, got, tc.body)
		if assert.NotEmpty(t, problems, tc.body) {
			assert.Contains(t, strings.Join(problems, "; "), tc.want, tc.body)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
