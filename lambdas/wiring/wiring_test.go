package wiring

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/signals"
)

func TestParseSignalRules(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []signals.Rule
		wantErr string
	}{
		{name: "unset", text: "", want: nil},
		{name: "blank", text: "  \n", want: nil},
		{name: "empty array", text: "[]", want: []signals.Rule{}},
		{
			name: "rules in order, fields optional",
			text: `[{"bucket":"lake","prefix":"events/","suffix":".parquet","name":"lake/events"},{"prefix":"tmp/"}]`,
			want: []signals.Rule{{Bucket: "lake", Prefix: "events/", Suffix: ".parquet", Name: "lake/events"}, {Prefix: "tmp/"}},
		},
		{name: "not JSON", text: `[{"bucket":`, wantErr: "want a JSON array"},
		{name: "an object", text: `{"bucket":"lake"}`, wantErr: "want a JSON array"},
		{name: "null", text: `null`, wantErr: "got null"},
		{name: "unknown field", text: `[{"bucket":"lake","nmae":"x"}]`, wantErr: `unknown field "nmae"`},
		{name: "wrong type", text: `[{"bucket":1}]`, wantErr: "want a JSON array"},
		{name: "trailing data", text: `[] []`, wantErr: "unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSignalRules(tt.text)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFormatSignalRulesRoundTrip(t *testing.T) {
	rules := []signals.Rule{{Bucket: "lake", Prefix: "a&b/", Suffix: "<x>", Name: "s3://lake/ab"}, {Name: "catch-all"}}
	text, err := FormatSignalRules(rules)
	require.NoError(t, err)
	assert.Equal(t, `[{"bucket":"lake","prefix":"a&b/","suffix":"<x>","name":"s3://lake/ab"},{"name":"catch-all"}]`, text)
	back, err := ParseSignalRules(text)
	require.NoError(t, err)
	assert.Equal(t, rules, back)
}

func TestConfigFromEnvSignals(t *testing.T) {
	t.Setenv(EnvTable, "t")
	t.Setenv(EnvSignalDLQURL, "http://q/dlq")
	t.Setenv(EnvSignalRules, `[{"bucket":"lake","name":"n"}]`)
	c, err := ConfigFromEnv(EnvTable, EnvSignalDLQURL)
	require.NoError(t, err)
	assert.Equal(t, "http://q/dlq", c.SignalDLQURL)
	assert.Equal(t, []signals.Rule{{Bucket: "lake", Name: "n"}}, c.SignalRules)

	t.Setenv(EnvSignalRules, `[{"bucket":"lake"`)
	_, err = ConfigFromEnv(EnvTable)
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvSignalRules)

	t.Setenv(EnvSignalRules, "")
	t.Setenv(EnvSignalDLQURL, "")
	_, err = ConfigFromEnv(EnvTable, EnvSignalDLQURL)
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvSignalDLQURL)
}
