package infra

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/resources"
)

func TestResourceCounts(t *testing.T) {
	full, dev := synth(t)
	tests := []struct {
		typ       string
		full, dev float64
	}{
		{"AWS::DynamoDB::Table", 1, 1},
		{"AWS::SQS::Queue", 6, 6},
		{"AWS::SNS::Topic", 2, 2},
		{"AWS::SNS::Subscription", 1, 1},
		{"AWS::S3::Bucket", 1, 1},
		{"AWS::Scheduler::ScheduleGroup", 1, 1},
		{"AWS::Lambda::Function", 6, 5}, // full: + CDK's bucket-notifications handler
		{"AWS::Lambda::EventSourceMapping", 4, 4},
		{"AWS::ApiGateway::RestApi", 1, 1},
		{"AWS::ApiGateway::Account", 1, 0},
		{"Custom::S3BucketNotifications", 1, 0},
		{"AWS::CloudWatch::Alarm", 15, 0},
		{"AWS::CloudWatch::Dashboard", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			check(t, "full", func() { full.template.ResourceCountIs(jsii.String(tt.typ), jsii.Number(tt.full)) })
			check(t, "dev", func() { dev.template.ResourceCountIs(jsii.String(tt.typ), jsii.Number(tt.dev)) })
		})
	}
}

func TestTable(t *testing.T) {
	full, dev := synth(t)
	for _, tt := range []struct {
		s      *synthesized
		retain bool
	}{{full, true}, {dev, false}} {
		t.Run(tt.s.stack.Spec.Stage, func(t *testing.T) {
			check(t, "table", func() {
				tt.s.template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
					"TableName":                        tt.s.stack.Spec.Table.Name,
					"BillingMode":                      "PAY_PER_REQUEST",
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"DeletionProtectionEnabled":        tt.retain,
					"StreamSpecification":              map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"},
					"TimeToLiveSpecification":          map[string]any{"AttributeName": resources.AttrTTL, "Enabled": true},
				})
			})
			policy := "Delete"
			if tt.retain {
				policy = "Retain"
			}
			for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::S3::Bucket", "AWS::Logs::LogGroup"} {
				for id, r := range tt.s.resourcesOf(typ) {
					if r["DeletionPolicy"] != policy || r["UpdateReplacePolicy"] != policy {
						t.Errorf("%s %s: DeletionPolicy %v, UpdateReplacePolicy %v; want %s", typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"], policy)
					}
				}
			}
		})
	}
}

func TestQueuesEncryptedAndTLSOnly(t *testing.T) {
	full, _ := synth(t)
	check(t, "SSE on every queue", func() {
		full.template.AllResourcesProperties(jsii.String("AWS::SQS::Queue"), map[string]any{"SqsManagedSseEnabled": true})
	})
	queues := full.resourcesOf("AWS::SQS::Queue")
	tlsOnly := map[string]bool{}
	for _, p := range full.resourcesOf("AWS::SQS::QueuePolicy") {
		doc := render(props(p)["PolicyDocument"].(map[string]any)["Statement"])
		if strings.Contains(doc, "aws:SecureTransport:false") && strings.Contains(doc, "Effect:Deny") {
			for _, q := range strs(props(p)["Queues"]) {
				tlsOnly[strings.Trim(q, "${}")] = true
			}
		}
	}
	for id := range queues {
		if !tlsOnly[id] {
			t.Errorf("queue %s has no policy denying requests without TLS", id)
		}
	}
}

