package api

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runParams builds a run_params object of n distinct params.
func runParams(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"p%d":{"value":%d,"type":"LONG"}`, i, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestParseStartRequest(t *testing.T) {
	reserved := []string{
		"maestro", "Maestro", "MAESTRO", "scheduler", "Scheduler", "SCHEDULER", "util", "Util", "UTIL",
		"params", "Params", "PARAMS", "AUTH_BLOB", "AUTH_DATA", "AUTH_ACTING_ON_BEHALF_OF_BLOB",
		"AUTH_TRIGGERING_ON_BEHALF_OF_BLOB", "AUTHORIZED_MANAGERS",
	}
	type tcase struct {
		name       string
		body       string
		want       *orchestrator.StartRequest // set for accepted bodies
		wantErrors []string                   // exact details for rejected bodies
	}
	tests := []tcase{
		{name: "empty", body: "", want: &orchestrator.StartRequest{Initiator: manual("")}},
		{name: "whitespace", body: " \n\t", want: &orchestrator.StartRequest{Initiator: manual("")}},
		{name: "empty object", body: "{}", want: &orchestrator.StartRequest{Initiator: manual("")}},
		{name: "nulls are absent fields", body: `{"initiator":null,"request_id":null,"run_params":null,"request_time":null,
			"runtime_tags":null,"artifacts":null,"persist_failed_run":null}`,
			want: &orchestrator.StartRequest{Initiator: manual("")}},
		{name: "initiator any case", body: `{"initiator":{"type":"mAnUaL","user":"bob"}}`,
			want: &orchestrator.StartRequest{Initiator: manual("bob")}},
		{name: "128 params", body: `{"run_params":` + runParams(128) + `}`},
		{name: "reserved look-alike is fine", body: `{"run_params":{"mAestro":{"value":1},"maestro_x":{"value":2}}}`},

		{name: "null body", body: "null", wantErrors: []string{"request body: must be a JSON object"}},
		{name: "array body", body: "[]", wantErrors: []string{"request body: must be a JSON object"}},
		{name: "string body", body: `"manual"`, wantErrors: []string{"request body: must be a JSON object"}},
		{name: "truncated", body: `{"initiator":`, wantErrors: []string{"request body: malformed JSON: unexpected end of input"}},
		{name: "trailing data", body: `{} {}`, wantErrors: []string{"request body: malformed JSON: unexpected data after the object"}},
		{name: "duplicate field", body: `{"request_id":"97a57978-803f-403e-9f9b-376d34689723","request_id":"x"}`,
			wantErrors: []string{"request body: duplicate field request_id"}},
		{name: "unknown fields", body: `{"zeta":1,"alpha":2,"initiator":{"type":"manual"}}`,
			wantErrors: []string{"zeta: unknown field", "alpha: unknown field"}},
		{name: "unknown odd field name", body: `{"a b\"c":1}`, wantErrors: []string{`"a b\"c": unknown field`}},
		{name: "camelCase is unknown", body: `{"requestId":"97a57978-803f-403e-9f9b-376d34689723"}`,
			wantErrors: []string{"requestId: unknown field"}},

		{name: "initiator not object", body: `{"initiator":"manual"}`, wantErrors: []string{"initiator: must be a JSON object"}},
		{name: "initiator without type", body: `{"initiator":{"user":"bob"}}`, wantErrors: []string{"initiator.type: is required"}},
		{name: "initiator type not string", body: `{"initiator":{"type":1}}`, wantErrors: []string{"initiator.type: must be a string"}},
		{name: "initiator type unknown", body: `{"initiator":{"type":"robot"}}`,
			wantErrors: []string{"initiator.type: must be one of MANUAL, SUBWORKFLOW, FOREACH, WHILE, TEMPLATE, TIME, SIGNAL"}},
		{name: "initiator user not string", body: `{"initiator":{"type":"manual","user":{}}}`,
			wantErrors: []string{"initiator.user: must be a string"}},
		{name: "initiator unknown field", body: `{"initiator":{"type":"manual","depth":3}}`,
			wantErrors: []string{"initiator.depth: unknown field"}},

		{name: "request_time negative", body: `{"request_time":-1}`,
			wantErrors: []string{"request_time: must be a non-negative integer (epoch milliseconds)"}},
		{name: "request_time fraction", body: `{"request_time":1.5}`,
			wantErrors: []string{"request_time: must be a non-negative integer (epoch milliseconds)"}},
		{name: "request_time string", body: `{"request_time":"1763776800000"}`,
			wantErrors: []string{"request_time: must be a non-negative integer (epoch milliseconds)"}},

		{name: "request_id not uuid", body: `{"request_id":"my-key-1"}`,
			wantErrors: []string{"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"}},
		{name: "request_id empty", body: `{"request_id":""}`,
			wantErrors: []string{"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"}},
		{name: "request_id without hyphens", body: `{"request_id":"97a57978803f403e9f9b376d34689723"}`,
			wantErrors: []string{"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"}},
		{name: "request_id urn", body: `{"request_id":"urn:uuid:97a57978-803f-403e-9f9b-376d34689723"}`,
			wantErrors: []string{"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"}},
		{name: "request_id number", body: `{"request_id":42}`,
			wantErrors: []string{"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"}},

		{name: "run_params not object", body: `{"run_params":[1]}`, wantErrors: []string{"run_params: must be a JSON object"}},
		{name: "129 params", body: `{"run_params":` + runParams(129) + `}`,
			wantErrors: []string{"run_params: at most 128 params are allowed, got 129"}},
		{name: "duplicate param", body: `{"run_params":{"a":{"value":1},"a":{"value":2}}}`,
			wantErrors: []string{"run_params: duplicate field a"}},

		{name: "runtime_tags not array", body: `{"runtime_tags":"t1"}`, wantErrors: []string{"runtime_tags: must be an array of tags"}},
		{name: "runtime_tags bad element", body: `{"runtime_tags":["ok",3,null]}`,
			wantErrors: []string{"runtime_tags[1]: must be a tag name or a tag object", "runtime_tags[2]: must be a tag name or a tag object"}},
		{name: "artifacts not object", body: `{"artifacts":[]}`, wantErrors: []string{"artifacts: must be a JSON object"}},
		{name: "persist_failed_run not bool", body: `{"persist_failed_run":"yes"}`,
			wantErrors: []string{"persist_failed_run: must be a boolean"}},
		{name: "several errors at once", body: `{"initiator":{"type":"signal"},"request_id":"x","run_params":{"params":{}}}`,
			wantErrors: []string{
				"initiator.type: only manual starts are accepted over the API",
				"request_id: must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723",
				"run_params.params: reserved param name",
			}},
	}
	for _, name := range []string{"SUBWORKFLOW", "foreach", "While", "template", "TIME", "signal"} {
		tests = append(tests, tcase{
			name:       "initiator " + name,
			body:       fmt.Sprintf(`{"initiator":{"type":%q}}`, name),
			wantErrors: []string{"initiator.type: only manual starts are accepted over the API"},
		})
	}
	for _, name := range reserved {
		tests = append(tests, tcase{
			name:       "reserved " + name,
			body:       fmt.Sprintf(`{"run_params":{"ok":{"value":1},%q:{"value":1}}}`, name),
			wantErrors: []string{"run_params." + name + ": reserved param name"},
		})
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStartRequest([]byte(tc.body))
			if tc.wantErrors != nil {
				require.Error(t, err)
				e := orchestrator.AsError(err)
				assert.Equal(t, 400, e.Status)
				assert.Equal(t, "invalid start request", e.Message)
				assert.Equal(t, tc.wantErrors, e.Errors)
				return
			}
			require.NoError(t, err)
			if tc.want != nil {
				assert.Equal(t, *tc.want, got)
			}
			assert.Equal(t, manualInitiator, got.Initiator.Type)
		})
	}
}

func TestParseStartRequestCapsErrorList(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%d":1`, i)
	}
	b.WriteString("}")
	_, err := parseStartRequest([]byte(b.String()))
	e := orchestrator.AsError(err)
	require.Len(t, e.Errors, maxErrorDetails+1)
	assert.Equal(t, "f0: unknown field", e.Errors[0])
	assert.Equal(t, "... and 30 more errors", e.Errors[maxErrorDetails])
}

// TestParseMaestroSampleStartRequest feeds Maestro's own start request
// sample: it must be accepted as it is.
func TestParseMaestroSampleStartRequest(t *testing.T) {
	body, err := os.ReadFile("testdata/maestro-sample-workflow-start-request.json")
	require.NoError(t, err)
	got, err := parseStartRequest(body)
	require.NoError(t, err)

	assert.Equal(t, manual(""), got.Initiator)
	assert.Equal(t, "97a57978-803f-403e-9f9b-376d34689723", got.RequestID)
	require.Len(t, got.RunParams, 4)
	var foo map[string]any
	require.NoError(t, json.Unmarshal(got.RunParams["foo"], &foo))
	assert.Equal(t, map[string]any{"value": "bar", "type": "STRING", "mode": "mutable"}, foo)
	assert.JSONEq(t, `{"expression":"1 + 1;","type":"LONG","validator":"@Positive","mode":"mutable_on_start"}`,
		string(got.RunParams["bbb"]))
}
