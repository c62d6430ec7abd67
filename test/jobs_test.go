package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	batchtypes "github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
)

// jobsEnv is a stack with ECS and Batch steps, and AWS clients on its
// emulator to look at what the steps asked of ECS and Batch.
type jobsEnv struct {
	*system
	ecs   *ecs.Client
	batch *batch.Client
	logs  *cloudwatchlogs.Client
	seen  map[string]bool
	queue string
}

func startJobsEnv(t *testing.T) *jobsEnv {
	t.Helper()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	// A Batch queue and job definition, as an account would have them.
	b := batch.NewFromConfig(cfg)
	queue := batchQueue(t, cfg, b, "jobs-")
	if _, err := b.RegisterJobDefinition(ctx, &batch.RegisterJobDefinitionInput{JobDefinitionName: aws.String("etl"), Type: batchtypes.JobDefinitionTypeContainer,
		ContainerProperties: &batchtypes.ContainerProperties{Image: aws.String("etl:1"), Vcpus: aws.Int32(1), Memory: aws.Int32(512)}}); err != nil {
		t.Fatal(err)
	}
	// On the shared emulator, where the Batch queue and job definition are.
	s := startSystem(t, stack.Options{Emulator: emulator, ECS: true, BatchJobQueues: []string{queue}, BatchJobDefinitions: []string{"etl"}})
	return &jobsEnv{system: s, ecs: ecs.NewFromConfig(cfg), batch: b, logs: cloudwatchlogs.NewFromConfig(cfg), seen: map[string]bool{}, queue: queue}
}

// batchQueue creates a Batch job queue named prefix plus a number, on an
// unmanaged compute environment of its own, and returns its name.
func batchQueue(t *testing.T, cfg aws.Config, b *batch.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", stageSeq.Add(1))
	role, err := iam.NewFromConfig(cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("batch-" + prefix + suffix),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := b.CreateComputeEnvironment(ctx, &batch.CreateComputeEnvironmentInput{ComputeEnvironmentName: aws.String("ce-" + prefix + suffix),
		Type: batchtypes.CETypeUnmanaged, State: batchtypes.CEStateEnabled, ServiceRole: role.Role.Arn})
	if err != nil {
		t.Fatal(err)
	}
	queue := prefix + suffix
	if _, err := b.CreateJobQueue(ctx, &batch.CreateJobQueueInput{JobQueueName: aws.String(queue), Priority: aws.Int32(1), State: batchtypes.JQStateEnabled,
		ComputeEnvironmentOrder: []batchtypes.ComputeEnvironmentOrder{{Order: aws.Int32(1), ComputeEnvironment: ce.ComputeEnvironmentArn}}}); err != nil {
		t.Fatal(err)
	}
	return queue
}

// nextTask waits for a task the stack started that the test has not seen.
func (e *jobsEnv) nextTask(t *testing.T) ecstypes.Task {
	t.Helper()
	ctx := context.Background()
	var task ecstypes.Task
	poll(t, 30*time.Second, "an ECS task starts", func() (bool, string) {
		list, err := e.ecs.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String(e.st.ECS.Cluster), StartedBy: aws.String(e.st.ECS.Family), DesiredStatus: ecstypes.DesiredStatusRunning})
		if err != nil {
			return false, err.Error()
		}
		for _, arn := range list.TaskArns {
			if e.seen[arn] {
				continue
			}
			out, err := e.ecs.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(e.st.ECS.Cluster), Tasks: []string{arn}})
			if err != nil || len(out.Tasks) != 1 {
				return false, fmt.Sprint(err)
			}
			e.seen[arn] = true
			task = out.Tasks[0]
			return true, ""
		}
		return false, fmt.Sprintf("%d tasks, none new", len(list.TaskArns))
	})
	return task
}

// taskStopped posts the "ECS Task State Change" event AWS sends when a task
// stops (exit nil: no exit code), with the fields of billed (fargate) too.
func (e *jobsEnv) taskStopped(t *testing.T, arn string, exit *int, stopCode, reason string, billed ...map[string]any) {
	t.Helper()
	container := map[string]any{"name": "main", "lastStatus": "STOPPED"}
	if exit != nil {
		container["exitCode"] = *exit
	}
	detail := map[string]any{
		"taskArn": arn, "clusterArn": e.st.ECS.ClusterARN, "lastStatus": "STOPPED", "desiredStatus": "STOPPED",
		"startedBy": e.st.ECS.Family, "stopCode": stopCode, "stoppedReason": reason, "containers": []any{container},
	}
	for _, b := range billed {
		maps.Copy(detail, b)
	}
	e.postEvent(t, "aws.ecs", "ECS Task State Change", detail)
}

