package signals

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestCompare(t *testing.T) {
	type row struct {
		got, want any
		// holds lists the operators for which got op want is true.
		holds []model.SignalOperator
	}
	all := []model.SignalOperator{model.OpEqual, model.OpGreater, model.OpGreaterEqual, model.OpLess, model.OpLessEqual}
	eq := []model.SignalOperator{model.OpEqual, model.OpGreaterEqual, model.OpLessEqual}
	gt := []model.SignalOperator{model.OpGreater, model.OpGreaterEqual}
	lt := []model.SignalOperator{model.OpLess, model.OpLessEqual}
	tests := []row{
		// LONG: numeric order.
		{int64(5), int64(5), eq},
		{int64(10), int64(9), gt},
		{int64(9), int64(10), lt},
		{int64(-1), int64(0), lt},
		{int64(123456), int64(12345), gt},
		// Other integer representations normalize.
		{5, int64(5), eq},
		{json.Number("1e1"), int64(10), eq},
		{10.0, int64(9), gt},
		// STRING: lexicographic, not numeric.
		{"bat", "bat", eq},
		{"baz", "bat", gt},
		{"10", "9", lt},
		{"20500101", "20260105", gt},
		{"", "a", lt},
		{"a", "", gt},
		{"B", "a", lt},
		{"é", "z", gt},
		// Type mismatch never matches, whatever the operator.
		{int64(5), "5", nil},
		{"5", int64(5), nil},
		// Neither LONG nor STRING never matches.
		{true, true, nil},
		{1.5, 1.5, nil},
		{nil, nil, nil},
		{int64(1), nil, nil},
	}
	for _, tt := range tests {
		for _, op := range all {
			want := false
			for _, h := range tt.holds {
				want = want || h == op
			}
			assert.Equal(t, want, Compare(op, tt.got, tt.want), "%#v %s %#v", tt.got, op, tt.want)
		}
	}
	assert.False(t, Compare("==", int64(1), int64(1)), "unknown operator")
	assert.False(t, Compare("", "a", "a"), "missing operator")
}

// def builds a trigger definition from (name, op, value) triples.
func def(joinKeys []string, conds ...any) *model.SignalTriggerDef {
	d := &model.SignalTriggerDef{MatchParams: map[string]*model.SignalMatchParam{}, JoinKeys: joinKeys}
	for i := 0; i < len(conds); i += 3 {
		name := conds[i].(string)
		d.MatchParams[name] = &model.SignalMatchParam{Operator: model.SignalOperator(conds[i+1].(string)), Value: conds[i+2]}
		d.MatchNames = append(d.MatchNames, name)
	}
	return d
}

func sig(name string, seq int64, params map[string]any) Signal {
	return Signal{Name: name, Seq: seq, Params: params}
}

func TestMatchesTrigger(t *testing.T) {
	d := def(nil, "foo", "=", "bat", "watermark", ">=", int64(12345))
	tests := []struct {
		name   string
		def    *model.SignalTriggerDef
		params map[string]any
		want   bool
	}{
		{"all hold", d, map[string]any{"foo": "bat", "watermark": int64(123456), "x": "y"}, true},
		{"bound", d, map[string]any{"foo": "bat", "watermark": int64(12345)}, true},
		{"below", d, map[string]any{"foo": "bat", "watermark": int64(12344)}, false},
		{"other value", d, map[string]any{"foo": "bar", "watermark": int64(123456)}, false},
		{"missing param", d, map[string]any{"foo": "bat"}, false},
		{"type mismatch", d, map[string]any{"foo": "bat", "watermark": "123456"}, false},
		{"no params", d, nil, false},
		{"nil def", nil, nil, true},
		{"empty def", &model.SignalTriggerDef{}, map[string]any{"a": "b"}, true},
		{"nil match param", &model.SignalTriggerDef{MatchParams: map[string]*model.SignalMatchParam{"a": nil}}, map[string]any{"a": "b"}, false},
		{"invalid literal", def(nil, "a", "=", 1.5), map[string]any{"a": int64(1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, MatchesTrigger(tt.def, sig("s", 1, tt.params)))
		})
	}
}

func TestMatchesAll(t *testing.T) {
	conds := []Condition{
		{Param: "vtts_utc_dateint", Op: model.OpGreaterEqual, Value: "20260105"},
		{Param: "vtts_utc_hour", Op: model.OpEqual, Value: "00"},
	}
	tests := []struct {
		name   string
		conds  []Condition
		params map[string]any
		want   bool
	}{
		{"later date", conds, map[string]any{"vtts_utc_dateint": "20500101", "vtts_utc_hour": "00"}, true},
		{"same date", conds, map[string]any{"vtts_utc_dateint": "20260105", "vtts_utc_hour": "00"}, true},
		{"earlier date", conds, map[string]any{"vtts_utc_dateint": "20260104", "vtts_utc_hour": "00"}, false},
		{"other hour", conds, map[string]any{"vtts_utc_dateint": "20500101", "vtts_utc_hour": "01"}, false},
		{"LONG against STRING", conds, map[string]any{"vtts_utc_dateint": int64(20500101), "vtts_utc_hour": "00"}, false},
		{"missing", conds, map[string]any{"vtts_utc_dateint": "20500101"}, false},
		{"no conditions", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, MatchesAll(tt.conds, sig("db/test/table1", 1, tt.params)))
		})
	}
}

