// Package callbackstep runs Callback steps: the step hands its task token
// to an SNS topic, an SQS queue or an HTTP endpoint and waits until
// whoever receives it ends the step through POST /api/v3/tasks/success or
// /failure with the token in the body ({"task_token": ..., "outputs": ...};
// and, with the heartbeat_timeout param, says it is still at work through
// /heartbeat). The step's `callback` MAP param says where:
//
//	sqs_queue_url  a queue's URL, or
//	sns_topic_arn  a topic's ARN, or
//	http           an HTTP call: the Http step's url, method (default
//	               POST) and headers (exactly one of the three; queues and
//	               topics on the allow-list, hosts on the Http step's)
//	message        any JSON value passed on as is (optional)
//
// The message sent (the HTTP call's body) is a JSON object: task_token,
// workflow_id, workflow_instance_id, workflow_run_id, step_id,
// step_attempt_id and message. An HTTP call that does not succeed (as an
// Http step would not) ends the attempt as that Http step would have
// ended.
package callbackstep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/handover"
	"github.com/maestro-serverless/maestro/steps/stepparam"
)

// ParamCallback is the step param this runner reads.
const ParamCallback = "callback"

// SQS and SNS are the parts of their clients the runner uses.
type (
	SQS interface {
		SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	}
	SNS interface {
		Publish(ctx context.Context, in *sns.PublishInput, opts ...func(*sns.Options)) (*sns.PublishOutput, error)
	}
)

// Config configures a Runner. AllowQueues (URLs) and AllowTopics (ARNs)
// list where steps may send their tokens; empty allows none.
type Config struct {
	SQS         SQS
	SNS         SNS
	AllowQueues []string
	AllowTopics []string
	// HTTP runs the http target's call: the Http step's runner (its
	// allow-list and dial checks apply); nil refuses http targets.
	HTTP orchestrator.StepRunner
}

// Runner executes Callback steps. It implements orchestrator.CallbackRunner.
type Runner struct {
	handover.Always
	sqs    SQS
	sns    SNS
	queues []string
	topics []string
	http   orchestrator.StepRunner
}

var _ orchestrator.CallbackRunner = (*Runner)(nil)

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.SQS == nil || cfg.SNS == nil {
		return nil, errors.New("callbackstep: SQS and SNS clients are required")
	}
	return &Runner{Always: handover.Always{Why: "a Callback step is handed over with a task token, not run"}, sqs: cfg.SQS, sns: cfg.SNS, queues: slices.Clone(cfg.AllowQueues), topics: slices.Clone(cfg.AllowTopics), http: cfg.HTTP}, nil
}

// Message is what a Callback step sends.
type Message struct {
	TaskToken  string `json:"task_token"`
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	RunID      int64  `json:"workflow_run_id"`
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
	Message    any    `json:"message,omitempty"`
}

type target struct {
	queue, topic string
	http         map[string]any
	message      any
}

func parseTarget(params engine.Values) (*target, error) {
	c, err := stepparam.Map(params, ParamCallback)
	if err != nil {
		return nil, err
	}
	t := &target{message: c["message"]}
	for k, v := range c {
		switch k {
		case "message":
		case "http":
			h, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("param %s.http must be a MAP (url, method, headers), not %T", ParamCallback, v)
			}
			if _, ok := h["body"]; ok {
				return nil, fmt.Errorf("param %s.http.body is not allowed: the body is the callback message", ParamCallback)
			}
			t.http = h
		case "sqs_queue_url", "sns_topic_arn":
			s, ok := v.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("param %s.%s must be a non-empty STRING", ParamCallback, k)
			}
			if k == "sqs_queue_url" {
				t.queue = strings.TrimSpace(s)
			} else {
				t.topic = strings.TrimSpace(s)
			}
		default:
			return nil, fmt.Errorf("param %s.%s is not a Callback step field (sqs_queue_url, sns_topic_arn, http, message)", ParamCallback, k)
		}
	}
	n := 0
	for _, set := range []bool{t.queue != "", t.topic != "", t.http != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("param %s needs exactly one of sqs_queue_url, sns_topic_arn and http", ParamCallback)
	}
	return t, nil
}