// fargate is what a stopped Fargate task's event says of its billing: its
// launch type and size (the task's, as the step overrode them), and the
// image pull's start and the stop, secs seconds apart.
func fargate(task ecstypes.Task, secs int) map[string]any {
	pull := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	return map[string]any{"launchType": "FARGATE", "cpu": aws.ToString(task.Overrides.Cpu), "memory": aws.ToString(task.Overrides.Memory),
		"pullStartedAt": pull.Format(time.RFC3339Nano), "startedAt": pull.Add(10 * time.Second).Format(time.RFC3339Nano),
		"stoppedAt": pull.Add(time.Duration(secs) * time.Second).Format(time.RFC3339Nano)}
}

// costOf checks a run's cost: its Fargate x86 parts against vCPU-seconds
// and GB-seconds, the rest of its total its orchestration's (which a run
// always has: its commits' write units at least).
func costOf(t *testing.T, what string, cost *pricing.Cost, vcpuSecs, gbSecs float64) {
	t.Helper()
	fargateOf(t, what, cost, vcpuSecs, gbSecs)
	if cost.Parts[pricing.DynamoDBWriteUnits].Count <= 0 ||
		math.Abs(cost.TotalUSD-cost.USDOf(pricing.KindFargate)-cost.USDOf(pricing.KindOrchestration)) > 1e-12 {
		t.Fatalf("%s: cost %+v, want its Fargate and its orchestration", what, *cost)
	}
}

// attemptCostOf checks a step attempt's cost: its task's Fargate x86 parts
// alone (the orchestration's is the run's).
func attemptCostOf(t *testing.T, what string, cost *pricing.Cost, vcpuSecs, gbSecs float64) {
	t.Helper()
	fargateOf(t, what, cost, vcpuSecs, gbSecs)
	if math.Abs(cost.TotalUSD-cost.USDOf(pricing.KindFargate)) > 1e-12 {
		t.Fatalf("%s: cost %+v, want its Fargate alone", what, *cost)
	}
}

func fargateOf(t *testing.T, what string, cost *pricing.Cost, vcpuSecs, gbSecs float64) {
	t.Helper()
	if cost == nil {
		t.Fatalf("%s: no cost", what)
	}
	want := vcpuSecs*pricing.FargateVCPUSecondX86 + gbSecs*pricing.FargateGBSecondX86
	if cost.Parts[pricing.FargateVCPUSeconds].Count != vcpuSecs || cost.Parts[pricing.FargateGBSeconds].Count != gbSecs ||
		math.Abs(cost.USDOf(pricing.KindFargate)-want) > 1e-12 || !slices.Contains(cost.Covers, pricing.KindFargate) {
		t.Fatalf("%s: cost %+v, want %v vCPU-s and %v GB-s of Fargate, $%v", what, *cost, vcpuSecs, gbSecs, want)
	}
}

func (e *jobsEnv) postEvent(t *testing.T, source, detailType string, detail map[string]any) {
	t.Helper()
	ev, _ := json.Marshal(map[string]any{"version": "0", "id": fmt.Sprintf("ev-%d", time.Now().UnixNano()), "detail-type": detailType,
		"source": source, "account": "000000000000", "time": time.Now().UTC().Format(time.RFC3339), "region": "us-east-1", "detail": detail})
	var out map[string]any
	if code := e.do("POST", "/local/job-events", ev, &out); code != http.StatusAccepted {
		t.Fatalf("post job event: HTTP %d %v", code, out)
	}
}

// printLog writes text to a log stream, as a container's log driver would.
func (e *jobsEnv) printLog(t *testing.T, group, stream string, lines ...string) {
	t.Helper()
	ctx := context.Background()
	_, _ = e.logs.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)})
	if _, err := e.logs.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream)}); err != nil {
		t.Fatal(err)
	}
	var evs []logstypes.InputLogEvent
	for i, l := range lines {
		evs = append(evs, logstypes.InputLogEvent{Timestamp: aws.Int64(time.Now().UnixMilli() + int64(i)), Message: aws.String(l)})
	}
	if _, err := e.logs.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: evs}); err != nil {
		t.Fatal(err)
	}
}

