package infra

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/signals"
)

// CDK context keys PropsFromContext reads. Values come from cdk.json's
// "context" or from `cdk -c key=value` (then always strings); lists may be
// JSON arrays or comma-separated strings.
const (
	// CtxStage is Props.Stage.
	CtxStage = "stage"
	// CtxAssetDir is Props.AssetDir.
	CtxAssetDir = "assetDir"
	// CtxHTTPAllow is Props.HTTPAllow (a list).
	CtxHTTPAllow = "httpAllow"
	// CtxLambdaFunctions, CtxCallbackQueues and CtxCallbackTopics are
	// Props.LambdaFunctions, CallbackQueues and CallbackTopics (lists).
	CtxLambdaFunctions = "lambdaFunctions"
	CtxCallbackQueues  = "callbackQueues"
	CtxCallbackTopics  = "callbackTopics"
	// ECS and Batch steps: Props.ECS's fields and Props.BatchJobQueues,
	// BatchJobDefinitions (lists, except the cluster, the task role and
	// ecsAssignPublicIp, true or false).
	CtxECSCluster          = "ecsCluster"
	CtxECSSubnets          = "ecsSubnets"
	CtxECSSecurityGroups   = "ecsSecurityGroups"
	CtxECSAssignPublicIP   = "ecsAssignPublicIp"
	CtxECSTaskRoleARN      = "ecsTaskRoleArn"
	CtxECSTaskDefinitions  = "ecsTaskDefinitions"
	CtxECSImages           = "ecsImages"
	CtxBatchJobQueues      = "batchJobQueues"
	CtxBatchJobDefinitions = "batchJobDefinitions"
	// CtxBatchGPUJobQueue is Props.BatchGPUJobQueue (an ARN).
	CtxBatchGPUJobQueue = "batchGpuJobQueue"
	// CtxAttachBuckets is Props.AttachBuckets (a list).
	CtxAttachBuckets = "attachBuckets"
	// CtxBucketName is Props.BucketName.
	CtxBucketName = "bucketName"
	// CtxSignalRules is Props.SignalRules: a JSON array of {"bucket",
	// "prefix", "suffix", "name"} objects, in cdk.json or as a JSON string.
	CtxSignalRules = "signalRules"
	// CtxRetain is Props.Retain (true or false).
	CtxRetain = "retain"
	// CtxLogRetentionDays is Props.LogRetentionDays.
	CtxLogRetentionDays = "logRetentionDays"
	// CtxAlarmTopicARN is Props.AlarmTopicARN.
	CtxAlarmTopicARN = "alarmTopicArn"
	// CtxAPIGatewayAccountRole is Props.APIGatewayAccountRole (true or false).
	CtxAPIGatewayAccountRole = "apiGatewayAccountRole"
	// CtxMonitoring is Props.Monitoring (true or false).
	CtxMonitoring = "monitoring"
	// CtxMaestroChangeEvents is Props.MaestroChangeEvents (true or false).
	CtxMaestroChangeEvents = "maestroChangeEvents"
	// CtxAPIRateLimit is Props.API.RateLimit (requests per second).
	CtxAPIRateLimit = "apiRateLimit"
	// CtxAPIBurstLimit is Props.API.BurstLimit.
	CtxAPIBurstLimit = "apiBurstLimit"
	// CtxMemorySuffix, prefixed by a handler name, is that function's
	// memory in MB, e.g. "workerMemoryMB".
	CtxMemorySuffix = "MemoryMB"
	// CtxTimeoutSuffix, prefixed by a handler name, is that function's
	// timeout in seconds, e.g. "deciderTimeoutSeconds".
	CtxTimeoutSuffix = "TimeoutSeconds"
	// CtxConcurrencySuffix, prefixed by a handler name, is that function's
	// reserved concurrency, e.g. "apiReservedConcurrency".
	CtxConcurrencySuffix = "ReservedConcurrency"
)