// Dispatch sends the task token to the step's queue or topic.
func (r *Runner) Dispatch(ctx context.Context, m orchestrator.StepWork, token string) (orchestrator.Handover, *engine.StepFinished, error) {
	t, err := parseTarget(m.Params)
	if err != nil {
		return handover.Refuse(err.Error())
	}
	body, err := json.Marshal(Message{TaskToken: token, WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID,
		StepID: m.StepID, Attempt: m.Attempt, Message: t.message})
	if err != nil {
		return handover.Refuse(fmt.Sprintf("param %s.message: %v", ParamCallback, err))
	}
	if t.http != nil {
		return r.call(ctx, m, t.http, body)
	}
	if t.queue != "" {
		return send(sqsQueue, t.queue, r.queues, func() error {
			_, err := r.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(t.queue), MessageBody: aws.String(string(body))})
			return err
		})
	}
	return send(snsTopic, t.topic, r.topics, func() error {
		_, err := r.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(t.topic), Message: aws.String(string(body))})
		return err
	})
}

// destination describes a kind of place a task token is sent to, for
// messages: a queue or a topic.
type destination struct {
	kind    string // "queue"
	service string // "SQS"
	setting string // the stack's setting that lists the allowed ones
	verb    string // "send to"
}

// The two kinds of destination.
var (
	sqsQueue = destination{kind: "queue", service: "SQS", setting: "callbackQueues", verb: "send to"}
	snsTopic = destination{kind: "topic", service: "SNS", setting: "callbackTopics", verb: "publish to"}
)

// send sends a task token with do to name, a destination of kind d, if
// name is on allowed; a failed send is sorted by failed.
func send(d destination, name string, allowed []string, do func() error) (orchestrator.Handover, *engine.StepFinished, error) {
	if !slices.Contains(allowed, name) {
		return handover.Refuse(fmt.Sprintf("%s %q is not on the Callback step allow-list; add it to the stack's %s setting", d.kind, name, d.setting))
	}
	if err := do(); err != nil {
		return failed(d.verb+" "+d.kind+" "+name, err)
	}
	return orchestrator.Handover{Target: d.service + " " + d.kind + " " + name}, nil, nil
}

// failed sorts a send's error: a destination that does not exist or that
// the worker may not use is fatal; anything else a platform error.
func failed(what string, err error) (orchestrator.Handover, *engine.StepFinished, error) {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "NotFound", "NotFoundException",
			"AuthorizationError", "AccessDenied", "AccessDeniedException", "InvalidParameter", "InvalidParameterValue":
			return orchestrator.Handover{}, &engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: fmt.Sprintf("%s: %s: %s", what, api.ErrorCode(), api.ErrorMessage())}, nil
		}
	}
	return orchestrator.Handover{}, nil, fmt.Errorf("%s: %w", what, err)
}

// call makes the http target's call with body, as an Http step would.
func (r *Runner) call(ctx context.Context, m orchestrator.StepWork, h map[string]any, body []byte) (orchestrator.Handover, *engine.StepFinished, error) {
	if r.http == nil {
		return orchestrator.Handover{}, &engine.StepFinished{Outcome: engine.OutcomeFatalError,
			Message: "this runtime has no Http step runner for a callback's http target"}, nil
	}
	call := make(map[string]any, len(h)+2)
	for k, v := range h {
		call[k] = v
	}
	call["body"] = string(body)
	if _, ok := call["method"]; !ok {
		call["method"] = "POST"
	}
	hm := m
	hm.StepType, hm.Params = model.StepHTTP, engine.Values{"http": call}
	res, err := r.http.RunStep(ctx, hm)
	if err != nil {
		return orchestrator.Handover{}, nil, err
	}
	if res.Outcome != engine.OutcomeSucceeded {
		res.Message = "callback call: " + res.Message
		return orchestrator.Handover{}, &res, nil
	}
	url, _ := h["url"].(string)
	return orchestrator.Handover{Target: "HTTP " + url}, nil, nil
}