func taskID(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }

func env(kvs []ecstypes.KeyValuePair) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[aws.ToString(kv.Name)] = aws.ToString(kv.Value)
	}
	return out
}

func exit(n int) *int { return &n }

func TestECSSteps(t *testing.T) {
	t.Parallel()
	e := startJobsEnv(t)
	ctx := context.Background()

	t.Run("a Maestro Kubernetes sample runs as a Fargate task", func(t *testing.T) {
		wf := e.push(readFile(t, "sample-kubernetes-wf.json"))
		r := e.start(wf, "")
		task := e.nextTask(t)
		def, err := e.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: task.TaskDefinitionArn})
		if err != nil {
			t.Fatal(err)
		}
		c := def.TaskDefinition.ContainerDefinitions[0]
		over := task.Overrides.ContainerOverrides[0]
		if aws.ToString(c.Image) != "busybox" || !slices.Equal(c.EntryPoint, []string{"echo"}) || !slices.Equal(over.Command, []string{"hello", "world"}) ||
			aws.ToString(over.Name) != "main" || def.TaskDefinition.NetworkMode != ecstypes.NetworkModeAwsvpc ||
			!slices.Contains(def.TaskDefinition.RequiresCompatibilities, ecstypes.CompatibilityFargate) {
			t.Fatalf("task: image %s entry point %v command %v (container %s)", aws.ToString(c.Image), c.EntryPoint, over.Command, aws.ToString(over.Name))
		}
		vars := env(over.Environment)
		if vars["MAESTRO_WORKFLOW_ID"] != wf || vars["MAESTRO_STEP_ID"] != "job.2" || vars["MAESTRO_OUTPUT_START"] != "MAESTRO_OUTPUT_START_TOKEN" {
			t.Fatalf("environment %v", vars)
		}
		e.taskStopped(t, aws.ToString(task.TaskArn), exit(0), "EssentialContainerExited", "Essential container in task exited")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
	})

	t.Run("env, resources and output from the log", func(t *testing.T) {
		def := strings.Replace(string(readFile(t, "sample-kubernetes-output-wf.json")), `"image": {`,
			`"cpu": {"value": "1500m", "type": "STRING"}, "memory": {"value": "3Gi", "type": "STRING"}, "env": {"value": {"TABLE": "db.t1"}, "type": "STRING_MAP"}, "image": {`, 1)
		wf := e.push([]byte(def))
		r := e.start(wf, "")
		task := e.nextTask(t)
		over := task.Overrides
		if aws.ToString(over.Cpu) != "2048" || aws.ToString(over.Memory) != "4096" || env(over.ContainerOverrides[0].Environment)["TABLE"] != "db.t1" {
			t.Fatalf("cpu %s memory %s env %v: want the smallest Fargate size for 1.5 vCPU and 3 GiB (2048, 4096)",
				aws.ToString(over.Cpu), aws.ToString(over.Memory), env(over.ContainerOverrides[0].Environment))
		}
		// What the sample's container prints, through its log driver.
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(aws.ToString(task.TaskArn)), "hello world",
			`MAESTRO_OUTPUT_START_TOKEN{"params":{"foo": {"value":"bar","type":"STRING","evaluated_result":"bar","evaluated_time":1625871404000}}}MAESTRO_OUTPUT_END_TOKEN`)
		e.taskStopped(t, aws.ToString(task.TaskArn), exit(0), "EssentialContainerExited", "Essential container in task exited")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		// The output foo=bar makes the edge "foo != 'default'" true.
		if v.Status != "SUCCEEDED" || v.StepStatuses["end"] != "SUCCEEDED" || e.steps(wf, r.WorkflowInstanceID)["job1"].Outputs["foo"] != "bar" {
			t.Fatalf("instance %s %v, job1 outputs %v", v.Status, v.StepStatuses, e.steps(wf, r.WorkflowInstanceID)["job1"].Outputs)
		}
	})

	t.Run("exit code 1 is a user error, retried", func(t *testing.T) {
		wf := e.push([]byte(`{"properties":{"owner":"ecs"},"workflow":{"id":"ecs-retry","steps":[
		  {"step":{"id":"job","type":"Ecs","retry_policy":{"error_retry_limit":1,"backoff":{"type":"FIXED_BACKOFF","error_retry_backoff_in_secs":1}},
		    "params":{"ecs":{"type":"MAP","value":{"image":{"type":"STRING","value":"etl:2"},"command":{"type":"STRING_ARRAY","value":["run"]},
		      "cpu":{"type":"STRING","value":"1 vCPU"},"memory":{"type":"STRING","value":"2048"}}}}}}]}}`))
		r := e.start(wf, "")
		first := e.nextTask(t)
		if aws.ToString(first.Overrides.Cpu) != "1024" || aws.ToString(first.Overrides.Memory) != "2048" {
			t.Fatalf("cpu %s memory %s", aws.ToString(first.Overrides.Cpu), aws.ToString(first.Overrides.Memory))
		}
		// Each attempt's task is billed: 90 s, then 120 s, of 1 vCPU and 2 GB.
		e.taskStopped(t, aws.ToString(first.TaskArn), exit(1), "EssentialContainerExited", "Essential container in task exited", fargate(first, 90))
		second := e.nextTask(t)
		e.taskStopped(t, aws.ToString(second.TaskArn), exit(0), "EssentialContainerExited", "Essential container in task exited", fargate(second, 120))
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		costOf(t, "the run", v.Cost, 210, 420)
		var a1 = attempt(t, e.system, wf, r.WorkflowInstanceID, "job", 1)
		if a1.RuntimeState.Status != "USER_FAILED" || !strings.Contains(timelineText(a1), "exit code 1") {
			t.Fatalf("attempt 1: %s %q", a1.RuntimeState.Status, timelineText(a1))
		}
		attemptCostOf(t, "attempt 1", a1.Cost, 90, 180)
		attemptCostOf(t, "attempt 2", attempt(t, e.system, wf, r.WorkflowInstanceID, "job", 2).Cost, 120, 240)
		// The same event again changes nothing, its cost included.
		e.taskStopped(t, aws.ToString(second.TaskArn), exit(0), "EssentialContainerExited", "again", fargate(second, 120))
		e.idle(t)
		v = e.instance(wf, r.WorkflowInstanceID)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("after a duplicate event: %s", v.Status)
		}
		costOf(t, "the run after a duplicate event", v.Cost, 210, 420)
	})

	t.Run("a foreach's cost is its iterations' Fargate tasks'", func(t *testing.T) {
		wf := e.push([]byte(`{"properties":{"owner":"ecs"},"workflow":{"id":"ecs-foreach","steps":[
		  {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1,2]}}}},
		    "steps":[{"step":{"id":"job","type":"Ecs","params":{"ecs":{"type":"MAP","value":{"image":{"type":"STRING","value":"etl:2"},
		      "cpu":{"type":"STRING","value":"512"},"memory":{"type":"STRING","value":"1024"}}}}}}]}}]}}`))
		r := e.start(wf, "")
		for range 2 {
			task := e.nextTask(t)
			e.taskStopped(t, aws.ToString(task.TaskArn), exit(0), "EssentialContainerExited", "Essential container in task exited", fargate(task, 60))
		}
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		// Two tasks of 0.5 vCPU and 1 GB for a minute each.
		costOf(t, "the foreach's run", v.Cost, 60, 120)
		code, out, errOut := e.maestro("status", wf, fmt.Sprint(r.WorkflowInstanceID))
		// The tasks' $0.000823 and the orchestration's requests.
		line := regexp.MustCompile(`(?m)^cost \$0\.0008\d\d \(covers fargate, lambda_steps, orchestration; prices of ` + pricing.Date +
			`\): .*dynamodb_write_units \d+ \$0\.0000\d+.*, fargate_gb_seconds 120 \$0\.000148, fargate_vcpu_seconds 60 \$0\.000675`)
		if code != 0 || !line.MatchString(out) {
			t.Fatalf("maestro status: exit %d, want a line matching %s\n%s%s", code, line, out, errOut)
		}
	})

	t.Run("a failure the job calls not retryable is not retried", func(t *testing.T) {
		wf := e.push(readFile(t, "sample-kubernetes-nonretryable-wf.json"))
		r := e.start(wf, "")
		task := e.nextTask(t)
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(aws.ToString(task.TaskArn)),
			`MAESTRO_OUTPUT_START_TOKEN{"artifacts":{"maestro_retry":{"type":"RETRY","retryable":false}}}MAESTRO_OUTPUT_END_TOKEN`)
		e.taskStopped(t, aws.ToString(task.TaskArn), exit(1), "EssentialContainerExited", "Essential container in task exited")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "FAILED" || v.StepStatuses["job1"] != "FATALLY_FAILED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
	})

	t.Run("a task that cannot start is a platform error", func(t *testing.T) {
		wf := e.push([]byte(`{"properties":{"owner":"ecs"},"workflow":{"id":"ecs-capacity","steps":[
		  {"step":{"id":"job","type":"Ecs","retry_policy":{"platform_retry_limit":0},
		    "params":{"ecs":{"type":"MAP","value":{"image":{"type":"STRING","value":"etl:2"}}}}}}]}}`))
		r := e.start(wf, "")
		task := e.nextTask(t)
		e.taskStopped(t, aws.ToString(task.TaskArn), nil, "TaskFailedToStart", "ResourceInitializationError: unable to pull secrets or registry auth")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job", 1)
		if v.Status != "FAILED" || !strings.Contains(timelineText(a), "PLATFORM_FAILED") && !strings.Contains(timelineText(a), "TaskFailedToStart") {
			t.Fatalf("instance %s %v: %q", v.Status, v.StepStatuses, timelineText(a))
		}
	})

	t.Run("stopping the step stops the task", func(t *testing.T) {
		wf := e.push(readFile(t, "sample-kubernetes-env-wf.json"))
		r := e.start(wf, "")
		task := e.nextTask(t)
		vars := env(task.Overrides.ContainerOverrides[0].Environment)
		if vars["error_retries"] != "0" {
			t.Fatalf("env error_retries = %q, want the step's MAESTRO_STEP_ERROR_RETRIES, 0", vars["error_retries"])
		}
		poll(t, 30*time.Second, "the step runs as its task", func() (bool, string) {
			var a orchestrator.StepView
			e.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/job1/attempts/1", wf, r.WorkflowInstanceID), nil, &a)
			return strings.Contains(timelineText(a), "running as ECS task "+aws.ToString(task.TaskArn)), timelineText(a)
		})
		e.act(wf, r.WorkflowInstanceID, "stop")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "STOPPED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		poll(t, 30*time.Second, "the task is stopped in ECS", func() (bool, string) {
			out, err := e.ecs.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(e.st.ECS.Cluster), Tasks: []string{aws.ToString(task.TaskArn)}})
			if err != nil || len(out.Tasks) != 1 {
				return false, fmt.Sprint(err)
			}
			got := out.Tasks[0]
			return aws.ToString(got.LastStatus) == "STOPPED" && strings.Contains(aws.ToString(got.StoppedReason), "job1"),
				aws.ToString(got.LastStatus) + " " + aws.ToString(got.StoppedReason)
		})
		// ECS then reports the stop; it changes nothing.
		e.taskStopped(t, aws.ToString(task.TaskArn), exit(143), "UserInitiated", "maestro: stopped")
		e.idle(t)
		if v := e.instance(wf, r.WorkflowInstanceID); v.Status != "STOPPED" {
			t.Fatalf("after the stop's event: %s", v.Status)
		}
	})
}

