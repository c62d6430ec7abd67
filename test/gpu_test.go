package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	batchtypes "github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// startGPUEnv is a stack with ECS and a Batch job queue for GPU work (on
// the emulator an unmanaged compute environment stands for a GPU one).
func startGPUEnv(t *testing.T) *jobsEnv {
	t.Helper()
	cfg := emulator.TestConfig(t)
	b := batch.NewFromConfig(cfg)
	queue := batchQueue(t, cfg, b, "gpu-")
	s := startSystem(t, stack.Options{Emulator: emulator, ECS: true, BatchGPUJobQueue: queue})
	return &jobsEnv{system: s, batch: b, logs: cloudwatchlogs.NewFromConfig(cfg), seen: map[string]bool{}, queue: queue}
}

// gpuJob finds job id in the GPU queue's list of jobs.
func (e *jobsEnv) gpuJob(t *testing.T, id string) batchtypes.JobSummary {
	t.Helper()
	for _, status := range batchtypes.JobStatus("").Values() {
		out, err := e.batch.ListJobs(context.Background(), &batch.ListJobsInput{JobQueue: aws.String(e.queue), JobStatus: status})
		if err != nil {
			t.Fatalf("list jobs of %s: %v", e.queue, err)
		}
		for _, j := range out.JobSummaryList {
			if aws.ToString(j.JobId) == id {
				return j
			}
		}
	}
	t.Fatalf("job %s is not in queue %s", id, e.queue)
	return batchtypes.JobSummary{}
}

// TestGPUKubernetesSteps runs a Kubernetes step that requests GPUs as a
// Batch job on the GPU queue: the job's definition carries the step's GPU,
// vCPU and memory requirements (command and environment are checked by
// batchstep's unit tests: the emulator does not show them), its end arrives as the Batch job state
// change event, and its output reaches the next step. Stopping the step
// terminates the job; a gpu of "0" fails the step, naming the field.
func TestGPUKubernetesSteps(t *testing.T) {
	t.Parallel()
	e := startGPUEnv(t)
	ctx := context.Background()
	gpuWorkflow := func(id, gpu string) []byte {
		return []byte(fmt.Sprintf(`{"properties":{"owner":"gpu"},"workflow":{"id":%q,"steps":[
		  {"step":{"id":"train","type":"kubernetes","retry_policy":{"error_retry_limit":0},"params":{"kubernetes":{"type":"MAP","value":{
		    "image":{"type":"STRING","value":"busybox"},"gpu":{"type":"STRING","value":%q},"cpu":{"type":"STRING","value":"2500m"},
		    "memory":{"type":"STRING","value":"6Gi"},"command":{"type":"STRING_ARRAY","value":["python"]},
		    "args":{"type":"STRING_ARRAY","value":["train.py","--run=${workflow_instance_id}"]},"env":{"type":"STRING_MAP","value":{"MODEL":"m1"}}}}},
		    "transition":{"successors":{"after":"true"}}}},
		  {"step":{"id":"after","type":"NoOp","params":{"got":{"type":"STRING","expression":"params.getFromStep(\"train\", \"loss\")"}}}}]}}`, id, gpu))
	}
	jobOf := func(t *testing.T, wf string, inst int64) string {
		t.Helper()
		var id string
		poll(t, 30*time.Second, "the GPU job is submitted", func() (bool, string) {
			var a orchestrator.StepView
			if code := e.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/train/attempts/1", wf, inst), nil, &a); code != http.StatusOK {
				return false, fmt.Sprintf("HTTP %d", code)
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

	t.Run("runs on the GPU queue with the step's resources, ended by a Batch event", func(t *testing.T) {
		wf := e.push(gpuWorkflow("gpu-train", "2"))
		r := e.start(wf, "")
		id := jobOf(t, wf, r.WorkflowInstanceID)
		// (moto answers DescribeJobs of a job whose definition sets VCPU
		// with a float the SDK cannot read: the job is read from the
		// queue's list.)
		j := e.gpuJob(t, id)
		defs, err := e.batch.DescribeJobDefinitions(ctx, &batch.DescribeJobDefinitionsInput{JobDefinitions: []string{aws.ToString(j.JobDefinition)}})
		if err != nil || len(defs.JobDefinitions) != 1 {
			t.Fatalf("describe job definition %s: %v", aws.ToString(j.JobDefinition), err)
		}
		d := defs.JobDefinitions[0]
		reqs := map[batchtypes.ResourceType]string{}
		for _, rr := range d.ContainerProperties.ResourceRequirements {
			reqs[rr.Type] = aws.ToString(rr.Value)
		}
		// 2500m CPU is 3 whole vCPUs; 6Gi is 6144 MiB.
		if aws.ToString(d.ContainerProperties.Image) != "busybox" || reqs[batchtypes.ResourceTypeGpu] != "2" || reqs[batchtypes.ResourceTypeVcpu] != "3" ||
			reqs[batchtypes.ResourceTypeMemory] != "6144" || !slices.Contains(d.PlatformCapabilities, batchtypes.PlatformCapabilityEc2) {
			t.Fatalf("job definition %s: image %s, resources %v, platforms %v", aws.ToString(d.JobDefinitionName), aws.ToString(d.ContainerProperties.Image), reqs, d.PlatformCapabilities)
		}
		stream := aws.ToString(d.JobDefinitionName) + "/default/" + id
		e.printLog(t, "/aws/batch/job", stream, `MAESTRO_OUTPUT_START_TOKEN{"params":{"loss":{"value":"0.01","type":"STRING"}}}MAESTRO_OUTPUT_END_TOKEN`)
		e.postEvent(t, "aws.batch", "Batch Job State Change", map[string]any{
			"jobId": id, "jobName": "x", "jobQueue": "arn:aws:batch:us-east-1:000000000000:job-queue/" + e.queue, "status": "SUCCEEDED",
			"statusReason": "Essential container in task exited", "container": map[string]any{"exitCode": 0, "logStreamName": stream},
		})
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" || fmt.Sprint(e.steps(wf, r.WorkflowInstanceID)["after"].Params["got"]) != "0.01" {
			t.Fatalf("instance %s %v; after saw %v", v.Status, v.StepStatuses, e.steps(wf, r.WorkflowInstanceID)["after"].Params["got"])
		}
	})

	t.Run("stopping the step terminates the job", func(t *testing.T) {
		wf := e.push(gpuWorkflow("gpu-stop", "1"))
		r := e.start(wf, "")
		id := jobOf(t, wf, r.WorkflowInstanceID)
		e.act(wf, r.WorkflowInstanceID, "stop")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "STOPPED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		poll(t, 30*time.Second, "the job is terminated in Batch", func() (bool, string) {
			reason := aws.ToString(e.gpuJob(t, id).StatusReason)
			return strings.Contains(reason, "maestro: step train"), reason
		})
	})

	t.Run("gpu 0 fails the step, naming the field", func(t *testing.T) {
		wf := e.push(gpuWorkflow("gpu-zero", "0"))
		r := e.start(wf, "")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "train", 1)
		if v.Status != "FAILED" || a.RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(timelineText(a), "param kubernetes.gpu: 0 GPUs: request at least 1") {
			t.Fatalf("instance %s, train %s: %q", v.Status, a.RuntimeState.Status, timelineText(a))
		}
	})
}
