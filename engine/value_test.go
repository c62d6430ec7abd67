package engine

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestValuesJSONRoundTrip(t *testing.T) {
	v := Values{
		"s":     "x",
		"empty": "",
		"l":     int64(-15),
		"big":   int64(math.MaxInt64),
		"d":     10.229999999999,
		"whole": float64(2),
		"b":     true,
		"sm":    map[string]string{"k": "v"},
		"sa":    []string{"a", "b"},
		"sa0":   []string{},
		"la":    []int64{1, 2},
		"da":    []float64{1.5, 2},
		"ba":    []bool{true, false},
		"m": map[string]any{
			"n":     int64(1),
			"inner": map[string]any{"deep": []string{"x"}},
			"sm":    map[string]string{},
		},
	}
	data, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"l":{"type":"LONG","value":-15}`)
	assert.Contains(t, string(data), `"whole":{"type":"DOUBLE","value":2}`)
	assert.Contains(t, string(data), `"m":{"type":"MAP","value":{"inner":{"type":"MAP","value":{"deep":{"type":"STRING_ARRAY","value":["x"]}}}`)
	var back Values
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, v, back)
	assert.Equal(t, v, v.Clone())

	var null Values
	require.NoError(t, json.Unmarshal([]byte("null"), &null))
	assert.Nil(t, null)
}

func TestValuesJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		v    Values
		data string
		want string
	}{
		{name: "non-canonical Go type", v: Values{"x": 3}, want: `encode param "x": value of Go type int is not a parameter value`},
		{name: "NaN", v: Values{"x": math.NaN()}, want: `encode param "x"`},
		{name: "unknown type", data: `{"x":{"type":"DATE","value":1}}`, want: `decode param "x": unknown param type "DATE"`},
		{name: "wrong value", data: `{"x":{"type":"LONG","value":"1"}}`, want: `decode param "x"`},
		{name: "fraction as LONG", data: `{"x":{"type":"LONG","value":1.5}}`, want: `decode param "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.v != nil {
				_, err = json.Marshal(tc.v)
			} else {
				var v Values
				err = json.Unmarshal([]byte(tc.data), &v)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   any
		want any
		err  string
	}{
		{in: "s", want: "s"},
		{in: 3, want: int64(3)},
		{in: int32(3), want: int64(3)},
		{in: uint8(3), want: int64(3)},
		{in: uint64(math.MaxUint64), err: "overflows LONG"},
		{in: float32(1.5), want: 1.5},
		{in: json.Number("12"), want: int64(12)},
		{in: json.Number("1.25"), want: 1.25},
		{in: json.Number("1e400"), err: "number 1e400"},
		{in: math.Inf(1), err: "is not a parameter value"},
		{in: []any{"a", "b"}, want: []string{"a", "b"}},
		{in: []any{json.Number("1"), 2}, want: []int64{1, 2}},
		{in: []any{json.Number("1"), 2.5}, want: []float64{1, 2.5}},
		{in: []any{true}, want: []bool{true}},
		{in: []any{}, want: []string{}},
		{in: []any{"a", 1}, err: "array mixes element types"},
		{in: []any{[]any{"a"}}, err: "nested []string is not supported"},
		{in: []int{1, 2}, want: []int64{1, 2}},
		{in: map[string]any{"a": json.Number("1"), "b": map[string]any{"c": "d"}}, want: map[string]any{"a": int64(1), "b": map[string]any{"c": "d"}}},
		{in: map[string]any{"a": nil}, err: `key "a": null is not a parameter value`},
		{in: nil, err: "null is not a parameter value"},
		{in: time.Second, err: "Go type time.Duration"},
	}
	for _, tc := range tests {
		got, err := Normalize(tc.in)
		if tc.err != "" {
			require.Error(t, err, "%#v", tc.in)
			assert.Contains(t, err.Error(), tc.err, "%#v", tc.in)
			continue
		}
		require.NoError(t, err, "%#v", tc.in)
		assert.Equal(t, tc.want, got, "%#v", tc.in)
		typ, err := TypeOf(got)
		require.NoError(t, err)
		assert.NotEmpty(t, typ)
	}
}

func TestTypeOf(t *testing.T) {
	tests := []struct {
		v    any
		want model.ParamType
	}{
		{"", model.TypeString}, {int64(0), model.TypeLong}, {0.0, model.TypeDouble}, {false, model.TypeBoolean},
		{map[string]string{}, model.TypeStringMap}, {[]string{}, model.TypeStringArray}, {[]int64{}, model.TypeLongArray},
		{[]float64{}, model.TypeDoubleArray}, {[]bool{}, model.TypeBooleanArray}, {map[string]any{}, model.TypeMap},
	}
	for _, tc := range tests {
		got, err := TypeOf(tc.v)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	_, err := TypeOf(int32(1))
	assert.ErrorContains(t, err, "int32")
}

// roundTrip checks that v marshals to the JSON want and unmarshal reads
// that back as v.
func roundTrip[T any](t *testing.T, v T, want string, unmarshal func([]byte) (T, error)) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(data))
	back, err := unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, v, back)
}