// PropsFromContext reads Props from CDK context through get, which returns
// nil for an unset key (for an App: node.TryGetContext). It reports every
// malformed value; NewStack checks the values' ranges.
func PropsFromContext(get func(key string) any) (Props, error) {
	var p Props
	var errs []error
	str := func(key string) string {
		v := get(key)
		if v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("context %s: want a string, got %T", key, v))
		}
		return strings.TrimSpace(s)
	}
	p.Stage = str(CtxStage)
	p.AssetDir = str(CtxAssetDir)
	p.BucketName = str(CtxBucketName)
	p.AlarmTopicARN = str(CtxAlarmTopicARN)
	var err error
	if p.HTTPAllow, err = contextList(get(CtxHTTPAllow)); err != nil {
		errs = append(errs, fmt.Errorf("context %s: %w", CtxHTTPAllow, err))
	}
	p.ECS.Cluster = str(CtxECSCluster)
	p.ECS.TaskRoleARN = str(CtxECSTaskRoleARN)
	p.BatchGPUJobQueue = str(CtxBatchGPUJobQueue)
	for key, dst := range map[string]*[]string{CtxLambdaFunctions: &p.LambdaFunctions, CtxCallbackQueues: &p.CallbackQueues, CtxCallbackTopics: &p.CallbackTopics,
		CtxECSSubnets: &p.ECS.Subnets, CtxECSSecurityGroups: &p.ECS.SecurityGroups, CtxECSTaskDefinitions: &p.ECS.TaskDefinitions, CtxECSImages: &p.ECS.Images,
		CtxBatchJobQueues: &p.BatchJobQueues, CtxBatchJobDefinitions: &p.BatchJobDefinitions} {
		if *dst, err = contextList(get(key)); err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", key, err))
		}
	}
	if p.AttachBuckets, err = contextList(get(CtxAttachBuckets)); err != nil {
		errs = append(errs, fmt.Errorf("context %s: %w", CtxAttachBuckets, err))
	}
	if p.SignalRules, err = contextSignalRules(get(CtxSignalRules)); err != nil {
		errs = append(errs, fmt.Errorf("context %s: %w", CtxSignalRules, err))
	}
	boolean := func(key string) *bool {
		b, err := contextBool(get(key))
		if err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", key, err))
		}
		return b
	}
	p.Retain = boolean(CtxRetain)
	if b := boolean(CtxECSAssignPublicIP); b != nil {
		p.ECS.AssignPublicIP = *b
	}
	p.APIGatewayAccountRole = boolean(CtxAPIGatewayAccountRole)
	p.Monitoring = boolean(CtxMonitoring)
	if b := boolean(CtxMaestroChangeEvents); b != nil {
		p.MaestroChangeEvents = *b
	}
	number := func(key string) float64 {
		n, err := contextNumber(get(key))
		if err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", key, err))
		}
		return n
	}
	integer := func(key string) int {
		n := number(key)
		if n != math.Trunc(n) || math.Abs(n) > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("context %s: %v is not a whole number", key, n))
			return 0
		}
		return int(n)
	}
	p.LogRetentionDays = integer(CtxLogRetentionDays)
	p.API.RateLimit = number(CtxAPIRateLimit)
	p.API.BurstLimit = integer(CtxAPIBurstLimit)
	for _, h := range Handlers() {
		fs := FunctionSettings{
			MemoryMB:            integer(h + CtxMemorySuffix),
			Timeout:             time.Duration(integer(h+CtxTimeoutSuffix)) * time.Second,
			ReservedConcurrency: integer(h + CtxConcurrencySuffix),
		}
		if fs != (FunctionSettings{}) {
			if p.Functions == nil {
				p.Functions = map[string]FunctionSettings{}
			}
			p.Functions[h] = fs
		}
	}
	var accessErrs []error
	p.Access, accessErrs = accessFromContext(get)
	errs = append(errs, accessErrs...)
	return p, errors.Join(errs...)
}

// contextList reads a JSON array of strings or a comma-separated string.
func contextList(v any) ([]string, error) {
	var items []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		items = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want strings, got %T", e)
			}
			items = append(items, s)
		}
	default:
		return nil, fmt.Errorf("want a list or a comma-separated string, got %T", v)
	}
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// contextSignalRules reads signal rules from a JSON array (cdk.json) or
// its text (-c signalRules='[...]'), as wiring.ParseSignalRules does.
func contextSignalRules(v any) ([]signals.Rule, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return wiring.ParseSignalRules(v)
	case []any:
		text, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("signal rules: %w", err)
		}
		return wiring.ParseSignalRules(string(text))
	}
	return nil, fmt.Errorf("want a JSON array of {bucket, prefix, suffix, name}, got %T", v)
}

// contextBool reads a boolean or "true"/"false"; nil stays unset.
func contextBool(v any) (*bool, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return &v, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", v)
		}
		return &b, nil
	}
	return nil, fmt.Errorf("want true or false, got %T", v)
}

// contextNumber reads a number or its decimal string; nil is zero.
func contextNumber(v any) (float64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case float64:
		return v, nil
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, fmt.Errorf("want a number, got %q", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}