func TestFunctions(t *testing.T) {
	full, dev := synth(t)
	st := full.stack
	queueURL := func(s *synthesized, name string) string {
		for id, r := range s.resourcesOf("AWS::SQS::Queue") {
			if props(r)["QueueName"] == name {
				return "${" + id + "}"
			}
		}
		t.Fatalf("no queue %s", name)
		return ""
	}
	queueARN := func(s *synthesized, name string) string {
		return "${" + strings.Trim(queueURL(s, name), "${}") + ".Arn}"
	}
	// The deciding functions read foreach items from the signals bucket
	// and the attached ones (items_from).
	fullItems := "${" + full.logicalID(t, st.Bucket) + "}," + strings.Join(testAttached, ",")
	devItems := "${" + dev.logicalID(t, dev.stack.Bucket) + "}"
	for _, tt := range []struct {
		s           *synthesized
		handler     string
		memory      float64
		timeout     float64
		concurrency any
		env         map[string]string
	}{
		{full, HandlerAPI, 512, 29, 50.0, map[string]string{wiring.EnvTable: st.Spec.Table.Name,
			wiring.EnvWorkQueueURL: queueURL(full, st.Spec.Queues.Work.Name), wiring.EnvECSImages: strings.Join(testECS.Images, ","),
			wiring.EnvItemsBuckets: fullItems}},
		{full, HandlerRouter, 256, 60, 10.0, map[string]string{
			wiring.EnvTable:            st.Spec.Table.Name,
			wiring.EnvDecisionQueueURL: queueURL(full, st.Spec.Queues.Decision.Name),
			wiring.EnvWorkQueueURL:     queueURL(full, st.Spec.Queues.Work.Name),
			wiring.EnvWorkQueueARN:     queueARN(full, st.Spec.Queues.Work.Name),
			wiring.EnvScheduleGroup:    "${" + full.logicalID(t, st.SchedulerGroup) + "}",
			wiring.EnvEventsTopicARN:   "${" + full.logicalID(t, st.EventsTopic) + "}",
			wiring.EnvSchedulerRoleARN: "${" + full.logicalID(t, st.SchedulerRole) + ".Arn}",
			wiring.EnvMaestroEvents:    "true",
			wiring.EnvClusterName:      "maestro-" + st.Spec.Stage,
		}},
		{full, HandlerDecider, 512, 30, 50.0, map[string]string{wiring.EnvTable: st.Spec.Table.Name,
			wiring.EnvWorkQueueURL: queueURL(full, st.Spec.Queues.Work.Name), wiring.EnvItemsBuckets: fullItems}},
		{full, HandlerWorker, 1024, 60, 20.0, map[string]string{
			wiring.EnvTable:               st.Spec.Table.Name,
			wiring.EnvWorkQueueURL:        queueURL(full, st.Spec.Queues.Work.Name),
			wiring.EnvDecisionQueueURL:    queueURL(full, st.Spec.Queues.Decision.Name),
			wiring.EnvHTTPAllow:           "api.example.com,*.example.org",
			wiring.EnvLambdaFunctions:     "etl-loader,arn:aws:lambda:us-east-1:123456789012:function:train",
			wiring.EnvCallbackQueues:      "https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
			wiring.EnvCallbackTopics:      "arn:aws:sns:us-east-1:123456789012:jobs",
			wiring.EnvECSCluster:          "arn:aws:ecs:us-east-1:123456789012:cluster/data",
			wiring.EnvECSSubnets:          "subnet-0a1,subnet-0b2",
			wiring.EnvECSSecurityGroups:   "sg-0c3",
			wiring.EnvECSAssignPublicIP:   "false",
			wiring.EnvECSExecutionRoleARN: "${" + full.logicalID(t, st.Jobs.ExecutionRole) + ".Arn}",
			wiring.EnvECSTaskRoleARN:      "arn:aws:iam::123456789012:role/etl-task",
			wiring.EnvNotebookBucket:      "${" + full.logicalID(t, st.Bucket) + "}",
			wiring.EnvNotebookPrefix:      "maestro-notebooks/",
			wiring.EnvNotebookTaskRoleARN: "${" + full.logicalID(t, st.Jobs.NotebookRole) + ".Arn}",
			wiring.EnvECSLogGroup:         "${" + full.logicalID(t, st.Jobs.ECSLogs) + "}",
			wiring.EnvECSFamily:           "maestro-infratest-task",
			wiring.EnvECSTaskDefinitions:  "spark-submit",
			wiring.EnvECSImages:           strings.Join(testECS.Images, ","),
			wiring.EnvBatchJobQueues:      "arn:aws:batch:us-east-1:123456789012:job-queue/etl",
			wiring.EnvBatchJobDefinitions: "etl-job",
			wiring.EnvBatchGPUJobQueue:    testGPUQueue,
			wiring.EnvWorkQueueARN:        queueARN(full, st.Spec.Queues.Work.Name),
			wiring.EnvScheduleGroup:       "${" + full.logicalID(t, st.SchedulerGroup) + "}",
			wiring.EnvSchedulerRoleARN:    "${" + full.logicalID(t, st.SchedulerRole) + ".Arn}",
			wiring.EnvItemsBuckets:        fullItems,
		}},
		{full, HandlerSignals, 256, 30, 20.0, map[string]string{
			wiring.EnvTable:        st.Spec.Table.Name,
			wiring.EnvSignalDLQURL: queueURL(full, st.Spec.Queues.SignalIngestDLQ.Name),
			wiring.EnvSignalRules:  `[{"bucket":"existing-signals-bucket","prefix":"exports/","name":"warehouse/exports"}]`,
		}},
		{dev, HandlerSignals, 256, 30, 20.0, map[string]string{
			wiring.EnvTable:        dev.stack.Spec.Table.Name,
			wiring.EnvSignalDLQURL: queueURL(dev, dev.stack.Spec.Queues.SignalIngestDLQ.Name),
		}},
		{dev, HandlerWorker, 256, 60, 100.0, map[string]string{
			wiring.EnvTable:            dev.stack.Spec.Table.Name,
			wiring.EnvWorkQueueURL:     queueURL(dev, dev.stack.Spec.Queues.Work.Name),
			wiring.EnvDecisionQueueURL: queueURL(dev, dev.stack.Spec.Queues.Decision.Name),
			wiring.EnvWorkQueueARN:     queueARN(dev, dev.stack.Spec.Queues.Work.Name),
			wiring.EnvScheduleGroup:    "${" + dev.logicalID(t, dev.stack.SchedulerGroup) + "}",
			wiring.EnvSchedulerRoleARN: "${" + dev.logicalID(t, dev.stack.SchedulerRole) + ".Arn}",
			wiring.EnvItemsBuckets:     devItems,
		}},
	} {
		t.Run(tt.s.stack.Spec.Stage+"/"+tt.handler, func(t *testing.T) {
			fn := tt.s.stack.Functions[tt.handler]
			r := tt.s.resourcesOf("AWS::Lambda::Function")[tt.s.logicalID(t, fn.Function)]
			p := props(r)
			want := map[string]any{
				"FunctionName":  resources.Prefix + "-" + tt.s.stack.Spec.Stage + "-" + tt.handler,
				"Runtime":       "provided.al2023",
				"Architectures": "arm64",
				"Handler":       "bootstrap",
				"MemorySize":    fmt.Sprint(tt.memory),
				"Timeout":       fmt.Sprint(tt.timeout),
				"TracingConfig": "map[Mode:Active]",
			}
			got := map[string]any{
				"FunctionName":  render(p["FunctionName"]),
				"Runtime":       render(p["Runtime"]),
				"Architectures": render(p["Architectures"]),
				"Handler":       render(p["Handler"]),
				"MemorySize":    render(p["MemorySize"]),
				"Timeout":       render(p["Timeout"]),
				"TracingConfig": render(p["TracingConfig"]),
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("function properties\n got %v\nwant %v", got, want)
			}
			lc := p["LoggingConfig"].(map[string]any)
			if lc["LogFormat"] != "JSON" || render(lc["LogGroup"]) != "${"+tt.s.logicalID(t, fn.LogGroup)+"}" {
				t.Errorf("logging config %v: want JSON into the function's log group", lc)
			}
			if got := p["ReservedConcurrentExecutions"]; !reflect.DeepEqual(got, tt.concurrency) {
				t.Errorf("reserved concurrency %v, want %v", got, tt.concurrency)
			}
			env := map[string]string{}
			vars, _ := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			for k, v := range vars {
				env[k] = render(v)
			}
			// Every function dimensions its metrics by stage.
			tt.env[wiring.EnvStage] = tt.s.stack.Spec.Stage
			if !reflect.DeepEqual(env, tt.env) {
				t.Errorf("environment\n got %v\nwant %v", env, tt.env)
			}
			lg := props(tt.s.resourcesOf("AWS::Logs::LogGroup")[tt.s.logicalID(t, fn.LogGroup)])
			wantDays := 30.0
			if tt.s == full {
				wantDays = 90
			}
			if lg["LogGroupName"] != "/aws/lambda/"+render(p["FunctionName"]) || lg["RetentionInDays"] != wantDays {
				t.Errorf("log group %v: want /aws/lambda/<function> kept %v days", lg, wantDays)
			}
		})
	}
}

