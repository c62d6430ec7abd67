package expression

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func helperEnv() *Env {
	return &Env{
		Vars: map[string]any{"d": int64(20200101), "ds": "20200103", "h": "05", "n": int64(3), "p": int64(1)},
		Step: func(_ context.Context, step, name string) (any, error) {
			if step == "job.1" && name == "out" {
				return "ok", nil
			}
			return nil, errors.New("not found")
		},
		StepFields:   map[string]any{"MAESTRO_STEP_ERROR_RETRIES": int64(2), "step_id": "job.9"},
		SignalParams: map[string]any{"foo": "bat"},
		Signals:      map[string]map[string]any{"sig": {"watermark": int64(7)}},
		SignalDependencies: []map[string]any{
			{"vtts_utc_dateint": "20500101"},
			{"k": int64(2)},
		},
		Foreach: func(_ context.Context, foreach, step, name string) (any, error) {
			if foreach == "loop" && step == "job.1" && name == "x" {
				return []int64{10, 20, 30}, nil
			}
			if foreach == "bad" {
				return "not an array", nil
			}
			return nil, errors.New("no such foreach")
		},
		Subworkflow: func(_ context.Context, sub, step, name string) (any, error) {
			if sub == "sub" && step == "job.2" && name == "y" {
				return 1.5, nil
			}
			return nil, errors.New("no such subworkflow step")
		},
		Instance: map[string]any{"RUN_POLICY": "START_FRESH_NEW_RUN", "owner": nil},
		Seed:     "seed-1",
	}
}

func helperScope() model.Scope {
	return model.Scope{Vars: map[string]model.ParamType{
		"d": model.TypeLong, "ds": model.TypeString, "h": model.TypeString, "n": model.TypeLong, "p": model.TypeLong,
	}}
}

func TestHelpers(t *testing.T) {
	l := New(DefaultLimits())
	tests := []struct {
		src string
		out any
	}{
		{"params.get('n')", int64(3)},
		{"params['ds']", "20200103"},
		{"params.getFromStep('job.1', 'out')", "ok"},
		{"params.getFromStep('MAESTRO_STEP_ERROR_RETRIES')", int64(2)},
		{"params.getFromStep('step_id')", "job.9"},
		{"params.getFromSignal('foo')", "bat"},
		{"params.getFromSignal('sig', 'watermark')", int64(7)},
		{"params.getFromSignalOrDefault('sig', 'watermark', 0)", int64(7)},
		{"params.getFromSignalOrDefault('sig', 'missing', 'dflt')", "dflt"},
		{"params.getFromSignalOrDefault('nosig', 'x', 5)", int64(5)},
		{"params.getFromSignalDependency('0', 'vtts_utc_dateint')", "20500101"},
		{"params.getFromSignalDependency(1, 'k')", int64(2)},
		{"params.getFromForeach('loop', 'job.1', 'x')", []int64{10, 20, 30}},
		{"params.getFromSubworkflow('sub', 'job.2', 'y')", 1.5},
		{"params.getFromInstance('RUN_POLICY')", "START_FRESH_NEW_RUN"},
		{"params.getFromInstance('owner')", ""},
		// Util: end-exclusive ranges.
		{"Util.dateIntsBetween(20200101, 20200110, 1)", []int64{20200101, 20200102, 20200103, 20200104, 20200105, 20200106, 20200107, 20200108, 20200109}},
		{"Util.dateIntsBetween(20200101, 20200110, 3)", []int64{20200101, 20200104, 20200107}},
		// As in Maestro, a negative step counts down from the first bound
		// (exclusive) to the second (inclusive).
		{"Util.dateIntsBetween(20200104, 20200101, -1)", []int64{20200103, 20200102, 20200101}},
		{"Util.dateIntsBetween(20200101, 20200104, -1)", []int64{}},
		{"Util.dateIntsBetween(20200227, 20200302, 1)", []int64{20200227, 20200228, 20200229, 20200301}},
		{"Util.dateIntsBetween('20201230', '20210102', 1)", []int64{20201230, 20201231, 20210101}},
		{"Util.dateIntsBetween(20200110, 20200101, 1)", []int64{}},
		{"Util.dateIntsBetween(d, ds, 1)", []int64{20200101, 20200102}},
		{"Util.intsBetween(1, 5, 1)", []int64{1, 2, 3, 4}},
		{"Util.intsBetween(0, 10, 3)", []int64{0, 3, 6, 9}},
		{"Util.intsBetween(5, 1, -2)", []int64{5, 3}},
		{"Util.intsBetween(1, 1, 1)", []int64{}},
		{"Util.intsBetween(1, n, 1)", []int64{1, 2}},
		{"Util.intsBetween('1', '3', '1')", []int64{1, 2}},
		{"Util.intsBetween(9223372036854775806, 9223372036854775807, 5)", []int64{9223372036854775806}},
		{"Util.dateIntToTs(20190101)", int64(1546300800000)},
		{"Util.dateIntToTs('20190101', 'UTC')", int64(1546300800000)},
		{"Util.dateIntToTs(20190101, 'US/Pacific')", int64(1546329600000)},
		{"Util.dateIntHourToTs('20210707', '01', 'UTC', 0, 0)", int64(1625619600000)},
		{"Util.dateIntHourToTs(20190101, 1, 'UTC', 1, 1)", int64(1546214400000)},
		{"Util.dateIntHourToTs(d, h, 'Asia/Tokyo', 0, -2)", int64(1577829600000)},
		{"Util.incrementDateInt(20200228, 2)", "20200301"},
		{"Util.incrementDateInt('20200101', -1)", "20191231"},
		{"Util.tsToDateInt(1546300800000)", "20190101"},
		{"Util.tsToDateInt(1546300800000, 'US/Pacific')", "20181231"},
		{"Math.min(3, 4)", int64(3)},
		{"Math.max(3, 4.5)", 4.5},
		{"Math.abs(-3)", int64(3)},
		{"Math.max(n, p) + Math.min(n, p)", int64(4)},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := l.Compile(tt.src, "", helperScope())
			require.NoError(t, err)
			out, err := p.Eval(context.Background(), helperEnv())
			require.NoError(t, err)
			assert.Equal(t, tt.out, out)
		})
	}
}