// attempt reads one step attempt's view.
func attempt(t *testing.T, s *system, wf string, inst int64, step string, n int) orchestrator.StepView {
	t.Helper()
	var v orchestrator.StepView
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/%s/attempts/%d", wf, inst, step, n), nil, &v); code != http.StatusOK {
		t.Fatalf("attempt %d of %s: HTTP %d", n, step, code)
	}
	return v
}

func TestBatchSteps(t *testing.T) {
	t.Parallel()
	e := startJobsEnv(t)
	ctx := context.Background()
	batchWorkflow := func(id, extra string) []byte {
		return []byte(fmt.Sprintf(`{"properties":{"owner":"batch"},"workflow":{"id":%q,"steps":[
		  {"step":{"id":"job","type":"Batch",%s"params":{"batch":{"type":"MAP","value":{
		    "job_queue":{"type":"STRING","value":%q},"job_definition":{"type":"STRING","value":"etl"},
		    "command":{"type":"STRING_ARRAY","value":["load","--day","${workflow_instance_id}"]},"vcpus":{"type":"LONG","value":2}}}},
		    "transition":{"successors":{"after":"true"}}}},
		  {"step":{"id":"after","type":"NoOp","params":{"got":{"type":"STRING","expression":"params.getFromStep(\"job\", \"rows\")"}}}}]}}`, id, extra, e.queue))
	}
	// jobOf waits for the step attempt's Batch job id (its timeline says it).
	jobOf := func(t *testing.T, wf string, inst int64, n int) string {
		t.Helper()
		var id string
		poll(t, 30*time.Second, "the Batch job is submitted", func() (bool, string) {
			var a orchestrator.StepView
			if code := e.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/job/attempts/%d", wf, inst, n), nil, &a); code != http.StatusOK {
				return false, fmt.Sprintf("attempt %d: HTTP %d", n, code)
			}
			text := timelineText(a)
			if i := strings.Index(text, "running as Batch job "); i >= 0 {
				id = strings.Fields(text[i+len("running as Batch job "):])[0]
				return true, ""
			}
			return false, text
		})
		return id
	}
	// jobEnded posts a job's end; fargateSecs > 0 says it ran on Fargate,
	// 0.5 vCPU and 1 GB, for that long.
	jobEnded := func(t *testing.T, id, status string, exit *int, stream string, fargateSecs ...int64) {
		t.Helper()
		container := map[string]any{"logStreamName": stream}
		if exit != nil {
			container["exitCode"] = *exit
		}
		detail := map[string]any{
			"jobId": id, "jobName": "x", "jobQueue": "arn:aws:batch:us-east-1:000000000000:job-queue/" + e.queue, "status": status,
			"statusReason": "Essential container in task exited", "container": container,
		}
		for _, secs := range fargateSecs {
			start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).UnixMilli()
			detail["platformCapabilities"], detail["startedAt"], detail["stoppedAt"] = []string{"FARGATE"}, start, start+secs*1000
			container["resourceRequirements"] = []map[string]string{{"type": "VCPU", "value": "0.5"}, {"type": "MEMORY", "value": "1024"}}
		}
		e.postEvent(t, "aws.batch", "Batch Job State Change", detail)
	}

	t.Run("outputs from the job's log reach the next step", func(t *testing.T) {
		wf := e.push(batchWorkflow("batch-ok", ""))
		r := e.start(wf, "")
		id := jobOf(t, wf, r.WorkflowInstanceID, 1)
		got, err := e.batch.DescribeJobs(ctx, &batch.DescribeJobsInput{Jobs: []string{id}})
		if err != nil || len(got.Jobs) != 1 {
			t.Fatalf("describe job %s: %v", id, err)
		}
		j := got.Jobs[0]
		if !strings.HasSuffix(aws.ToString(j.JobQueue), e.queue) || !strings.Contains(aws.ToString(j.JobDefinition), "etl") {
			t.Fatalf("job on %s with %s", aws.ToString(j.JobQueue), aws.ToString(j.JobDefinition))
		}
		stream := "etl/default/" + id
		e.printLog(t, "/aws/batch/job", stream, `MAESTRO_OUTPUT_START_TOKEN{"params":{"rows":{"value":"1200","type":"STRING"}}}MAESTRO_OUTPUT_END_TOKEN`)
		jobEnded(t, id, "SUCCEEDED", exit(0), stream, 120)
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" || fmt.Sprint(e.steps(wf, r.WorkflowInstanceID)["after"].Params["got"]) != "1200" {
			t.Fatalf("instance %s %v; after saw %v", v.Status, v.StepStatuses, e.steps(wf, r.WorkflowInstanceID)["after"].Params["got"])
		}
		// On a Fargate compute environment: 2 minutes of 0.5 vCPU and 1 GB.
		costOf(t, "the run of a Batch job on Fargate", v.Cost, 60, 120)
	})

	t.Run("exit code 1 is a user error, retried", func(t *testing.T) {
		wf := e.push(batchWorkflow("batch-retry", `"retry_policy":{"error_retry_limit":1,"backoff":{"type":"FIXED_BACKOFF","error_retry_backoff_in_secs":1}},`))
		r := e.start(wf, "")
		jobEnded(t, jobOf(t, wf, r.WorkflowInstanceID, 1), "FAILED", exit(1), "")
		second := jobOf(t, wf, r.WorkflowInstanceID, 2)
		stream := "etl/default/" + second
		e.printLog(t, "/aws/batch/job", stream, `MAESTRO_OUTPUT_START_TOKEN{"params":{"rows":{"value":"7"}}}MAESTRO_OUTPUT_END_TOKEN`)
		jobEnded(t, second, "SUCCEEDED", exit(0), stream)
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		a1 := attempt(t, e.system, wf, r.WorkflowInstanceID, "job", 1)
		if a1.RuntimeState.Status != "USER_FAILED" || !strings.Contains(timelineText(a1), "exit code 1") {
			t.Fatalf("attempt 1: %s %q", a1.RuntimeState.Status, timelineText(a1))
		}
	})

	t.Run("stopping the step terminates the job", func(t *testing.T) {
		wf := e.push(batchWorkflow("batch-stop", ""))
		r := e.start(wf, "")
		id := jobOf(t, wf, r.WorkflowInstanceID, 1)
		e.act(wf, r.WorkflowInstanceID, "stop")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "STOPPED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		poll(t, 30*time.Second, "the job is terminated in Batch", func() (bool, string) {
			got, err := e.batch.DescribeJobs(ctx, &batch.DescribeJobsInput{Jobs: []string{id}})
			if err != nil || len(got.Jobs) != 1 {
				return false, fmt.Sprint(err)
			}
			reason := aws.ToString(got.Jobs[0].StatusReason)
			return strings.Contains(reason, "maestro: step job"), reason
		})
	})

	t.Run("a queue off the allow-list is refused", func(t *testing.T) {
		def := strings.Replace(string(batchWorkflow("batch-denied", "")), e.queue, "other-queue", 1)
		wf := e.push([]byte(def))
		r := e.start(wf, "")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job", 1)
		if v.Status != "FAILED" || !strings.Contains(timelineText(a), "not on the Batch step allow-list") {
			t.Fatalf("instance %s %v: %q", v.Status, v.StepStatuses, timelineText(a))
		}
	})
}

