package expression

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// corpusEntry is one expression of testdata/corpus-expressions.json.
type corpusEntry struct {
	Kind       string   `json:"kind"`
	Expression string   `json:"expression"`
	Type       string   `json:"type"`
	Files      []string `json:"files"`
}

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus-expressions.json")
	require.NoError(t, err)
	var entries []corpusEntry
	require.NoError(t, json.Unmarshal(b, &entries))
	return entries
}

// corpusEnv is the environment the corpus expressions run in: the values
// the samples give (or imply) for the params and signals they read.
func corpusEnv() *Env {
	return &Env{
		Vars: map[string]any{
			"sleep_seconds":       int64(16),
			"job3__sleep_seconds": int64(15),
			"TARGET_RUN_DATE":     int64(20210707),
			"TARGET_RUN_HOUR":     "01",
			"param0":              int64(15),
			"param1":              []string{"a", "b", "c"},
			"param2":              int64(15),
			"x":                   int64(5),
			"i":                   int64(20200101),
			"j":                   "a",
			"foo":                 "bar",
			"auu":                 int64(41),
			"e1":                  map[string]any{"foo": "bar", "bar": int64(123)},
			"attempt_cnt":         int64(0),
			"partition_count":     int64(3),
			"job.2__param1":       map[string]string{"foo": "bar"},
		},
		Step: func(_ context.Context, stepID, name string) (any, error) {
			switch stepID + "/" + name {
			case "job.3/param2":
				return int64(15), nil
			case "job.4/param3":
				return int64(-1), nil
			}
			return nil, fmt.Errorf("step %s has no param %s", stepID, name)
		},
		StepFields:   map[string]any{"MAESTRO_STEP_ERROR_RETRIES": int64(0), "step_id": "job.1"},
		SignalParams: map[string]any{"foo": "bat", "watermark": int64(123456), "updated_by": "tester"},
		Signals: map[string]map[string]any{
			"signal_a": {"foo": "bat", "watermark": int64(123456), "updated_by": "tester"},
			"signal_b": {"bar": "baz", "watermark": int64(123456), "posted_by": "tester"},
		},
		SignalDependencies: []map[string]any{
			{"vtts_utc_dateint": "20500101", "vtts_utc_hour": "00"},
			{"vtts_utc_dateint": "20500101", "vtts_utc_hour": "00"},
		},
		Instance: map[string]any{"RUN_POLICY": "START_FRESH_NEW_RUN", "workflow_id": "sample-dag-test-5"},
		Seed:     "corpus",
	}
}