func TestEventSourceMappings(t *testing.T) {
	full, _ := synth(t)
	st := full.stack
	byFunction := map[string]map[string]any{}
	for _, r := range full.resourcesOf("AWS::Lambda::EventSourceMapping") {
		byFunction[render(props(r)["FunctionName"])] = props(r)
	}
	fn := func(h string) map[string]any {
		p := byFunction["${"+full.logicalID(t, st.Functions[h].Function)+"}"]
		if p == nil {
			t.Fatalf("no event source mapping for %s", h)
		}
		return p
	}
	t.Run("router", func(t *testing.T) {
		p := fn(HandlerRouter)
		if got, want := render(p["EventSourceArn"]), "${"+full.logicalID(t, st.Table)+".StreamArn}"; got != want {
			t.Errorf("source %s, want %s", got, want)
		}
		if p["BisectBatchOnFunctionError"] != true || render(p["FunctionResponseTypes"]) != "ReportBatchItemFailures" ||
			p["StartingPosition"] != "TRIM_HORIZON" || p["BatchSize"] != 100.0 {
			t.Errorf("stream mapping %v: want bisect, partial batch responses, TRIM_HORIZON, 100 records", p)
		}
		filters := p["FilterCriteria"].(map[string]any)["Filters"].([]any)
		if len(filters) != 1 {
			t.Fatalf("filters %v, want one", filters)
		}
		var got any
		if err := json.Unmarshal([]byte(filters[0].(map[string]any)["Pattern"].(string)), &got); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(st.Spec.StreamFilterPattern())
		var want any
		if err := json.Unmarshal(wantJSON, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("filter %v, want %v", got, want)
		}
	})
	// Each queue consumer invokes at most its reserved concurrency at once,
	// so its poller never invokes into throttling.
	for _, tt := range []struct {
		handler, queue string
		max            float64
	}{
		{HandlerDecider, st.Spec.Queues.Decision.Name, 50}, {HandlerWorker, st.Spec.Queues.Work.Name, 20},
		{HandlerSignals, st.Spec.Queues.SignalIngest.Name, 20},
	} {
		t.Run(tt.handler, func(t *testing.T) {
			p := fn(tt.handler)
			var queueID string
			for id, r := range full.resourcesOf("AWS::SQS::Queue") {
				if props(r)["QueueName"] == tt.queue {
					queueID = id
				}
			}
			if render(p["EventSourceArn"]) != "${"+queueID+".Arn}" || render(p["FunctionResponseTypes"]) != "ReportBatchItemFailures" {
				t.Errorf("mapping %v: want %s with ReportBatchItemFailures", p, tt.queue)
			}
			scaling, _ := p["ScalingConfig"].(map[string]any)
			if scaling["MaximumConcurrency"] != tt.max {
				t.Errorf("scaling config %v: want MaximumConcurrency %v", scaling, tt.max)
			}
		})
	}
}

