// Package lambdastep runs Lambda steps: it invokes an AWS Lambda function
// described by the step's `lambda` MAP param —
//
//	function_name    the function's name or ARN (required); it must be on
//	                 the allow-list (Config.AllowFunctions)
//	qualifier        a version or alias (optional)
//	payload          the JSON the function receives (any value; {} when absent)
//	invocation_type  RequestResponse (default) or Event
//
// RequestResponse waits for the function: the JSON object it returns
// becomes the step's output params (any other value the single output
// "result"), a function error is a user error (retried per the retry
// policy), throttling and Lambda's service errors are platform errors, and
// a function that does not exist or a request Lambda refuses is a fatal
// error. Event invokes it asynchronously for long work: the payload, which
// must then be an object, carries the step's task token as
// "maestro_task_token", and the function (or whatever it starts) ends the
// step through POST /api/v3/tasks/success or /failure with the token in
// the body: {"task_token": <maestro_task_token>, "outputs": {...}}.
package lambdastep

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/steps/stepparam"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Names of the step params and outputs this runner reads and writes.
const (
	ParamLambda = "lambda"
	// PayloadTokenField is the payload field that carries an asynchronous
	// invocation's task token.
	PayloadTokenField = "maestro_task_token"
	// OutputResult holds a returned value that is not a JSON object.
	OutputResult = "result"
)

// callReserve is the time a synchronous call leaves of its worker's
// invocation, to record the outcome.
const callReserve = 3 * time.Second

// Invocation types.
const (
	InvokeRequestResponse = "RequestResponse"
	InvokeEvent           = "Event"
)

// Client is the part of the Lambda client the runner uses.
type Client interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Config configures a Runner.
type Config struct {
	Client Client
	// AllowFunctions lists the functions steps may invoke: names, or ARNs
	// (a name matches its ARN in any account and region only when the
	// entry is the bare name). Empty allows none.
	AllowFunctions []string
	// Rights returns the team rights a step attempt launches with
	// (steprights.Resolver.Scope); when it enforces a scope, the function
	// must also match the team's lambdas (teamrights.MatchLambda), else
	// the step fails without invoking it. nil: AllowFunctions alone.
	Rights func(ctx context.Context, m orchestrator.StepWork) (teamrights.Scope, error)
}

// Runner executes Lambda steps. It implements orchestrator.CallbackRunner.
type Runner struct {
	client Client
	allow  []string
	rights func(ctx context.Context, m orchestrator.StepWork) (teamrights.Scope, error)
}

var _ orchestrator.CallbackRunner = (*Runner)(nil)

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Client == nil {
		return nil, errors.New("lambdastep: a Lambda client is required")
	}
	for _, f := range cfg.AllowFunctions {
		if strings.TrimSpace(f) == "" {
			return nil, errors.New("lambdastep: an empty entry in AllowFunctions")
		}
	}
	return &Runner{client: cfg.Client, allow: slices.Clone(cfg.AllowFunctions), rights: cfg.Rights}, nil
}

// call is the invocation a step's params describe.
type call struct {
	function  string
	qualifier string
	payload   any
	async     bool
}

func parseCall(params engine.Values) (*call, error) {
	l, err := stepparam.Map(params, ParamLambda)
	if err != nil {
		return nil, err
	}
	str := func(name string) (string, error) {
		s, err := stepparam.String(l, ParamLambda, name)
		return strings.TrimSpace(s), err
	}
	c := &call{payload: l["payload"]}
	if c.function, err = str("function_name"); err != nil {
		return nil, err
	}
	if c.function == "" {
		return nil, fmt.Errorf("param %s.function_name is missing", ParamLambda)
	}
	if c.qualifier, err = str("qualifier"); err != nil {
		return nil, err
	}
	it, err := str("invocation_type")
	if err != nil {
		return nil, err
	}
	switch {
	case it == "" || strings.EqualFold(it, InvokeRequestResponse):
	case strings.EqualFold(it, InvokeEvent):
		c.async = true
	default:
		return nil, fmt.Errorf("param %s.invocation_type %q is not RequestResponse or Event", ParamLambda, it)
	}
	for k := range l {
		switch k {
		case "function_name", "qualifier", "payload", "invocation_type":
		default:
			return nil, fmt.Errorf("param %s.%s is not a Lambda step field (function_name, qualifier, payload, invocation_type)", ParamLambda, k)
		}
	}
	if c.payload == nil {
		c.payload = map[string]any{}
	}
	return c, nil
}

