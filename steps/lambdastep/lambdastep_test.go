package lambdastep

import (
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
)

func TestParseCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params engine.Values
		want   call
		err    string
	}{
		{name: "missing", params: engine.Values{}, err: `param "lambda" is missing`},
		{name: "not a map", params: engine.Values{"lambda": "f"}, err: "must be a MAP"},
		{name: "no function", params: engine.Values{"lambda": map[string]any{}}, err: "lambda.function_name is missing"},
		{name: "defaults", params: engine.Values{"lambda": map[string]any{"function_name": " f "}},
			want: call{function: "f", payload: map[string]any{}}},
		{name: "event", params: engine.Values{"lambda": map[string]any{"function_name": "f", "qualifier": "live", "invocation_type": "event", "payload": "x"}},
			want: call{function: "f", qualifier: "live", payload: "x", async: true}},
		{name: "bad type", params: engine.Values{"lambda": map[string]any{"function_name": "f", "invocation_type": "DryRun"}}, err: "not RequestResponse or Event"},
		{name: "unknown field", params: engine.Values{"lambda": map[string]any{"function_name": "f", "memory": int64(1)}}, err: "lambda.memory is not a Lambda step field"},
		{name: "function not a string", params: engine.Values{"lambda": map[string]any{"function_name": int64(1)}}, err: "must be a STRING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCall(tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.function != tc.want.function || got.qualifier != tc.want.qualifier || got.async != tc.want.async ||
				strings.TrimSpace(toString(got.payload)) != toString(tc.want.payload) {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func toString(v any) string {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return "{}"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return "?"
}

func TestAllowList(t *testing.T) {
	r := &Runner{allow: []string{"etl", "arn:aws:lambda:us-east-1:111122223333:function:train"}}
	for fn, want := range map[string]bool{
		"etl": true,
		"arn:aws:lambda:eu-west-1:999999999999:function:etl":   true, // a bare name admits its ARNs
		"arn:aws:lambda:us-east-1:111122223333:function:train": true,
		"train": false, // an ARN entry admits only itself
		"arn:aws:lambda:us-east-1:444455556666:function:train": false,
		"other": false,
		"arn:aws:lambda:us-east-1:111122223333:function:etl-admin": false,
	} {
		if got := r.allowed(fn); got != want {
			t.Errorf("allowed(%q) = %v, want %v", fn, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for code, want := range map[string]engine.Outcome{
		"TooManyRequestsException":       engine.OutcomePlatformError,
		"ServiceException":               engine.OutcomePlatformError,
		"EC2ThrottledException":          engine.OutcomePlatformError,
		"ResourceNotFoundException":      engine.OutcomeFatalError,
		"RequestTooLargeException":       engine.OutcomeFatalError,
		"AccessDeniedException":          engine.OutcomeFatalError,
		"ResourceNotReadyException":      engine.OutcomePlatformError,
		"InvalidParameterValueException": engine.OutcomeFatalError,
	} {
		got, msg := classify("f", &smithy.GenericAPIError{Code: code, Message: "m"})
		if got != want || !strings.Contains(msg, code) {
			t.Errorf("%s: %s %q, want %s", code, got, msg, want)
		}
	}
	if got, _ := classify("f", errString("connection reset")); got != engine.OutcomePlatformError {
		t.Errorf("a network error: %s", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestOutputsAndFunctionErrors(t *testing.T) {
	out, err := decodeOutputs([]byte(`{"rows": 7, "table": "t"}`))
	if err != nil || len(out) != 2 || out["table"] != "t" {
		t.Fatalf("object: %v %v", out, err)
	}
	if out, err := decodeOutputs([]byte(`[1,2]`)); err != nil || out[OutputResult] == nil {
		t.Fatalf("array: %v %v", out, err)
	}
	for _, empty := range []string{"", " ", "null"} {
		if out, err := decodeOutputs([]byte(empty)); err != nil || out != nil {
			t.Fatalf("%q: %v %v", empty, out, err)
		}
	}
	if _, err := decodeOutputs([]byte(`{`)); err == nil {
		t.Fatal("broken JSON decoded")
	}
	msg := functionError("f", "Unhandled", []byte(`{"errorType":"ValueError","errorMessage":"bad input"}`))
	if msg != "function f failed (Unhandled): ValueError bad input" {
		t.Fatalf("message %q", msg)
	}
	if msg := functionError("f", "Unhandled", []byte(strings.Repeat("x", 5000))); msg != "function f failed (Unhandled)" {
		t.Fatalf("message %q", msg)
	}
	long := functionError("f", "Unhandled", []byte(`{"errorMessage":"`+strings.Repeat("y", 5000)+`"}`))
	if len(long) > 1003 {
		t.Fatalf("message of %d bytes", len(long))
	}
}