func TestEventAndCommandJSON(t *testing.T) {
	events := []struct {
		ev   Event
		json string
	}{
		{StepFinished{StepID: "a", Attempt: 2, Outcome: OutcomeUserError, Message: "m"},
			`{"kind":"step_finished","step_id":"a","step_attempt_id":2,"outcome":"USER_ERROR","message":"m"}`},
		{TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeSleep},
			`{"kind":"timer_fired","step_id":"a","step_attempt_id":1,"purpose":"sleep"}`},
	}
	for _, tc := range events {
		roundTrip(t, tc.ev, tc.json, UnmarshalEvent)
	}

	start := StartRun{RunParams: params("foo", literal(model.TypeLong, int64(3))), Initiator: Initiator{Type: "MANUAL"}}
	data, err := json.Marshal(start)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"kind":"start_run"`)
	back, err := UnmarshalEvent(data)
	require.NoError(t, err)
	sr, ok := back.(StartRun)
	require.True(t, ok)
	assert.Equal(t, []string{"foo"}, sr.RunParams.Names)
	assert.Equal(t, int64(3), sr.RunParams.Defs["foo"].Value)
	assert.Equal(t, "MANUAL", sr.Initiator.Type)

	// Outputs keep numbers exact through JSON.
	fin, err := UnmarshalEvent([]byte(`{"kind":"step_finished","step_id":"a","step_attempt_id":1,"outcome":"SUCCEEDED","outputs":{"n":12345678901234567}}`))
	require.NoError(t, err)
	assert.Equal(t, json.Number("12345678901234567"), fin.(StepFinished).Outputs["n"])

	for _, bad := range []string{`{}`, `{"kind":"bogus"}`, `[1]`, `{"kind":"timer_fired","step_attempt_id":"x"}`} {
		_, err := UnmarshalEvent([]byte(bad))
		assert.Error(t, err, bad)
	}

	commands := []struct {
		c    Command
		json string
	}{
		{RunStep{StepID: "a", Attempt: 1, StepKind: model.KindStep, StepType: model.StepHTTP, Params: Values{"x": int64(1)}},
			`{"kind":"run_step","step_id":"a","step_attempt_id":1,"step_kind":"step","step_type":"Http","params":{"x":{"type":"LONG","value":1}}}`},
		{StartTimer{StepID: "a", Attempt: 1, Purpose: PurposeSleep, FireAt: time.UnixMilli(1700000000123).UTC()},
			`{"kind":"start_timer","step_id":"a","step_attempt_id":1,"purpose":"sleep","fire_at":"2023-11-14T22:13:20.123Z"}`},
		{InstanceDone{Status: model.WorkflowSucceeded}, `{"kind":"instance_done","status":"SUCCEEDED"}`},
	}
	for _, tc := range commands {
		roundTrip(t, tc.c, tc.json, UnmarshalCommand)
	}
	_, err = UnmarshalCommand([]byte(`{"kind":"launch"}`))
	assert.ErrorContains(t, err, `unknown kind "launch"`)
	var d Decision
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"commands":[{"kind":"launch"}]}`), &d), "commands[0]")
}