func TestTopicsBucketAndScheduler(t *testing.T) {
	full, _ := synth(t)
	spec := full.stack.Spec
	topics := map[string]string{}
	for _, r := range full.resourcesOf("AWS::SNS::Topic") {
		topics[render(props(r)["TopicName"])] = render(props(r)["KmsMasterKeyId"])
	}
	const managedKey = "arn:${AWS::Partition}:kms:${AWS::Region}:${AWS::AccountId}:alias/aws/sns"
	if want := map[string]string{spec.Topics.Events.Name: managedKey, spec.Topics.Signals.Name: managedKey}; !reflect.DeepEqual(topics, want) {
		t.Errorf("topics (name: key) %v, want %v", topics, want)
	}
	ingest := ""
	for id, r := range full.resourcesOf("AWS::SQS::Queue") {
		if props(r)["QueueName"] == spec.Queues.SignalIngest.Name {
			ingest = "${" + id + ".Arn}"
		}
	}
	for _, r := range full.resourcesOf("AWS::SNS::Subscription") {
		p := props(r)
		if p["Protocol"] != "sqs" || render(p["Endpoint"]) != ingest || p["RawMessageDelivery"] != true ||
			render(p["TopicArn"]) != "${"+full.logicalID(t, full.stack.SignalsTopic)+"}" {
			t.Errorf("subscription %v: want the signals topic to the ingest queue, raw", p)
		}
	}
	bucket := props(full.resourcesOf("AWS::S3::Bucket")[full.logicalID(t, full.stack.Bucket)])
	if got, want := render(bucket["BucketName"]), spec.Bucket.Name+"-${AWS::AccountId}"; got != want {
		t.Errorf("bucket name %s, want %s", got, want)
	}
	if got := render(bucket["PublicAccessBlockConfiguration"]); strings.Contains(got, "false") {
		t.Errorf("public access block %s", got)
	}
	var events []string
	for _, c := range bucket["NotificationConfiguration"].(map[string]any)["QueueConfigurations"].([]any) {
		qc := c.(map[string]any)
		if render(qc["Queue"]) != ingest {
			t.Errorf("bucket notifies %s, want the ingest queue", render(qc["Queue"]))
		}
		events = append(events, qc["Event"].(string))
	}
	if !slices.Equal(events, spec.Bucket.NotifyEvents) {
		t.Errorf("bucket events %v, want %v", events, spec.Bucket.NotifyEvents)
	}
	for _, r := range full.resourcesOf("Custom::S3BucketNotifications") {
		p := props(r)
		if render(p["BucketName"]) != testAttached[0] || p["Managed"] != false {
			t.Errorf("attached bucket notifications %v: want %s, merged (Managed false)", p, testAttached[0])
		}
		var attached []string
		for _, c := range p["NotificationConfiguration"].(map[string]any)["QueueConfigurations"].([]any) {
			qc := c.(map[string]any)
			if render(qc["QueueArn"]) != ingest {
				t.Errorf("attached bucket notifies %s, want the ingest queue", render(qc["QueueArn"]))
			}
			attached = append(attached, strs(qc["Events"])...)
		}
		if !slices.Equal(attached, spec.Bucket.NotifyEvents) {
			t.Errorf("attached bucket events %v, want %v", attached, spec.Bucket.NotifyEvents)
		}
	}
	check(t, "scheduler group", func() {
		full.template.HasResourceProperties(jsii.String("AWS::Scheduler::ScheduleGroup"), map[string]any{"Name": spec.SchedulerGroup})
	})
}