func TestDependencyConditions(t *testing.T) {
	var deps []model.SignalDependency
	require.NoError(t, json.Unmarshal(readTestdata(t, "sample-signal-dependencies-definition.json"), &deps))
	require.Len(t, deps, 1)
	conds, err := DependencyConditions(&deps[0], map[string]any{"param_a": "test123"})
	require.NoError(t, err)
	assert.Equal(t, []Condition{{Param: "param_a", Op: model.OpEqual, Value: "test123"}}, conds)
	assert.True(t, MatchesAll(conds, sig("signal_a", 1, map[string]any{"param_a": "test123"})))
	assert.False(t, MatchesAll(conds, sig("signal_a", 1, map[string]any{"param_a": "test124"})))

	conds, err = DependencyConditions(&deps[0], map[string]any{"param_a": 7})
	require.NoError(t, err)
	assert.Equal(t, int64(7), conds[0].Value, "normalized")

	_, err = DependencyConditions(&deps[0], map[string]any{})
	assert.EqualError(t, err, `signal dependency "signal_a": match param "param_a" has no evaluated value`)
	_, err = DependencyConditions(&deps[0], map[string]any{"param_a": 1.5})
	assert.EqualError(t, err, `signal dependency "signal_a": match param "param_a": must be a LONG or a STRING, got the number 1.5`)
}

