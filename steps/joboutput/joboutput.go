// Package joboutput reads the outputs a container job prints to its log,
// as Maestro's Kubernetes steps do: the job prints
//
//	$MAESTRO_OUTPUT_START{"params": {...}, "artifacts": {...}}$MAESTRO_OUTPUT_END
//
// with the two variables set in its environment (Env), and the text between
// the last start token and the last end token of its log is a JSON object
// whose "params" become output params (each param as Maestro writes it: an
// object with "evaluated_result" or "value"), whose "maestro_retry"
// artifact may say that a failure is not retryable, and whose
// "maestro_dynamic_output" artifact lists signals to announce when the step
// succeeds (see orchestrator.DynamicSignals).
package joboutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"

	"github.com/maestro-serverless/maestro/jsonnum"
)

// The variables a job's environment gets and the tokens they hold
// (Maestro's names and values).
const (
	StartVar   = "MAESTRO_OUTPUT_START"
	EndVar     = "MAESTRO_OUTPUT_END"
	StartToken = "MAESTRO_OUTPUT_START_TOKEN"
	EndToken   = "MAESTRO_OUTPUT_END_TOKEN"
)

// MaxBytes bounds the output a job may print.
const MaxBytes = 256 << 10

// Env returns a job's environment, each variable as pair makes it, sorted
// by name: the step attempt's ids (MAESTRO_WORKFLOW_ID,
// ..._INSTANCE_ID, ..._RUN_ID, MAESTRO_STEP_ID, MAESTRO_STEP_ATTEMPT_ID,
// for PUT /api/v3/output-data), the variables that let it print its output,
// then the step's own (user), which win.
func Env[T any](m orchestrator.StepWork, user map[string]string, pair func(name, value string) T) []T {
	env := map[string]string{
		"MAESTRO_WORKFLOW_ID": m.WorkflowID, "MAESTRO_WORKFLOW_INSTANCE_ID": strconv.FormatInt(m.InstanceID, 10),
		"MAESTRO_WORKFLOW_RUN_ID": strconv.FormatInt(m.RunID, 10), "MAESTRO_STEP_ID": m.StepID,
		"MAESTRO_STEP_ATTEMPT_ID": strconv.FormatInt(m.Attempt, 10),
		StartVar:                  StartToken, EndVar: EndToken,
	}
	maps.Copy(env, user)
	out := make([]T, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, pair(name, env[name]))
	}
	return out
}

// Output is what a job reported.
type Output struct {
	// Params are output params by name.
	Params map[string]any
	// NotRetryable is set when the job said its failure is not retryable
	// (artifact maestro_retry {"retryable": false}).
	NotRetryable bool
	// Signals are the dynamic signal outputs it reported (artifact
	// maestro_dynamic_output).
	Signals []engine.DynamicSignal
}

// ExitFailure is the completion of a job that exited with a non-zero
// code, msg saying so (see ExitMessage): a user error, retried per the
// step's retry policy, or a fatal one when the output the job printed
// (found) says its failure is not retryable.
func ExitFailure(out Output, found bool, msg string) orchestrator.TaskCompletion {
	if found && out.NotRetryable {
		return orchestrator.TaskCompletion{Action: orchestrator.TaskFailure, Error: engine.OutcomeFatalError, Message: msg + " (the job says it is not retryable)"}
	}
	return orchestrator.TaskCompletion{Action: orchestrator.TaskFailure, Error: engine.OutcomeUserError, Message: msg}
}

// ExitMessage says that a job exited with code, and why when reason is
// set.
func ExitMessage(code int, reason string) string {
	msg := fmt.Sprintf("exit code %d", code)
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}

// Find returns the output in log (the job's log, or its tail): found is
// false when it prints none; err reports one that is not valid.
func Find(log string) (out Output, found bool, err error) {
	end := strings.LastIndex(log, EndToken)
	if end < 0 {
		return Output{}, false, nil
	}
	start := strings.LastIndex(log[:end], StartToken)
	if start < 0 {
		return Output{}, false, nil
	}
	text := strings.TrimSpace(log[start+len(StartToken) : end])
	if len(text) > MaxBytes {
		return Output{}, true, fmt.Errorf("the job's output is %d bytes, more than %d", len(text), MaxBytes)
	}
	var doc struct {
		Params    map[string]json.RawMessage `json:"params"`
		Artifacts map[string]json.RawMessage `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return Output{}, true, fmt.Errorf("the job's output is not a JSON object: %v", err)
	}
	out.Params = map[string]any{}
	for name, raw := range doc.Params {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil {
			return Output{}, true, fmt.Errorf("output param %q: want an object with evaluated_result or value", name)
		}
		v, ok := p["evaluated_result"]
		if !ok {
			v, ok = p["value"]
		}
		if !ok {
			return Output{}, true, fmt.Errorf("output param %q: want an object with evaluated_result or value", name)
		}
		var val any
		if err := jsonnum.Decode(v, &val); err != nil {
			return Output{}, true, fmt.Errorf("output param %q: %v", name, err)
		}
		out.Params[name] = val
	}
	if raw, ok := doc.Artifacts[signals.DynamicOutputKey]; ok {
		sigs, problems := orchestrator.DynamicSignals(raw, "artifacts."+signals.DynamicOutputKey)
		if len(problems) > 0 {
			return Output{}, true, fmt.Errorf("the job's output: %s", strings.Join(problems, "; "))
		}
		out.Signals = sigs
	}
	if raw, ok := doc.Artifacts["maestro_retry"]; ok {
		var r struct {
			Retryable *bool `json:"retryable"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Retryable != nil && !*r.Retryable {
			out.NotRetryable = true
		}
	}
	return out, true, nil
}

// Logs is the part of the CloudWatch Logs client Tail uses.
type Logs interface {
	GetLogEvents(ctx context.Context, in *cloudwatchlogs.GetLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetLogEventsOutput, error)
}

// Tail finds a job's output in the last megabyte of its log stream.
// A stream that does not exist holds none.
func Tail(ctx context.Context, logs Logs, group, stream string) (Output, bool, error) {
	var lines []string
	size := 0
	var token *string
	for page := 0; page < 10 && size < 1<<20; page++ {
		out, err := logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{
			LogGroupName: aws.String(group), LogStreamName: aws.String(stream), StartFromHead: aws.Bool(false), NextToken: token,
		})
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() == "ResourceNotFoundException" {
			return Output{}, false, nil
		}
		if err != nil {
			return Output{}, false, fmt.Errorf("read log %s/%s: %w", group, stream, err)
		}
		page := make([]string, 0, len(out.Events))
		for _, e := range out.Events {
			page = append(page, aws.ToString(e.Message))
			size += len(aws.ToString(e.Message))
		}
		lines = append(page, lines...)
		if len(out.Events) == 0 || aws.ToString(out.NextBackwardToken) == aws.ToString(token) {
			break
		}
		token = out.NextBackwardToken
	}
	return Find(strings.Join(lines, "\n"))
}
