package wiring

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/orchestrator"
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

func TestOptionsFromEnvImages(t *testing.T) {
	t.Setenv(EnvECSImages, "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/, docker.io/library/busybox")
	opts, err := optionsFromEnv()
	require.NoError(t, err)
	assert.NoError(t, opts.ECSImages.Check("busybox:1.36"))
	assert.NoError(t, opts.ECSImages.Check("123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/job"))
	assert.Error(t, opts.ECSImages.Check("123456789012.dkr.ecr.us-east-1.amazonaws.com/etl-evil/job"))

	// Unset: no image may run.
	t.Setenv(EnvECSImages, "")
	opts, err = optionsFromEnv()
	require.NoError(t, err)
	assert.ErrorContains(t, opts.ECSImages.Check("busybox"), "no image may run")

	// An entry that reads two ways stops the function from starting.
	t.Setenv(EnvECSImages, "busybox")
	_, err = optionsFromEnv()
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvECSImages)
	assert.Contains(t, err.Error(), `"busybox"`)
}

// TestOptionsFromEnvRefusesLoopback: a Lambda function whose Http
// allow-list admits loopback (Lambda's runtime API on 127.0.0.1:9001) does
// not start, however the environment came to say so.
func TestOptionsFromEnvRefusesLoopback(t *testing.T) {
	for _, entry := range []string{"loopback", "127.0.0.1:9001", "127.0.0.0/8", "::1"} {
		t.Setenv(EnvHTTPAllow, "api.example.com,"+entry)
		_, err := optionsFromEnv()
		require.Error(t, err, entry)
		assert.Contains(t, err.Error(), EnvHTTPAllow)
	}
	t.Setenv(EnvHTTPAllow, "api.example.com,*.example.org:8443")
	_, err := optionsFromEnv()
	require.NoError(t, err)
}

func TestBuildChecksPushedImages(t *testing.T) {
	def := []byte(`{"properties": {"owner": "t"}, "workflow": {"id": "wf", "steps": [{"step": {"id": "k", "type": "Kubernetes",
	  "params": {"kubernetes": {"type": "MAP", "value": {"image": {"type": "STRING", "value": "evil.example.com/miner"}}}}}}]}}`)
	for name, tc := range map[string]struct {
		allow   *images.AllowList
		refused bool
	}{
		"no list (a deployment that sets none)": {nil, true},
		"a list without the image":              {mustAllow(t, "docker.io/library/busybox"), true},
		"a list with the image":                 {mustAllow(t, "evil.example.com/miner"), false},
		"the local stack's default":             {images.AnyImage(), false},
	} {
		t.Run(name, func(t *testing.T) {
			deps, err := Build(Config{}, aws.Config{Region: "us-east-1"}, Options{ECSImages: tc.allow})
			require.NoError(t, err)
			err = deps.Orchestrator.Definitions.ValidateWorkflow(context.Background(), def, orchestrator.FormatJSON)
			if !tc.refused {
				assert.NoError(t, err)
				return
			}
			e := orchestrator.AsError(err)
			assert.Equal(t, http.StatusBadRequest, e.Status)
			require.Len(t, e.Errors, 1)
			assert.Contains(t, e.Errors[0], `workflow.steps[0].step.params.kubernetes.value.image.value: image "evil.example.com/miner"`)
		})
	}
}

func mustAllow(t *testing.T, entries ...string) *images.AllowList {
	t.Helper()
	l, err := images.ParseAllowList(entries)
	require.NoError(t, err)
	return l
}

// TestOptionsFromEnvForeachEstimate: the threshold of foreach estimates is
// a whole number; anything else stops the function, naming the variable.
func TestOptionsFromEnvForeachEstimate(t *testing.T) {
	t.Setenv(EnvForeachEstimateOver, "250")
	if opts, err := optionsFromEnv(); err != nil || opts.ForeachEstimateOver != 250 {
		t.Fatalf("250: %d, %v", opts.ForeachEstimateOver, err)
	}
	t.Setenv(EnvForeachEstimateOver, "lots")
	if _, err := optionsFromEnv(); err == nil || !strings.Contains(err.Error(), EnvForeachEstimateOver) {
		t.Fatalf("lots: %v", err)
	}
}
