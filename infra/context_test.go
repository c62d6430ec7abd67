package infra

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/signals"
)

// getter serves a context map as TryGetContext does: nil for unset keys.
func getter(ctx map[string]any) func(string) any {
	return func(k string) any { return ctx[k] }
}

func TestPropsFromContext(t *testing.T) {
	tests := []struct {
		name string
		ctx  map[string]any
		want Props
	}{
		{"empty", nil, Props{}},
		{
			"cdk.json values",
			map[string]any{
				"stage": "prod", "assetDir": "out/lambda", "httpAllow": []any{"api.example.com", " *.example.org "},
				"attachBuckets": []any{"b-one"}, "bucketName": "my-signals", "retain": false, "logRetentionDays": 90.0,
				"alarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:ops", "apiGatewayAccountRole": false, "monitoring": true,
				"apiRateLimit": 12.5, "apiBurstLimit": 30.0, "workerMemoryMB": 1024.0, "deciderTimeoutSeconds": 20.0,
				"apiReservedConcurrency": 3.0,
				"lambdaFunctions":        []any{"etl"}, "callbackQueues": "arn:aws:sqs:us-east-1:1:q",
				"callbackTopics": []any{"arn:aws:sns:us-east-1:1:t"},
				"ecsCluster":     "arn:aws:ecs:us-east-1:1:cluster/c", "ecsSubnets": "subnet-1,subnet-2", "ecsSecurityGroups": []any{"sg-1"},
				"ecsAssignPublicIp": true, "ecsTaskRoleArn": "arn:aws:iam::1:role/r", "ecsTaskDefinitions": []any{"spark"},
				"ecsImages":      []any{"1.dkr.ecr.us-east-1.amazonaws.com/etl/", "docker.io/library/busybox"},
				"batchJobQueues": []any{"arn:aws:batch:us-east-1:1:job-queue/q"}, "batchJobDefinitions": "etl",
				"batchGpuJobQueue":    "arn:aws:batch:us-east-1:1:job-queue/gpu",
				"signalRules":         []any{map[string]any{"bucket": "lake", "prefix": "events/", "name": "lake/events"}},
				"maestroChangeEvents": true,
			},
			Props{
				Stage: "prod", AssetDir: "out/lambda", HTTPAllow: []string{"api.example.com", "*.example.org"},
				AttachBuckets: []string{"b-one"}, BucketName: "my-signals", Retain: ptr(false), LogRetentionDays: 90,
				SignalRules:   []signals.Rule{{Bucket: "lake", Prefix: "events/", Name: "lake/events"}},
				AlarmTopicARN: "arn:aws:sns:eu-west-1:123456789012:ops", APIGatewayAccountRole: ptr(false), Monitoring: ptr(true),
				API:             APISettings{RateLimit: 12.5, BurstLimit: 30},
				LambdaFunctions: []string{"etl"}, CallbackQueues: []string{"arn:aws:sqs:us-east-1:1:q"},
				CallbackTopics: []string{"arn:aws:sns:us-east-1:1:t"},
				ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"subnet-1", "subnet-2"}, SecurityGroups: []string{"sg-1"},
					AssignPublicIP: true, TaskRoleARN: "arn:aws:iam::1:role/r", TaskDefinitions: []string{"spark"},
					Images: []string{"1.dkr.ecr.us-east-1.amazonaws.com/etl/", "docker.io/library/busybox"}},
				BatchJobQueues: []string{"arn:aws:batch:us-east-1:1:job-queue/q"}, BatchJobDefinitions: []string{"etl"},
				MaestroChangeEvents: true,
				BatchGPUJobQueue:    "arn:aws:batch:us-east-1:1:job-queue/gpu",
				Functions: map[string]FunctionSettings{
					HandlerWorker:  {MemoryMB: 1024},
					HandlerDecider: {Timeout: 20 * time.Second},
					HandlerAPI:     {ReservedConcurrency: 3},
				},
			},
		},
		{
			"-c strings",
			map[string]any{
				"stage": "qa", "httpAllow": "a.example.com, b.example.com,", "attachBuckets": "one,two",
				"ecsImages": "public.ecr.aws/docker/library/python, docker.io/bitnami/",
				"retain":    "true", "monitoring": "FALSE", "logRetentionDays": "14", "routerMemoryMB": "512",
				"signalRules": `[{"suffix":".csv","name":"csv-drops"}]`, "signalsTimeoutSeconds": "20",
			},
			Props{
				Stage: "qa", HTTPAllow: []string{"a.example.com", "b.example.com"}, AttachBuckets: []string{"one", "two"},
				ECS:    ECSSettings{Images: []string{"public.ecr.aws/docker/library/python", "docker.io/bitnami/"}},
				Retain: ptr(true), Monitoring: ptr(false), LogRetentionDays: 14,
				SignalRules: []signals.Rule{{Suffix: ".csv", Name: "csv-drops"}},
				Functions:   map[string]FunctionSettings{HandlerRouter: {MemoryMB: 512}, HandlerSignals: {Timeout: 20 * time.Second}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PropsFromContext(getter(tt.ctx))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PropsFromContext\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPropsFromContextRejects(t *testing.T) {
	tests := []struct {
		name string
		ctx  map[string]any
		want []string
	}{
		{"types", map[string]any{"stage": 3.0, "retain": "yes", "apiRateLimit": true, "httpAllow": 5.0},
			[]string{"context stage: want a string", "context retain", "context apiRateLimit", "context httpAllow"}},
		{"list items", map[string]any{"attachBuckets": []any{"a", 1.0}}, []string{"context attachBuckets: want strings"}},
		{"whole numbers", map[string]any{"workerMemoryMB": 128.5, "logRetentionDays": "7.5"}, []string{"workerMemoryMB: 128.5 is not a whole number", "logRetentionDays"}},
		{"not a number", map[string]any{"apiBurstLimit": "many"}, []string{`context apiBurstLimit: want a number, got "many"`}},
		{"signal rules text", map[string]any{"signalRules": `[{"bucket":`}, []string{"context signalRules: signal rules: want a JSON array"}},
		{"signal rules field", map[string]any{"signalRules": []any{map[string]any{"bukket": "x"}}}, []string{`context signalRules: signal rules: want a JSON array of {bucket, prefix, suffix, name}: json: unknown field "bukket"`}},
		{"signal rules type", map[string]any{"signalRules": 3.0}, []string{"context signalRules: want a JSON array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PropsFromContext(getter(tt.ctx))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