func TestComplete(t *testing.T) {
	two := &model.SignalTrigger{
		Names: []string{"a", "b"},
		Definitions: map[string]*model.SignalTriggerDef{
			"a": def([]string{"user", "day"}, "kind", "=", "x"),
			"b": def([]string{"owner", "date"}, "v", ">", int64(10)),
		},
	}
	three := &model.SignalTrigger{
		Names: []string{"a", "b", "c"},
		Definitions: map[string]*model.SignalTriggerDef{
			"a": def([]string{"k"}),
			"b": def([]string{"key"}),
			"c": def([]string{"id"}, "ok", "=", int64(1)),
		},
	}
	noKeys := &model.SignalTrigger{
		Names: []string{"a", "b"},
		Definitions: map[string]*model.SignalTriggerDef{
			"a": def(nil, "x", "=", "1"),
			"b": def(nil, "y", "=", "2"),
		},
	}
	one := &model.SignalTrigger{
		Names:       []string{"solo"},
		Definitions: map[string]*model.SignalTriggerDef{"solo": def([]string{"k"}, "x", "<", int64(5))},
	}
	a1 := sig("a", 1, map[string]any{"kind": "x", "user": "ann", "day": int64(5)})
	tests := []struct {
		name       string
		trigger    *model.SignalTrigger
		arrived    Signal
		candidates map[string][]Signal
		want       map[string]int64 // name -> seq; nil for no match
	}{
		{
			name: "two names, positional keys", trigger: two, arrived: a1,
			candidates: map[string][]Signal{"b": {
				sig("b", 9, map[string]any{"v": int64(11), "owner": "bob", "date": int64(5)}), // other user
				sig("b", 8, map[string]any{"v": int64(11), "owner": "ann", "date": int64(6)}), // other day
				sig("b", 7, map[string]any{"v": int64(11), "owner": "ann", "date": "5"}),      // day type mismatch
				sig("b", 6, map[string]any{"v": int64(10), "owner": "ann", "date": int64(5)}), // v not > 10
				sig("b", 5, map[string]any{"v": int64(11), "owner": "ann", "date": int64(5)}), // match
				sig("b", 4, map[string]any{"v": int64(99), "owner": "ann", "date": int64(5)}), // older match
				sig("b", 3, map[string]any{"v": int64(99), "date": int64(5), "user": "ann"}),  // missing owner
				sig("b", 2, map[string]any{"v": int64(99), "day": int64(5), "owner": "ann"}),  // missing date
				sig("b", 1, map[string]any{"v": int64(99), "user": "ann", "date": int64(5)}),  // keys of a's names
				sig("x", 0, map[string]any{"v": int64(99), "owner": "ann", "date": int64(5)}), // wrong name
			}},
			want: map[string]int64{"a": 1, "b": 5},
		},
		{
			name: "arrived second", trigger: two,
			arrived:    sig("b", 3, map[string]any{"v": int64(11), "owner": "ann", "date": int64(5)}),
			candidates: map[string][]Signal{"a": {sig("a", 2, map[string]any{"kind": "y", "user": "ann", "day": int64(5)}), a1}},
			want:       map[string]int64{"a": 1, "b": 3},
		},
		{
			name: "no candidate agrees", trigger: two, arrived: a1,
			candidates: map[string][]Signal{"b": {sig("b", 5, map[string]any{"v": int64(11), "owner": "ann", "date": int64(4)})}},
		},
		{
			name: "no candidates", trigger: two, arrived: a1,
		},
		{
			name: "arrived misses a join key", trigger: two,
			arrived:    sig("a", 1, map[string]any{"kind": "x", "user": "ann"}),
			candidates: map[string][]Signal{"b": {sig("b", 5, map[string]any{"v": int64(11), "owner": "ann", "date": int64(5)})}},
		},
		{
			name: "arrived does not match its def", trigger: two,
			arrived:    sig("a", 1, map[string]any{"kind": "z", "user": "ann", "day": int64(5)}),
			candidates: map[string][]Signal{"b": {sig("b", 5, map[string]any{"v": int64(11), "owner": "ann", "date": int64(5)})}},
		},
		{
			name: "arrived is not in the trigger", trigger: two,
			arrived: sig("c", 1, map[string]any{"kind": "x", "user": "ann", "day": int64(5)}),
		},
		{
			name: "three names", trigger: three, arrived: sig("b", 4, map[string]any{"key": int64(7)}),
			candidates: map[string][]Signal{
				"a": {sig("a", 9, map[string]any{"k": int64(8)}), sig("a", 8, map[string]any{"k": int64(7)})},
				"c": {sig("c", 3, map[string]any{"id": int64(7)}), sig("c", 2, map[string]any{"id": int64(7), "ok": int64(1)})},
			},
			want: map[string]int64{"a": 8, "b": 4, "c": 2},
		},
		{
			name: "three names, one missing", trigger: three, arrived: sig("b", 4, map[string]any{"key": int64(7)}),
			candidates: map[string][]Signal{"a": {sig("a", 8, map[string]any{"k": int64(7)})}},
		},
		{
			name: "no join keys: newest matching", trigger: noKeys, arrived: sig("a", 1, map[string]any{"x": "1"}),
			candidates: map[string][]Signal{"b": {sig("b", 7, map[string]any{"y": "3"}), sig("b", 6, map[string]any{"y": "2"}), sig("b", 5, map[string]any{"y": "2"})}},
			want:       map[string]int64{"a": 1, "b": 6},
		},
		{
			name: "no join keys: missing match param", trigger: noKeys, arrived: sig("a", 1, map[string]any{"x": "1"}),
			candidates: map[string][]Signal{"b": {sig("b", 7, map[string]any{"z": "2"})}},
		},
		{
			name: "one name", trigger: one, arrived: sig("solo", 3, map[string]any{"x": int64(4)}),
			want: map[string]int64{"solo": 3},
		},
		{
			name: "one name, no match", trigger: one, arrived: sig("solo", 3, map[string]any{"x": int64(5)}),
		},
		{
			name: "nil trigger", arrived: a1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Complete(tt.trigger, tt.arrived, tt.candidates)
			if tt.want == nil {
				assert.False(t, ok)
				assert.Nil(t, got)
				return
			}
			require.True(t, ok)
			seqs := make(map[string]int64, len(got))
			for name, s := range got {
				assert.Equal(t, name, s.Name)
				seqs[name] = s.Seq
			}
			assert.Equal(t, tt.want, seqs)
		})
	}
}

