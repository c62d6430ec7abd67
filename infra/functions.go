package infra

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

// Function is one handler's Lambda function with its own role and log group.
type Function struct {
	// Handler is the handler name (HandlerAPI, ...).
	Handler string
	// Function is the Lambda function.
	Function awslambda.Function
	// Role is the function's execution role; it holds only the statements
	// this package adds for the handler.
	Role awsiam.Role
	// LogGroup receives the function's JSON logs.
	LogGroup awslogs.LogGroup
}

// deciderActions are the table actions of the decider, which runs
// Orchestrator.Process: the store's GetItem, PutItem, UpdateItem and Query,
// BatchGetItem (the tag permits a round may need, the iterations
// getFromForeach reads), BatchWriteItem (the applied outcome and timer
// events a round deletes after its commit, store.DiscardEvents), plus
// TransactWriteItems, which IAM authorizes per item as PutItem, UpdateItem
// and DeleteItem (store.CommitRun deletes queue and slot items). The store
// never queries an index, so no index ARN is granted.
func deciderActions() []string {
	return []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
		"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem"}
}

// apiActions are the API's table actions: the decider's (it decides starts
// and actions inline) plus ConditionCheckItem, for the transactions that
// check an item they do not write (a workflow deletion checks the run
// slots, a push checks that the id is not being deleted).
func apiActions() []string {
	return append(deciderActions(), "dynamodb:ConditionCheckItem")
}

// signalsActions are the table actions of the signals function, which runs
// Orchestrator.AnnounceSignal: GetItem (the request id's dedup record and
// the instance it names), UpdateItem (the name's sequence counter), PutItem
// (the instance and the dedup record, written by TransactWriteItems, which
// IAM authorizes per item) and Query (the latest instance, read when a
// dedup record names none).
func signalsActions() []string {
	return []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:Query"}
}

// TriggerSchedulePrefix starts the names of time-trigger schedules
// (triggers.SchedulePrefix); the worker's grant is confined to them.
const TriggerSchedulePrefix = "tt-"

// workerActions are the worker's table actions: the decider's, since it
// starts instances for time and signal triggers and decides them inline
// (and records step outcomes, announces signals, syncs subscriptions);
// BatchWriteItem also serves the purge rounds of deleted workflows.
func workerActions() []string {
	return deciderActions()
}

// streamActions are what Lambda's event source mapping needs to read the
// table's stream.
func streamActions() []string {
	return []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}
}

// queueConsumerActions are what Lambda's SQS event source mapping needs.
func queueConsumerActions() []string {
	return []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
}

func allow(actions []string, resources ...*string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &resources,
	})
}

// logRetention maps a number of days to CDK's enum; resolve checked it.
func logRetention(days int) awslogs.RetentionDays {
	names := map[int]awslogs.RetentionDays{
		1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
		7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
		60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
		150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
		400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS, 731: awslogs.RetentionDays_TWO_YEARS,
		1096: awslogs.RetentionDays_THREE_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
		2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS, 3288: awslogs.RetentionDays_NINE_YEARS,
		3653: awslogs.RetentionDays_TEN_YEARS,
	}
	return names[days]
}

// newFunction creates a handler's function: provided.al2023 on arm64 from
// <AssetDir>/<handler>/bootstrap, JSON logs into its own log group, active
// tracing, and a role that may only write to that log group (tracing adds
// the X-Ray statement).
func newFunction(scope constructs.Construct, s settings, handler, id, description string, env map[string]string) *Function {
	fs := s.functions[handler]
	name := s.name(handler)
	role := awsiam.NewRole(scope, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Execution role of " + name),
	})
	logs := awslogs.NewLogGroup(scope, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String("/aws/lambda/" + name),
		Retention:     logRetention(s.LogRetentionDays),
		RemovalPolicy: s.removal(),
	})
	role.AddToPrincipalPolicy(allow([]string{"logs:CreateLogStream", "logs:PutLogEvents"}, logs.LogGroupArn()))
	// Every handler prints its metrics as EMF lines, dimensioned by stage.
	environment := map[string]*string{wiring.EnvStage: jsii.String(s.Stage)}
	for k, v := range env {
		environment[k] = jsii.String(v)
	}
	props := &awslambda.FunctionProps{
		FunctionName:  jsii.String(name),
		Description:   jsii.String(description),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       jsii.String("bootstrap"),
		Code:          awslambda.Code_FromAsset(jsii.String(s.assetPath(handler)), nil),
		MemorySize:    jsii.Number(float64(fs.MemoryMB)),
		Timeout:       seconds(fs.Timeout),
		LoggingFormat: awslambda.LoggingFormat_JSON,
		LogGroup:      logs,
		Tracing:       awslambda.Tracing_ACTIVE,
		Role:          role,
		Environment:   &environment,
	}
	if fs.ReservedConcurrency > 0 {
		props.ReservedConcurrentExecutions = jsii.Number(float64(fs.ReservedConcurrency))
	}
	fn := awslambda.NewFunction(scope, jsii.String(id), props)
	return &Function{Handler: handler, Function: fn, Role: role, LogGroup: logs}
}