// TestECSImageAllowList runs a local stack with an image allow-list, as a
// deployed stack's ecsImages setting makes one: a literal image off the
// list is refused at push (400 naming the param's path and the image), one
// known only at run time fails the step at launch, before ECS is asked
// anything, and an image on the list runs.
func TestECSImageAllowList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	s := startSystem(t, stack.Options{Emulator: emulator, ECS: true, ECSImages: []string{"docker.io/library/busybox"}})
	e := &jobsEnv{system: s, ecs: ecs.NewFromConfig(cfg), seen: map[string]bool{}}
	step := func(id, image string) string {
		return `{"properties":{"owner":"ecs"},"workflow":{"id":"` + id + `","params":{"img":{"type":"STRING","value":"etl:2"}},"steps":[
		  {"step":{"id":"job","type":"Ecs","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
		    "params":{"ecs":{"type":"MAP","value":{"image":{"type":"STRING","value":"` + image + `"}}}}}}]}}`
	}

	t.Run("a literal image off the list is refused at push", func(t *testing.T) {
		var body orchestrator.Error
		if code := s.do("POST", "/api/v3/workflows", []byte(step("ecs-literal-image", "etl:2")), &body); code != http.StatusBadRequest {
			t.Fatalf("push: HTTP %d %v, want 400", code, body)
		}
		if len(body.Errors) != 1 || !strings.Contains(body.Errors[0], `workflow.steps[0].step.params.ecs.value.image.value: image "etl:2"`) {
			t.Fatalf("errors %q: want the param's path and the image", body.Errors)
		}
	})

	t.Run("an image from a param fails the step at launch", func(t *testing.T) {
		wf, r, v := s.run([]byte(step("ecs-param-image", "${img}")), 30*time.Second)
		a := attempt(t, s, wf, r.WorkflowInstanceID, "job", 1)
		if v.Status != "FAILED" || a.RuntimeState.Status != "FATALLY_FAILED" ||
			!strings.Contains(timelineText(a), `image "etl:2"`) || !strings.Contains(timelineText(a), "ecsImages") {
			t.Fatalf("instance %s, step %s: %q", v.Status, a.RuntimeState.Status, timelineText(a))
		}
		list, err := e.ecs.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String(s.st.ECS.Cluster), StartedBy: aws.String(s.st.ECS.Family)})
		if err != nil || len(list.TaskArns) != 0 {
			t.Fatalf("tasks %v, %v: want none started", list, err)
		}
	})

	t.Run("an image on the list runs", func(t *testing.T) {
		wf := s.push(readFile(t, "sample-kubernetes-wf.json"))
		s.start(wf, "")
		task := e.nextTask(t)
		def, err := e.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: task.TaskDefinitionArn})
		if err != nil || aws.ToString(def.TaskDefinition.ContainerDefinitions[0].Image) != "busybox" {
			t.Fatalf("task definition %v, %v", def, err)
		}
	})
}