func TestAPIMethodsRequireIAM(t *testing.T) {
	full, dev := synth(t)
	for _, s := range []*synthesized{full, dev} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			methods := s.resourcesOf("AWS::ApiGateway::Method")
			if len(methods) < 2 {
				t.Fatalf("%d methods, want the root and the proxy resource", len(methods))
			}
			for id, m := range methods {
				if got := props(m)["AuthorizationType"]; got != "AWS_IAM" {
					t.Errorf("method %s (%v) has authorization %v, want AWS_IAM", id, props(m)["HttpMethod"], got)
				}
			}
			check(t, "no unauthenticated method", func() {
				s.template.ResourcePropertiesCountIs(jsii.String("AWS::ApiGateway::Method"),
					map[string]any{"AuthorizationType": assertions.Match_AnyValue()}, jsii.Number(float64(len(methods))))
			})
		})
	}
	// API Gateway may invoke the function only through the deployed stage:
	// no test-invoke permission, whose calls skip the stage's throttling.
	for _, s := range []*synthesized{full, dev} {
		perms := 0
		for id, r := range s.resourcesOf("AWS::Lambda::Permission") {
			src := render(props(r)["SourceArn"])
			if !strings.Contains(src, "execute-api") {
				continue
			}
			perms++
			if strings.Contains(src, "test-invoke-stage") {
				t.Errorf("%s: permission %s lets the console test-invoke the API function (%s)", s.stack.Spec.Stage, id, src)
			}
		}
		if perms == 0 {
			t.Errorf("%s: no API Gateway invoke permission", s.stack.Spec.Stage)
		}
	}
	check(t, "stage", func() {
		full.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"StageName":      fullStage,
			"TracingEnabled": true,
			"AccessLogSetting": map[string]any{
				"DestinationArn": map[string]any{"Fn::GetAtt": []any{full.logicalID(t, full.stack.API.AccessLogs), "Arn"}},
			},
			"MethodSettings": []any{map[string]any{
				"HttpMethod": "*", "ResourcePath": "/*", "LoggingLevel": "ERROR", "DataTraceEnabled": false,
				"ThrottlingRateLimit": 10, "ThrottlingBurstLimit": 20,
			}},
		})
	})
	check(t, "dev stage default throttling", func() {
		dev.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"MethodSettings": []any{assertions.Match_ObjectLike(&map[string]any{"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100})},
		})
	})
}