func scopeOf(env *Env) model.Scope {
	s := model.Scope{Vars: map[string]model.ParamType{}}
	for name, v := range env.Vars {
		s.Vars[name] = InferType(v)
	}
	return s
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// corpusCase is the expected outcome of one corpus expression.
type corpusCase struct {
	vars map[string]any // overrides of corpusEnv().Vars
	want any            // expected value, when it evaluates
	// check, when set, replaces the comparison with want.
	check func(t *testing.T, v any)
	// unsupported, when set, is a fragment of the rejection message.
	unsupported string
	// evalErr, when set, is a fragment of the evaluation error.
	evalErr string
}

// corpusCases maps "<TYPE> <expression>" to its outcome. Values come from
// reference/expected-outcomes.txt where it gives them.
var corpusCases = map[string]corpusCase{
	"BOOLEAN 245 > 123":                           {want: true},
	"BOOLEAN i <= 20200105":                       {want: true},
	"STRING return UUID.randomUUID().toString();": {check: checkUUID},
	"STRING '1800'":                               {want: "1800"},
	"STRING_ARRAY 'a,b,c'.split(',');":            {want: []string{"a", "b", "c"}},
	"STRING 'bar';":                               {want: "bar"},
	"STRING 'bar1';":                              {want: "bar1"},
	"LONG 1 * 1;":                                 {want: int64(1)},
	"LONG 1 + 1;":                                 {want: int64(2)},
	"BOOLEAN 1 > 0;":                              {want: true},
	"LONG 1+1":                                    {want: int64(2)},
	"LONG 1+1;":                                   {want: int64(2)},
	"DOUBLE 1.23;":                                {want: 1.23},
	"BOOLEAN 1>0;":                                {want: true},
	"LONG Util.dateIntHourToTs(TARGET_RUN_DATE, TARGET_RUN_HOUR, 'UTC', 0, 0)/1000": {want: int64(1625619600)},
	"LONG_ARRAY Util.dateIntsBetween(20200101, 20200110, 1);": {want: []int64{
		20200101, 20200102, 20200103, 20200104, 20200105, 20200106, 20200107, 20200108, 20200109}},
	"LONG_ARRAY Util.dateIntsBetween(20200101, 20210101, 1);": {check: func(t *testing.T, v any) {
		days := v.([]int64)
		require.Len(t, days, 366) // 2020 is a leap year
		assert.Equal(t, int64(20200101), days[0])
		assert.Equal(t, int64(20200229), days[59])
		assert.Equal(t, int64(20201231), days[365])
	}},
	"LONG_ARRAY Util.intsBetween(1, i, 1);": {vars: map[string]any{"i": int64(3)}, want: []int64{1, 2}},
	"STRING WORKFLOW_RUN_POLICY = params.getFromInstance('RUN_POLICY'); if (WORKFLOW_RUN_POLICY == \"START_FRESH_NEW_RUN\") return \"run\"; else if (WORKFLOW_RUN_POLICY == \"RESTART_FROM_INCOMPLETE\") return \"resume\"; else if (WORKFLOW_RUN_POLICY == \"RESTART_FROM_START\") return \"run\"; else throw \"Unsupported restart mode: \" + WORKFLOW_RUN_POLICY;": {
		want: "run"},
	"LONG auu+1":          {want: int64(42)},
	"LONG e1.get('bar');": {want: int64(123)},
	"LONG_ARRAY e1.get('bat').get('baz');": {vars: map[string]any{"e1": map[string]any{"bat": map[string]any{"baz": []int64{1, 2, 3}}}},
		want: []int64{1, 2, 3}},
	"LONG foo + 1;":                 {vars: map[string]any{"foo": int64(10)}, want: int64(11)},
	"LONG i * 10;":                  {vars: map[string]any{"i": int64(2)}, want: int64(20)},
	"LONG i + 2;":                   {vars: map[string]any{"i": int64(2)}, want: int64(4)},
	"STRING i + j;":                 {want: "20200101a"},
	"LONG i+1":                      {want: int64(20200102)},
	"LONG job3__sleep_seconds + 1;": {want: int64(16)},
	"STRING_MAP m = new Map(); m.put('foo', 'bar'); return m;": {want: map[string]string{"foo": "bar"}},
	"MAP m=new Map(); m.put('foo', 'bar'); m.put('bar', 123L); m.put('bat', new Map()); m.get('bat').put('baz', new long[]{1,2,3}); return m;": {
		want: map[string]any{"foo": "bar", "bar": int64(123), "bat": map[string]any{"baz": []int64{1, 2, 3}}}},
	// reference/expected-outcomes.txt: foo = "September".
	"STRING new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();": {want: "September"},
	" new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();":       {want: "September"},
	"BOOLEAN_ARRAY new boolean[]{true, false, true};":                                                   {want: []bool{true, false, true}},
	"DOUBLE_ARRAY new double[]{1.1,2.2,3.3};":                                                           {want: []float64{1.1, 2.2, 3.3}},
	"LONG_ARRAY new int[]{1,2,3};":                                                                      {want: []int64{1, 2, 3}},
	"STRING_ARRAY param1":                                                                               {want: []string{"a", "b", "c"}},
	"STRING_ARRAY param1;":                                                                              {want: []string{"a", "b", "c"}},
	"LONG params.get('param0')":                                                                         {want: int64(15)},
	" params.get('param0')":                                                                             {want: int64(15)},
	"STRING params.getFromSignal('foo')":                                                                {want: "bat"},
	"LONG params.getFromSignal('signal_a', 'watermark')":                                                {want: int64(123456)},
	"STRING params.getFromSignalDependency('0', 'vtts_utc_dateint')":                                    {want: "20500101"},
	"LONG params.getFromStep('MAESTRO_STEP_ERROR_RETRIES')":                                             {want: int64(0)},
	"MAP params['job' + '.' +'2__param1']":                                                              {want: map[string]any{"foo": "bar"}},
	"STRING_MAP params['job' + '.' +'2__param1']":                                                       {want: map[string]string{"foo": "bar"}},
	"LONG return 100;":                                                                                  {want: int64(100)},
	"DOUBLE_ARRAY return new double[]{1.2, 3.45};":                                                      {want: []float64{1.2, 3.45}},
	"DOUBLE_ARRAY return new double[]{1.229999999999, 3.00000000000001};":                               {want: []float64{1.229999999999, 3.00000000000001}},
	// The sample's signal_a carries foo = "bat": a string, which Maestro
	// too cannot turn into a number.
	"DOUBLE return params.getFromSignal('signal_a', 'foo');": {evalErr: `expected DOUBLE, got string "bat"`},
	"LONG return params.getFromSignal('signal_a', 'foo');":   {evalErr: `expected LONG, got string "bat"`},
	"STRING return params.getFromSignal('signal_a', 'foo');": {want: "bat"},
	"STRING sleep_seconds + '1';":                            {want: "161"},
	"LONG x * 5;":                                            {want: int64(25)},
	"BOOLEAN !(1 > 0)":                                       {want: false},
	"BOOLEAN 1 > 0":                                          {want: true},
	"BOOLEAN 2 > 0":                                          {want: true},
	"BOOLEAN false":                                          {want: false},
	"BOOLEAN true":                                           {want: true},
	"BOOLEAN foo != 'default'":                               {want: true},
	"BOOLEAN param2 < 0":                                     {want: false},
	"BOOLEAN param2 >= 0":                                    {want: true},
	"BOOLEAN params.getFromStep('job.3', 'param2') > 0":      {want: true},
	"BOOLEAN params.getFromStep('job.4', 'param3') > 0":      {want: false},
	"BOOLEAN x > 10":                                         {want: false},
	"BOOLEAN x > 3":                                          {want: true},
	"BOOLEAN attempt_cnt < 10":                               {want: true},
	"BOOLEAN foo == 'bar'":                                   {want: true},
	"BOOLEAN partition_count > 0":                            {want: true},
	"LONG 1+9":                                               {want: int64(10)},
}

func checkUUID(t *testing.T, v any) {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "want a string, got %T", v)
	assert.Regexp(t, uuidPattern, s)
}