// allowed reports whether function (a name or an ARN) is on the allow-list.
func (r *Runner) allowed(function string) bool {
	name := function
	if strings.HasPrefix(function, "arn:") {
		// arn:aws:lambda:region:account:function:name[:qualifier]
		if parts := strings.Split(function, ":"); len(parts) >= 7 {
			name = parts[6]
		}
	}
	for _, a := range r.allow {
		if a == function || (!strings.HasPrefix(a, "arn:") && a == name) {
			return true
		}
	}
	return false
}

// Waits reports whether m's step invokes its function asynchronously: it
// then ends through its task token.
func (r *Runner) Waits(m orchestrator.StepWork) bool {
	c, err := parseCall(m.Params)
	return err == nil && c.async
}

// RunStep invokes the function and waits for its answer. Step failures are
// outcomes; the error is always nil.
func (r *Runner) RunStep(ctx context.Context, m orchestrator.StepWork) (engine.StepFinished, error) {
	res := engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt}
	c, err := parseCall(m.Params)
	if err != nil {
		return finish(res, engine.OutcomeFatalError, err.Error()), nil
	}
	if o, msg := r.teamAllows(ctx, m, c.function); o != "" {
		return finish(res, o, msg), nil
	}
	payload, res2, ok := r.prepare(res, c)
	if !ok {
		return res2, nil
	}
	callCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		// Answer before the worker's own invocation ends.
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadline(ctx, dl.Add(-callReserve))
		defer cancel()
	}
	out, err := r.client.Invoke(callCtx, &lambda.InvokeInput{
		FunctionName: aws.String(c.function), Qualifier: qualifier(c.qualifier),
		InvocationType: types.InvocationTypeRequestResponse, Payload: payload, LogType: types.LogTypeTail,
	})
	if err == nil {
		// What the invocation was billed for, whatever it returned.
		res.Compute = billed(aws.ToString(out.LogResult))
	}
	if err != nil && ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return finish(res, engine.OutcomeFatalError, fmt.Sprintf(
			"function %s did not answer within the worker's invocation; invoke long work with invocation_type Event", c.function)), nil
	}
	if err != nil {
		o, msg := classify(c.function, err)
		return finish(res, o, msg), nil
	}
	if out.FunctionError != nil {
		return finish(res, engine.OutcomeUserError, functionError(c.function, aws.ToString(out.FunctionError), out.Payload)), nil
	}
	outputs, err := decodeOutputs(out.Payload)
	if err != nil {
		return finish(res, engine.OutcomeFatalError, fmt.Sprintf("function %s returned %v", c.function, err)), nil
	}
	res.Outcome, res.Outputs = engine.OutcomeSucceeded, outputs
	return res, nil
}

// reportLine matches the billing fields of the REPORT line Lambda ends an
// invocation's log with.
var reportLine = regexp.MustCompile(`Billed Duration: (\d+) ms\s+Memory Size: (\d+) MB`)

// billed reads what a synchronous invocation was billed for from its log
// tail (base64, as Invoke returns it with LogType Tail): nil when the tail
// has no REPORT line.
func billed(tail string) pricing.Usage {
	log, err := base64.StdEncoding.DecodeString(tail)
	if err != nil {
		return nil
	}
	m := reportLine.FindSubmatch(log)
	if m == nil {
		return nil
	}
	ms, err1 := strconv.ParseInt(string(m[1]), 10, 64)
	mb, err2 := strconv.ParseInt(string(m[2]), 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	return pricing.LambdaInvocation(ms, mb)
}

// Dispatch invokes the function asynchronously with token in its payload.
func (r *Runner) Dispatch(ctx context.Context, m orchestrator.StepWork, token string) (orchestrator.Handover, *engine.StepFinished, error) {
	res := engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt}
	c, err := parseCall(m.Params)
	if err != nil {
		res = finish(res, engine.OutcomeFatalError, err.Error())
		return orchestrator.Handover{}, &res, nil
	}
	if o, msg := r.teamAllows(ctx, m, c.function); o == engine.OutcomePlatformError {
		return orchestrator.Handover{}, nil, errors.New(msg)
	} else if o != "" {
		res = finish(res, o, msg)
		return orchestrator.Handover{}, &res, nil
	}
	obj, ok := c.payload.(map[string]any)
	if !ok {
		res = finish(res, engine.OutcomeFatalError, fmt.Sprintf("param %s.payload must be a MAP for an Event invocation (it carries %s), not %T", ParamLambda, PayloadTokenField, c.payload))
		return orchestrator.Handover{}, &res, nil
	}
	if _, taken := obj[PayloadTokenField]; taken {
		res = finish(res, engine.OutcomeFatalError, fmt.Sprintf("param %s.payload must not set %s: the step sets it", ParamLambda, PayloadTokenField))
		return orchestrator.Handover{}, &res, nil
	}
	withToken := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		withToken[k] = v
	}
	withToken[PayloadTokenField] = token
	c.payload = withToken
	payload, res2, ok := r.prepare(res, c)
	if !ok {
		return orchestrator.Handover{}, &res2, nil
	}
	_, err = r.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(c.function), Qualifier: qualifier(c.qualifier),
		InvocationType: types.InvocationTypeEvent, Payload: payload,
	})
	if err != nil {
		o, msg := classify(c.function, err)
		if o == engine.OutcomePlatformError {
			return orchestrator.Handover{}, nil, errors.New(msg)
		}
		res = finish(res, o, msg)
		return orchestrator.Handover{}, &res, nil
	}
	target := "Lambda function " + c.function
	if c.qualifier != "" {
		target += ":" + c.qualifier
	}
	return orchestrator.Handover{Target: target}, nil, nil
}