func TestAlarms(t *testing.T) {
	full, _ := synth(t)
	st := full.stack
	alarms := map[string]map[string]any{}
	for _, r := range full.resourcesOf("AWS::CloudWatch::Alarm") {
		p := props(r)
		alarms[p["AlarmName"].(string)] = p
	}
	name := func(suffix string) string { return "maestro-" + fullStage + "-" + suffix }
	dim := func(p map[string]any) string { return render(p["Dimensions"]) }
	tests := []struct {
		alarm, metric, dimension string
	}{
		{name("dlq-not-empty-decision-dlq"), "ApproximateNumberOfMessagesVisible", st.Spec.Queues.DecisionDLQ.Name},
		{name("dlq-not-empty-work-dlq"), "ApproximateNumberOfMessagesVisible", st.Spec.Queues.WorkDLQ.Name},
		{name("dlq-not-empty-signal-ingest-dlq"), "ApproximateNumberOfMessagesVisible", st.Spec.Queues.SignalIngestDLQ.Name},
		{name("stream-iterator-age"), "IteratorAge", full.logicalID(t, st.Functions[HandlerRouter].Function)},
		{name("oldest-message-decision"), "ApproximateAgeOfOldestMessage", st.Spec.Queues.Decision.Name},
		{name("oldest-message-work"), "ApproximateAgeOfOldestMessage", st.Spec.Queues.Work.Name},
		{name("oldest-message-signal-ingest"), "ApproximateAgeOfOldestMessage", st.Spec.Queues.SignalIngest.Name},
		{name("errors-api"), "Errors", full.logicalID(t, st.Functions[HandlerAPI].Function)},
		{name("errors-router"), "Errors", full.logicalID(t, st.Functions[HandlerRouter].Function)},
		{name("errors-decider"), "Errors", full.logicalID(t, st.Functions[HandlerDecider].Function)},
		{name("errors-worker"), "Errors", full.logicalID(t, st.Functions[HandlerWorker].Function)},
		{name("errors-signals"), "Errors", full.logicalID(t, st.Functions[HandlerSignals].Function)},
		{name("api-5xx"), "5XXError", *st.API.RestAPI.RestApiName()},
		// The handlers' EMF metrics: namespace Maestro, dimension Stage.
		{name("step-launch-delay"), "StepLaunchDelay", fullStage},
		{name("failed-runs"), "RunsFinished", "FAILED"},
	}
	if len(alarms) != len(tests) {
		names := make([]string, 0, len(alarms))
		for n := range alarms {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("alarms %v, want %d", names, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.alarm, func(t *testing.T) {
			p, ok := alarms[tt.alarm]
			if !ok {
				t.Fatalf("no alarm %s", tt.alarm)
			}
			if p["MetricName"] != tt.metric {
				t.Errorf("metric %v, want %s", p["MetricName"], tt.metric)
			}
			queueDim := strings.Contains(tt.metric, "Approximate")
			if d := dim(p); queueDim && !strings.Contains(d, "QueueName") || !queueDim && !strings.Contains(d, tt.dimension) {
				t.Errorf("dimensions %s, want %s", d, tt.dimension)
			}
			if render(p["AlarmActions"]) != testAlarmTopic || render(p["OKActions"]) != testAlarmTopic {
				t.Errorf("actions %v / %v, want %s", p["AlarmActions"], p["OKActions"], testAlarmTopic)
			}
			if p["TreatMissingData"] != "notBreaching" {
				t.Errorf("missing data %v, want notBreaching", p["TreatMissingData"])
			}
		})
	}
	check(t, "dashboard", func() {
		full.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Dashboard"), map[string]any{
			"DashboardName": name("overview"),
		})
	})
	// The dashboard graphs the handlers' EMF metrics.
	for _, d := range full.resourcesOf("AWS::CloudWatch::Dashboard") {
		body := render(props(d)["DashboardBody"])
		for _, m := range []string{"StepLaunchDelay", "DecisionLatency", "QueueLag", "StepsFinished", "RunsFinished"} {
			if !strings.Contains(body, `"Maestro","`+m+`"`) {
				t.Errorf("the dashboard has no widget of metric %s: %.300s", m, body)
			}
		}
	}
}