// TestSampleSignalTrigger plays the README announcements of
// sample-signal-trigger-wf (expected-outcomes.txt) against its trigger and
// its step's signal dependencies.
func TestSampleSignalTrigger(t *testing.T) {
	d, err := model.ParseDefinition(readTestdata(t, "sample-signal-trigger-wf.json"))
	require.NoError(t, err)
	require.Len(t, d.Workflow.SignalTriggers, 1)
	trig := &d.Workflow.SignalTriggers[0]
	require.Equal(t, []string{"signal_a", "signal_b"}, trig.Names)

	announce := func(body string, seq int64) Signal {
		a, errs := ParseAnnounce([]byte(body))
		require.Empty(t, errs)
		return Signal{Name: a.Name, Seq: seq, Params: a.Params, Payload: a.Payload}
	}
	sa := announce(`{"name":"signal_a","params":{"foo":"bat","watermark":123456,"updated_by":"tester"}}`, 1)
	sb := announce(`{"name":"signal_b","params":{"bar":"baz","watermark":123456,"posted_by":"tester"}}`, 1)

	// signal_a first: nothing to join with yet.
	_, ok := Complete(trig, sa, nil)
	assert.False(t, ok)
	// signal_b arrives: instance 1 starts.
	match, ok := Complete(trig, sb, map[string][]Signal{"signal_a": {sa}})
	require.True(t, ok)
	assert.Equal(t, map[string]Signal{"signal_a": sa, "signal_b": sb}, match)

	// job.1's params read the signals.
	all, byName := SignalsOfMatch(trig, match)
	assert.Equal(t, "bat", all["foo"], "params.getFromSignal('foo')")
	assert.Equal(t, int64(123456), byName["signal_a"]["watermark"], "params.getFromSignal('signal_a', 'watermark')")
	assert.Equal(t, "tester", all["updated_by"])
	assert.Equal(t, "baz", all["bar"])

	// Join keys pair updated_by with posted_by: another poster does not join,
	// nor does a watermark below signal_b's bound.
	other := announce(`{"name":"signal_b","params":{"bar":"baz","watermark":123456,"posted_by":"someone"}}`, 2)
	_, ok = Complete(trig, other, map[string][]Signal{"signal_a": {sa}})
	assert.False(t, ok)
	low := announce(`{"name":"signal_b","params":{"bar":"baz","watermark":22221,"posted_by":"tester"}}`, 3)
	_, ok = Complete(trig, low, map[string][]Signal{"signal_a": {sa}})
	assert.False(t, ok)
	// A signal_a with updated_by but a STRING watermark does not match its def.
	str := announce(`{"name":"signal_a","params":{"foo":"bat","watermark":"123456","updated_by":"tester"}}`, 2)
	_, ok = Complete(trig, str, map[string][]Signal{"signal_b": {sb}})
	assert.False(t, ok)

	// job.1 waits for db/test/table1 and db/test/table2 with
	// vtts_utc_dateint >= TARGET_RUN_DATE and vtts_utc_hour = "00"; the SEL
	// expressions evaluate (for TARGET_RUN_DATE 20260105) to these values.
	deps := d.Workflow.Steps[0].SignalDependencies
	require.Len(t, deps, 2)
	unblock := `{"vtts_utc_dateint":"20500101","vtts_utc_hour":"00"}`
	for i, name := range []string{"db/test/table1", "db/test/table2"} {
		require.Equal(t, name, deps[i].Name)
		conds, err := DependencyConditions(&deps[i], map[string]any{"vtts_utc_dateint": "20260105", "vtts_utc_hour": "00"})
		require.NoError(t, err)
		s := announce(`{"name":"`+name+`","params":`+unblock+`}`, 1)
		assert.True(t, MatchesAll(conds, s), name)
		early := announce(`{"name":"`+name+`","params":{"vtts_utc_dateint":"20260104","vtts_utc_hour":"00"}}`, 2)
		assert.False(t, MatchesAll(conds, early), name)
	}
}

func TestSignalsOfMatch(t *testing.T) {
	trig := &model.SignalTrigger{
		Names:       []string{"b", "a"},
		Definitions: map[string]*model.SignalTriggerDef{"a": {}, "b": {}},
	}
	match := map[string]Signal{
		"a": sig("a", 1, map[string]any{"x": "from a", "y": int64(1)}),
		"b": sig("b", 2, map[string]any{"x": "from b"}),
		"z": sig("z", 3, map[string]any{"x": "from z", "w": "z"}),
		"c": sig("c", 4, nil),
	}
	all, byName := SignalsOfMatch(trig, match)
	assert.Equal(t, map[string]any{"x": "from b", "y": int64(1), "w": "z"}, all)
	assert.Equal(t, map[string]map[string]any{
		"a": {"x": "from a", "y": int64(1)},
		"b": {"x": "from b"},
		"c": {},
		"z": {"x": "from z", "w": "z"},
	}, byName)
	byName["a"]["x"] = "changed"
	assert.Equal(t, "from a", match["a"].Params["x"], "byName holds copies")

	all, _ = SignalsOfMatch(nil, map[string]Signal{"q": match["z"], "p": match["a"]})
	assert.Equal(t, "from a", all["x"], "without a trigger names go sorted")
}

// TestDriving: the first equality drives an index lookup, else the first
// condition.
func TestDriving(t *testing.T) {
	eq := Condition{Param: "b", Op: model.OpEqual}
	lt := Condition{Param: "a", Op: model.OpLess}
	gt := Condition{Param: "c", Op: model.OpGreater}
	for _, tc := range []struct {
		conds []Condition
		want  Condition
	}{
		{[]Condition{lt, eq, gt}, eq},
		{[]Condition{eq}, eq},
		{[]Condition{gt, lt}, gt},
	} {
		if got := Driving(tc.conds); got.Param != tc.want.Param {
			t.Errorf("Driving(%v) = %v, want %v", tc.conds, got, tc.want)
		}
	}
}
