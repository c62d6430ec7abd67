package callbackstep

import (
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
)

func TestParseTarget(t *testing.T) {
	q := "https://sqs.us-east-1.amazonaws.com/111122223333/jobs"
	topic := "arn:aws:sns:us-east-1:111122223333:jobs"
	for _, tc := range []struct {
		name   string
		params engine.Values
		queue  string
		topic  string
		err    string
	}{
		{name: "queue", params: engine.Values{"callback": map[string]any{"sqs_queue_url": q, "message": "m"}}, queue: q},
		{name: "topic", params: engine.Values{"callback": map[string]any{"sns_topic_arn": " " + topic + " "}}, topic: topic},
		{name: "both", params: engine.Values{"callback": map[string]any{"sqs_queue_url": q, "sns_topic_arn": topic}}, err: "exactly one"},
		{name: "http with a body", params: engine.Values{"callback": map[string]any{"http": map[string]any{"url": "http://x", "body": "b"}}}, err: "the body is the callback message"},
		{name: "http not a map", params: engine.Values{"callback": map[string]any{"http": "http://x"}}, err: "http must be a MAP"},
		{name: "neither", params: engine.Values{"callback": map[string]any{"message": "m"}}, err: "exactly one"},
		{name: "missing", params: engine.Values{}, err: `param "callback" is missing`},
		{name: "not a map", params: engine.Values{"callback": q}, err: "must be a MAP"},
		{name: "empty queue", params: engine.Values{"callback": map[string]any{"sqs_queue_url": " "}}, err: "non-empty STRING"},
		{name: "unknown field", params: engine.Values{"callback": map[string]any{"sqs_queue_url": q, "lambda": map[string]any{}}}, err: "callback.lambda is not a Callback step field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTarget(tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.queue != tc.queue || got.topic != tc.topic {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}