func TestOutputs(t *testing.T) {
	full, _ := synth(t)
	outs := full.json["Outputs"].(map[string]any)
	for _, id := range []string{
		"ApiUrl", "TableName", "EventsTopicArn", "SignalsTopicArn", "SignalsBucketName", "SchedulerGroupName",
		"DecisionQueueName", "DecisionDLQName", "WorkQueueName", "WorkDLQName", "SignalIngestQueueName", "SignalIngestDLQName",
	} {
		if _, ok := outs[id]; !ok {
			t.Errorf("no output %s", id)
		}
	}
	stage := "/${" + full.logicalID(t, full.stack.API.RestAPI.DeploymentStage()) + "}/"
	if got := render(outs["ApiUrl"].(map[string]any)["Value"]); !strings.Contains(got, ".execute-api.") || !strings.HasSuffix(got, stage) {
		t.Errorf("ApiUrl %s", got)
	}
}

func TestNagAwsSolutions(t *testing.T) {
	full, dev := synth(t)
	documented := map[string]bool{ // rule ids NewStack suppresses, each with its reason in nag.go
		"AwsSolutions-IAM5": true, "AwsSolutions-IAM4": true, "AwsSolutions-APIG2": true,
		"AwsSolutions-APIG3": true, "AwsSolutions-COG4": true, "AwsSolutions-S1": true,
	}
	for _, s := range []*synthesized{full, dev} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			for _, m := range s.nagErrors {
				t.Errorf("cdk-nag error at %s: %v", *m.Id, m.Entry.Data)
			}
			for _, m := range s.nagWarnings {
				t.Errorf("cdk-nag warning at %s: %v", *m.Id, m.Entry.Data)
			}
			suppressions := 0
			for id, r := range s.json["Resources"].(map[string]any) {
				meta, _ := r.(map[string]any)["Metadata"].(map[string]any)
				nag, _ := meta["cdk_nag"].(map[string]any)
				rules, _ := nag["rules_to_suppress"].([]any)
				for _, raw := range rules {
					rule := raw.(map[string]any)
					suppressions++
					if !documented[rule["id"].(string)] {
						t.Errorf("%s: undocumented suppression %v", id, rule["id"])
					}
					if reason, _ := rule["reason"].(string); len(strings.Fields(reason)) < 12 {
						t.Errorf("%s: suppression %v has no real reason: %q", id, rule["id"], reason)
					}
				}
			}
			if suppressions == 0 {
				t.Error("no suppressions found: the metadata walk is broken")
			}
		})
	}
}