func init() {
	// The two Joda DateTimeFormatter expressions differ in their last line
	// only: TARGET_RUN_DATE 20210707 with hour "00", printed as yyyyMMdd and
	// as HH.
	for suffix, want := range map[string]string{"HH": "00", "yyyyMMdd": "20210707"} {
		src := "\nDateTimeFormatter tz_dateint_hour_formatter = DateTimeFormat\n    .forPattern(\"yyyyMMddHH\")\n" +
			"    .withZone(DateTimeZone.forID(\"UTC\"));\n\nDateTime dt = tz_dateint_hour_formatter\n" +
			"    .parseDateTime(TARGET_RUN_DATE + \"00\")\n    .minusDays(0)\n    .minusHours(0);\n\n" +
			"dt.withZone(DateTimeZone.forID(\"UTC\")).toString(\"" + suffix + "\");\n"
		corpusCases["STRING "+src] = corpusCase{want: want}
	}
}

func TestCorpusExpressions(t *testing.T) {
	entries := loadCorpus(t)
	require.NotEmpty(t, entries)
	lang := New(DefaultLimits())
	covered := map[string]bool{}
	for _, e := range entries {
		typ := strings.ToUpper(e.Type)
		key := typ + " " + e.Expression
		covered[key] = true
		t.Run(fmt.Sprintf("%s/%s", e.Kind, truncate(e.Expression, 60)), func(t *testing.T) {
			c, ok := corpusCases[key]
			require.True(t, ok, "corpus expression %q (type %q, in %v) has no expected outcome", e.Expression, typ, e.Files)
			env := corpusEnv()
			for k, v := range c.vars {
				env.Vars[k] = v
			}
			prog, err := lang.Compile(e.Expression, model.ParamType(typ), scopeOf(env))
			if c.unsupported != "" {
				requireErrorOf(t, err, ErrUnsupported, c.unsupported)
				assert.True(t, strings.HasPrefix(err.Error(), "expression "+fmt.Sprintf("%q", truncate(e.Expression, 80))),
					"error must quote the expression: %v", err)
				return
			}
			require.NoError(t, err)
			v, err := prog.Eval(context.Background(), env)
			if c.evalErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.evalErr)
				return
			}
			require.NoError(t, err)
			if c.check != nil {
				c.check(t, v)
				return
			}
			assert.Equal(t, c.want, v)
		})
	}
	for key := range corpusCases {
		assert.True(t, covered[key], "expected outcome %q matches no corpus expression", key)
	}
}

// TestCorpusSupportedShare reports how much of the corpus evaluates.
func TestCorpusSupportedShare(t *testing.T) {
	entries := loadCorpus(t)
	lang := New(DefaultLimits())
	env := corpusEnv()
	supported := 0
	for _, e := range entries {
		if _, err := lang.Compile(e.Expression, model.ParamType(strings.ToUpper(e.Type)), scopeOf(env)); err == nil {
			supported++
		}
	}
	t.Logf("%d of %d corpus expressions compile", supported, len(entries))
	assert.Greater(t, supported, len(entries)/2)
}