// newFunctions creates the five handlers, their permissions and event
// source mappings.
func newFunctions(scope constructs.Construct, s settings, st *Stack) (map[string]*Function, error) {
	tableName := s.spec.Table.Name
	q := st.Queues
	fns := map[string]*Function{}

	// The functions that commit decisions (api, decider, worker) send the
	// steps a commit starts to the work queue themselves (direct dispatch);
	// SendMessageBatch is authorized as sqs:SendMessage.
	dispatchEnv := map[string]string{wiring.EnvWorkQueueURL: *q.Work.QueueUrl()}
	dispatch := func(fn *Function) {
		fn.Role.AddToPrincipalPolicy(allow([]string{"sqs:SendMessage"}, q.Work.QueueArn()))
	}
	// Foreach steps with items_from read their items from the signals
	// bucket and the attached buckets, and from no other (the functions
	// refuse any other bucket too): the three functions that decide runs
	// (api, decider, worker) read them.
	itemsEnv := map[string]string{wiring.EnvItemsBuckets: strings.Join(append([]string{*st.Bucket.BucketName()}, s.AttachBuckets...), ",")}
	readItems := func(fn *Function) {
		objects := []*string{st.Bucket.ArnForObjects(jsii.String("*"))}
		for _, b := range s.AttachBuckets {
			objects = append(objects, jsii.String("arn:"+*awscdk.Aws_PARTITION()+":s3:::"+b+"/*"))
		}
		fn.Role.AddToPrincipalPolicy(allow([]string{"s3:GetObject"}, objects...))
	}
	apiEnv := merged(merged(map[string]string{wiring.EnvTable: tableName}, dispatchEnv), itemsEnv)
	if len(s.ECS.Images) > 0 {
		// The API refuses definitions whose literal images are off the list.
		apiEnv[wiring.EnvECSImages] = strings.Join(s.ECS.Images, ",")
	}
	accessEnv, err := s.Access.env(true)
	if err != nil {
		return nil, fmt.Errorf("infra: %w", err)
	}
	apiEnv = merged(apiEnv, accessEnv)
	api := newFunction(scope, s, HandlerAPI, "ApiFunction", "Maestro REST API (API Gateway proxy integration)", apiEnv)
	api.Role.AddToPrincipalPolicy(allow(apiActions(), st.Table.TableArn()))
	dispatch(api)
	readItems(api)
	fns[HandlerAPI] = api

	routerEnv := map[string]string{
		wiring.EnvTable:            tableName,
		wiring.EnvDecisionQueueURL: *q.Decision.QueueUrl(),
		wiring.EnvWorkQueueURL:     *q.Work.QueueUrl(),
		wiring.EnvWorkQueueARN:     *q.Work.QueueArn(),
		wiring.EnvScheduleGroup:    *st.SchedulerGroup.Ref(),
		wiring.EnvSchedulerRoleARN: *st.SchedulerRole.RoleArn(),
		wiring.EnvEventsTopicARN:   *st.EventsTopic.TopicArn(),
	}
	if s.MaestroChangeEvents {
		routerEnv[wiring.EnvMaestroEvents] = "true"
		routerEnv[wiring.EnvClusterName] = "maestro-" + s.Stage
	}
	router := newFunction(scope, s, HandlerRouter, "RouterFunction", "Maestro stream router: table stream to queues, EventBridge Scheduler and the events topic",
		routerEnv)
	streams := *st.Table.TableArn() + "/stream/*"
	router.Role.AddToPrincipalPolicy(allow(streamActions(), jsii.String(streams)))
	// Whether a directly dispatched step was taken, before sending its
	// backstop copy (orchestrator.BackstopsNeeded).
	router.Role.AddToPrincipalPolicy(allow([]string{"dynamodb:BatchGetItem"}, st.Table.TableArn()))
	// SendMessageBatch is authorized as sqs:SendMessage.
	router.Role.AddToPrincipalPolicy(allow([]string{"sqs:SendMessage"}, q.Decision.QueueArn(), q.Work.QueueArn()))
	scheduleARN := awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule"),
		ResourceName: jsii.String(s.spec.SchedulerGroup + "/*"),
	})
	router.Role.AddToPrincipalPolicy(allow([]string{"scheduler:CreateSchedule"}, scheduleARN))
	// A run's end deletes its workflow timeout's schedule, and only those.
	router.Role.AddToPrincipalPolicy(allow([]string{"scheduler:DeleteSchedule"}, awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule"),
		ResourceName: jsii.String(s.spec.SchedulerGroup + "/" + store.RunTimeoutSchedulePrefix + "*"),
	})))
	// PublishBatch is authorized as sns:Publish; the topic's AWS-managed key
	// lets every principal of the account that may publish use it.
	router.Role.AddToPrincipalPolicy(allow([]string{"sns:Publish"}, st.EventsTopic.TopicArn()))
	router.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("iam:PassRole"),
		Resources:  &[]*string{st.SchedulerRole.RoleArn()},
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}},
	}))
	filter, err := json.Marshal(s.spec.StreamFilterPattern())
	if err != nil {
		return nil, fmt.Errorf("infra: stream filter: %w", err)
	}
	router.Function.AddEventSourceMapping(jsii.String("TableStream"), &awslambda.EventSourceMappingOptions{
		EventSourceArn:          st.Table.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(100),
		BisectBatchOnError:      jsii.Bool(true),
		ReportBatchItemFailures: jsii.Bool(true),
		Filters:                 &[]*map[string]any{{"pattern": string(filter)}},
	})
	fns[HandlerRouter] = router

	decider := newFunction(scope, s, HandlerDecider, "DeciderFunction", "Maestro decider: FIFO decision queue to the engine",
		merged(merged(map[string]string{wiring.EnvTable: tableName}, dispatchEnv), itemsEnv))
	decider.Role.AddToPrincipalPolicy(allow(deciderActions(), st.Table.TableArn()))
	dispatch(decider)
	readItems(decider)
	decider.Role.AddToPrincipalPolicy(allow(queueConsumerActions(), q.Decision.QueueArn()))
	decider.Function.AddEventSourceMapping(jsii.String("DecisionQueue"), queueSource(s, HandlerDecider, q.Decision))
	fns[HandlerDecider] = decider

	worker := newFunction(scope, s, HandlerWorker, "WorkerFunction", "Maestro step worker: work queue to step runners and timers",
		workerEnv(tableName, *q.Work.QueueUrl(), s.Props, merged(map[string]string{
			wiring.EnvDecisionQueueURL: *q.Decision.QueueUrl(),
			wiring.EnvWorkQueueARN:     *q.Work.QueueArn(),
			wiring.EnvScheduleGroup:    *st.SchedulerGroup.Ref(),
			wiring.EnvSchedulerRoleARN: *st.SchedulerRole.RoleArn(),
		}, itemsEnv)))
	worker.Role.AddToPrincipalPolicy(allow(workerActions(), st.Table.TableArn()))
	// The recovery sweeper, which runs on the worker, queries the sweep
	// index.
	worker.Role.AddToPrincipalPolicy(allow([]string{"dynamodb:Query"}, jsii.String(*st.Table.TableArn()+"/index/"+resources.GSI1)))
	worker.Role.AddToPrincipalPolicy(allow(queueConsumerActions(), q.Work.QueueArn()))
	// The worker re-queues timers that are not due yet, and dispatches;
	// it wakes a run's decider for a step's end, and hands a run to it,
	// on the decision queue itself (orchestrator's wakeDecider, handOff).
	dispatch(worker)
	worker.Role.AddToPrincipalPolicy(allow([]string{"sqs:SendMessage"}, q.Decision.QueueArn()))
	readItems(worker)
	// The worker keeps the recurring schedules of time triggers, all named
	// with the "tt-" prefix in the stage's group. ListSchedules supports no
	// resource-level permission.
	triggerSchedules := awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule"),
		ResourceName: jsii.String(s.spec.SchedulerGroup + "/" + TriggerSchedulePrefix + "*"),
	})
	worker.Role.AddToPrincipalPolicy(allow([]string{"scheduler:GetSchedule", "scheduler:CreateSchedule",
		"scheduler:UpdateSchedule", "scheduler:DeleteSchedule"}, triggerSchedules))
	worker.Role.AddToPrincipalPolicy(allow([]string{"scheduler:ListSchedules"}, jsii.String("*")))
	worker.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("iam:PassRole"),
		Resources:  &[]*string{st.SchedulerRole.RoleArn()},
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}},
	}))
	// Lambda and Callback steps: the configured functions (any version or
	// alias), queues and topics, and nothing else; with teams, only the
	// configured functions some team's lambdas match.
	functions := s.LambdaFunctions
	if len(s.Access.Teams) > 0 {
		functions = s.Access.teamFunctions(functions)
	}
	if arns := lambdaARNs(awscdk.Stack_Of(scope), functions); len(arns) > 0 {
		worker.Role.AddToPrincipalPolicy(allow([]string{"lambda:InvokeFunction"}, arns...))
	}
	workerAccess, err := s.Access.env(false)
	if err != nil {
		return nil, fmt.Errorf("infra: %w", err)
	}
	for k, v := range workerAccess {
		worker.Function.AddEnvironment(jsii.String(k), jsii.String(v), nil)
	}
	if len(s.CallbackQueues) > 0 {
		worker.Role.AddToPrincipalPolicy(allow([]string{"sqs:SendMessage"}, *jsii.Strings(s.CallbackQueues...)...))
	}
	if len(s.CallbackTopics) > 0 {
		worker.Role.AddToPrincipalPolicy(allow([]string{"sns:Publish"}, *jsii.Strings(s.CallbackTopics...)...))
	}
	worker.Function.AddEventSourceMapping(jsii.String("WorkQueue"), queueSource(s, HandlerWorker, q.Work))
	fns[HandlerWorker] = worker
	st.Jobs = newJobs(scope, s, st, worker)

	env := map[string]string{wiring.EnvTable: tableName, wiring.EnvSignalDLQURL: *q.SignalIngestDLQ.QueueUrl()}
	if len(s.SignalRules) > 0 {
		rules, err := wiring.FormatSignalRules(s.SignalRules)
		if err != nil {
			return nil, fmt.Errorf("infra: %w", err)
		}
		env[wiring.EnvSignalRules] = rules
	}
	sigs := newFunction(scope, s, HandlerSignals, "SignalsFunction",
		"Maestro signal ingest: S3 object events and signals-topic messages to signals", env)
	sigs.Role.AddToPrincipalPolicy(allow(signalsActions(), st.Table.TableArn()))
	sigs.Role.AddToPrincipalPolicy(allow(queueConsumerActions(), q.SignalIngest.QueueArn()))
	// Malformed messages go to the dead-letter queue with their reason.
	sigs.Role.AddToPrincipalPolicy(allow([]string{"sqs:SendMessage"}, q.SignalIngestDLQ.QueueArn()))
	sigs.Function.AddEventSourceMapping(jsii.String("SignalIngestQueue"), queueSource(s, HandlerSignals, q.SignalIngest))
	fns[HandlerSignals] = sigs
	return fns, nil
}