// teamAllows checks function against m's team rights: it returns "" when
// the function may be invoked, else the outcome and message of the
// attempt's end (a fatal error naming the rule; a platform error when the
// rights could not be read).
func (r *Runner) teamAllows(ctx context.Context, m orchestrator.StepWork, function string) (engine.Outcome, string) {
	if r.rights == nil {
		return "", ""
	}
	scope, err := r.rights(ctx, m)
	if msg, refused := teamrights.IsRefusal(err); refused {
		return engine.OutcomeFatalError, msg
	} else if err != nil {
		return engine.OutcomePlatformError, err.Error()
	}
	if !scope.Enforced {
		return "", ""
	}
	if err := scope.Rights.AllowsLambda(scope.Team, function); err != nil {
		return engine.OutcomeFatalError, fmt.Sprintf("%v; add a pattern matching it to CDK context teams.%s.lambdas", err, scope.Team)
	}
	return "", ""
}

// prepare checks c's function against the allow-list and encodes its
// payload; ok is false with the attempt's end when it cannot be invoked.
func (r *Runner) prepare(res engine.StepFinished, c *call) ([]byte, engine.StepFinished, bool) {
	if !r.allowed(c.function) {
		return nil, finish(res, engine.OutcomeFatalError, fmt.Sprintf(
			"function %q is not on the Lambda step allow-list (%s); add it to the stack's lambdaFunctions setting to invoke it",
			c.function, strings.Join(r.allow, ", "))), false
	}
	payload, err := json.Marshal(c.payload)
	if err != nil {
		return nil, finish(res, engine.OutcomeFatalError, fmt.Sprintf("param %s.payload: %v", ParamLambda, err)), false
	}
	return payload, res, true
}

func qualifier(q string) *string {
	if q == "" {
		return nil
	}
	return aws.String(q)
}

func finish(res engine.StepFinished, o engine.Outcome, msg string) engine.StepFinished {
	res.Outcome, res.Message = o, msg
	return res
}

// classify sorts an Invoke error: throttling and Lambda's own or network
// failures are platform errors (retried), a request that can never succeed
// a fatal one.
func classify(function string, err error) (engine.Outcome, string) {
	var api smithy.APIError
	if errors.As(err, &api) {
		msg := fmt.Sprintf("invoke %s: %s: %s", function, api.ErrorCode(), api.ErrorMessage())
		switch api.ErrorCode() {
		case "ResourceNotFoundException", "InvalidRequestContentException", "RequestTooLargeException",
			"InvalidParameterValueException", "AccessDeniedException", "UnsupportedMediaTypeException",
			"KMSAccessDeniedException", "KMSDisabledException", "KMSNotFoundException", "InvalidRuntimeException":
			return engine.OutcomeFatalError, msg
		}
		return engine.OutcomePlatformError, msg
	}
	return engine.OutcomePlatformError, fmt.Sprintf("invoke %s: %v", function, err)
}

// functionError describes a function error from its payload
// ({"errorType", "errorMessage"}), clipped.
func functionError(function, kind string, payload []byte) string {
	var e struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	msg := fmt.Sprintf("function %s failed (%s)", function, kind)
	if json.Unmarshal(payload, &e) == nil && (e.Type != "" || e.Message != "") {
		msg += ": " + strings.TrimSpace(e.Type+" "+e.Message)
	}
	const limit = 1000
	if len(msg) > limit {
		msg = strings.ToValidUTF8(msg[:limit], "") + "..."
	}
	return msg
}

// decodeOutputs turns a function's result into output params.
func decodeOutputs(payload []byte) (map[string]any, error) {
	if len(strings.TrimSpace(string(payload))) == 0 {
		return nil, nil
	}
	var v any
	if err := jsonnum.Decode(payload, &v); err != nil {
		return nil, fmt.Errorf("a result that is not JSON: %w", err)
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	default:
		return map[string]any{OutputResult: x}, nil
	}
}