func TestHelperErrors(t *testing.T) {
	l := New(DefaultLimits())
	tests := []struct {
		src  string
		kind error
		msg  string
	}{
		{"params.getFromStep('job.1', 'nope')", ErrEval, `params.getFromStep("job.1", "nope"): not found`},
		{"params.getFromStep('NOPE')", ErrEval, `params.getFromStep("NOPE"): no such field of the current step`},
		{"params.getFromStep(1, 'x')", ErrType, "params.getFromStep: argument 1 must be a string, got long 1"},
		{"params.getFromSignal('nope')", ErrEval, "the triggering signal has no such param"},
		{"params.getFromSignal('other', 'x')", ErrEval, `signal "other" did not trigger this instance`},
		{"params.getFromSignal('sig', 'x')", ErrEval, `signal "sig" has no such param`},
		{"params.getFromSignalDependency('5', 'k')", ErrEval, "index out of range, the step has 2 signal dependencies"},
		{"params.getFromSignalDependency('x', 'k')", ErrType, "argument 1 must be an integer"},
		{"params.getFromSignalDependency(0, 'k')", ErrEval, "the matched signal has no such param"},
		{"params.getFromForeach('bad', 'a', 'b')", ErrType, "must return an array"},
		{"params.getFromForeach('x', 'a', 'b')", ErrEval, "no such foreach"},
		{"params.getFromSubworkflow('x', 'a', 'b')", ErrEval, "no such subworkflow step"},
		{"params.getFromInstance('nope')", ErrEval, `params.getFromInstance("nope"): invalid field name`},
		{"Util.dateIntsBetween(20200101, 20200110, 0)", ErrEval, "step must not be 0"},
		{"Util.dateIntsBetween(20200230, 20200310, 1)", ErrEval, `"20200230" is not a valid date`},
		{"Util.dateIntsBetween(2020011, 20200310, 1)", ErrEval, `"2020011" is not a dateInt`},
		{"Util.dateIntsBetween(1.5, 20200310, 1)", ErrType, "must be a dateInt"},
		{"Util.intsBetween(1, 5, 0)", ErrEval, "step must not be 0"},
		{"Util.intsBetween('a', 5, 1)", ErrType, "argument 1 must be an integer"},
		{"Util.dateIntToTs(20200101, 'Mars/Base')", ErrEval, `unknown time zone "Mars/Base"`},
		{"Util.dateIntHourToTs(20200101, 24, 'UTC', 0, 0)", ErrEval, "hour 24 is not in 0..23"},
		{"Math.max(params.get('ds'), 1)", ErrType, `Math.max needs numbers, got string "20200103" and long 1`},
		{"Math.abs(params.get('ds'))", ErrType, "Math.abs needs a number"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := l.Compile(tt.src, "", helperScope())
			require.NoError(t, err)
			_, err = p.Eval(context.Background(), helperEnv())
			requireErrorOf(t, err, tt.kind, tt.msg)
		})
	}
}

func TestHelpersWithoutSources(t *testing.T) {
	l := New(DefaultLimits())
	for _, src := range []string{
		"params.getFromStep('a', 'b')", "params.getFromForeach('a', 'b', 'c')",
		"params.getFromSubworkflow('a', 'b', 'c')", "params.getFromSignal('x')",
		"params.getFromSignalDependency(0, 'x')", "params.getFromInstance('owner')",
		"params.getFromStep('step_id')", "UUID.randomUUID()",
	} {
		t.Run(src, func(t *testing.T) {
			p, err := l.Compile(src, "", model.Scope{})
			require.NoError(t, err)
			_, err = p.Eval(context.Background(), &Env{})
			assert.ErrorIs(t, err, ErrEval)
		})
	}
}

func TestRandomUUIDDeterministic(t *testing.T) {
	l := New(DefaultLimits())
	p, err := l.Compile("UUID.randomUUID() + ' ' + UUID.randomUUID().toString()", model.TypeString, model.Scope{})
	require.NoError(t, err)
	a, err := p.Eval(context.Background(), &Env{Seed: "step-uuid-1/attempt-1"})
	require.NoError(t, err)
	b, err := p.Eval(context.Background(), &Env{Seed: "step-uuid-1/attempt-1"})
	require.NoError(t, err)
	c, err := p.Eval(context.Background(), &Env{Seed: "step-uuid-1/attempt-2"})
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same UUIDs")
	assert.NotEqual(t, a, c, "another seed, other UUIDs")
	first, second, _ := strings.Cut(a.(string), " ")
	assert.Regexp(t, uuidPattern, first)
	assert.Regexp(t, uuidPattern, second)
	assert.NotEqual(t, first, second, "each call of one evaluation differs")
}

func TestJavaDouble(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1.0"}, {1.5, "1.5"}, {-2, "-2.0"}, {0, "0.0"}, {0.001, "0.001"},
		{0.0001, "1.0E-4"}, {1234567, "1234567.0"}, {1e7, "1.0E7"}, {1.2345e10, "1.2345E10"},
		{1.23, "1.23"}, {10.229999999999, "10.229999999999"}, {1e-300, "1.0E-300"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, javaDouble(tt.in), "%v", tt.in)
	}
}