// queueSource is the event source mapping of handler's SQS queue: batches
// of ten messages, each message's failure reported on its own, at most
// maxConcurrency invocations at once.
func queueSource(s settings, handler string, queue awssqs.Queue) *awslambda.EventSourceMappingOptions {
	return &awslambda.EventSourceMappingOptions{
		EventSourceArn:          queue.QueueArn(),
		BatchSize:               jsii.Number(10),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          maxConcurrency(s, handler),
	}
}

// maxConcurrency is the most concurrent invocations an SQS event source
// mapping of handler makes: its reserved concurrency (SQS allows 2 to 1000),
// so the poller never invokes into throttling, which would count against
// the messages' receive counts and send them to the dead-letter queue.
// Without a reservation it is left unset.
func maxConcurrency(s settings, handler string) *float64 {
	n := s.functions[handler].ReservedConcurrency
	if n <= 0 {
		return nil
	}
	return jsii.Number(float64(min(max(n, 2), 1000)))
}

// workerEnv is the worker's environment; an empty allow-list is left out
// (the worker then allows nothing of its kind).
func workerEnv(table, workQueueURL string, p Props, extra map[string]string) map[string]string {
	env := map[string]string{wiring.EnvTable: table, wiring.EnvWorkQueueURL: workQueueURL}
	maps.Copy(env, extra)
	if len(p.HTTPAllow) > 0 {
		env[wiring.EnvHTTPAllow] = strings.Join(p.HTTPAllow, ",")
	}
	if len(p.LambdaFunctions) > 0 {
		env[wiring.EnvLambdaFunctions] = strings.Join(p.LambdaFunctions, ",")
	}
	if len(p.CallbackQueues) > 0 {
		urls := make([]string, len(p.CallbackQueues))
		for i, q := range p.CallbackQueues {
			urls[i], _ = queueURLOf(q) // checked by NewStack
		}
		env[wiring.EnvCallbackQueues] = strings.Join(urls, ",")
	}
	if len(p.CallbackTopics) > 0 {
		env[wiring.EnvCallbackTopics] = strings.Join(p.CallbackTopics, ",")
	}
	return env
}

// merged returns a's entries and b's in a new map.
func merged(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}