// TestJobRulesRouteStateChangesToTheWorkQueue: the two EventBridge rules
// select the stack's ECS tasks and Batch queues' ends and send each event to
// the work queue wrapped as a job_event message, which the queue's policy
// lets EventBridge send from these rules only.
func TestJobRulesRouteStateChangesToTheWorkQueue(t *testing.T) {
	full, dev := synth(t)
	if n := len(dev.resourcesOf("AWS::Events::Rule")); n != 0 {
		t.Fatalf("the dev stack, without ECS or Batch settings, has %d rules", n)
	}
	st := full.stack
	work := full.logicalID(t, st.Queues.Work)
	rules := full.resourcesOf("AWS::Events::Rule")
	want := map[string]string{
		full.logicalID(t, st.Jobs.ECSRule): `{"detail":{"clusterArn":["arn:aws:ecs:us-east-1:123456789012:cluster/data"],"lastStatus":["STOPPED"],` +
			`"startedBy":["maestro-infratest-task"]},"detail-type":["ECS Task State Change"],"source":["aws.ecs"]}`,
		full.logicalID(t, st.Jobs.BatchRule): `{"detail":{"jobQueue":["arn:aws:batch:us-east-1:123456789012:job-queue/etl","arn:aws:batch:us-east-1:123456789012:job-queue/gpu"],"status":["SUCCEEDED","FAILED"]},` +
			`"detail-type":["Batch Job State Change"],"source":["aws.batch"]}`,
	}
	if len(rules) != len(want) {
		t.Fatalf("%d rules, want %d", len(rules), len(want))
	}
	for id, pattern := range want {
		p := props(rules[id])
		if got, _ := json.Marshal(p["EventPattern"]); string(got) != pattern {
			t.Errorf("rule %s pattern\n got %s\nwant %s", id, got, pattern)
		}
		targets := p["Targets"].([]any)
		if len(targets) != 1 {
			t.Fatalf("rule %s has %d targets", id, len(targets))
		}
		target := targets[0].(map[string]any)
		if got := render(target["Arn"]); got != "${"+work+".Arn}" {
			t.Errorf("rule %s targets %s, want the work queue", id, got)
		}
		tr, _ := json.Marshal(target["InputTransformer"])
		if string(tr) != `{"InputPathsMap":{"f1":"$"},"InputTemplate":"{\"job_event\":\u003cf1\u003e,\"kind\":\"job_event\"}"}` {
			t.Errorf("rule %s input %s: want the whole event as a job_event message", id, tr)
		}
	}
	policies := render(full.resourcesOf("AWS::SQS::QueuePolicy"))
	if !strings.Contains(policies, "events.amazonaws.com") {
		t.Errorf("no queue policy lets EventBridge send to the work queue: %s", policies)
	}
}
