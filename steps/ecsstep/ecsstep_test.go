package ecsstep

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func TestFargateSize(t *testing.T) {
	for _, tc := range []struct{ cpu, mem, wantCPU, wantMem int }{
		{0, 0, 0, 0},
		{1, 0, 256, 512},
		{256, 1500, 256, 2048}, // 1536 is not offered with 256 units
		{1536, 3072, 2048, 4096},
		{1024, 9000, 2048, 9216},
		{4096, 31000, 8192, 32768},
		{16384, 122880, 16384, 122880},
	} {
		cpu, mem, err := fargateSize(tc.cpu, tc.mem)
		if err != nil || cpu != tc.wantCPU || mem != tc.wantMem {
			t.Errorf("fargateSize(%d, %d) = %d, %d, %v; want %d, %d", tc.cpu, tc.mem, cpu, mem, err, tc.wantCPU, tc.wantMem)
		}
	}
	if _, _, err := fargateSize(32768, 0); err == nil {
		t.Error("32 vCPU accepted")
	}
	if _, _, err := fargateSize(0, 200000); err == nil {
		t.Error("195 GiB accepted")
	}
}

func TestQuantities(t *testing.T) {
	for in, want := range map[string]int{"1": 1024, "0.5": 512, "500m": 512, "1500m": 1536, "2": 2048, "100m": 103} {
		if got, err := cpuUnits(in); err != nil || got != want {
			t.Errorf("cpuUnits(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]int{"4Gi": 4096, "512Mi": 512, "1G": 954, "1073741824": 1024, "1.5Gi": 1536} {
		if got, err := mebibytes(in); err != nil || got != want {
			t.Errorf("mebibytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]int{"1024": 1024, "1 vCPU": 1024, "0.25 vcpu": 256} {
		if got, err := ecsCPU(in); err != nil || got != want {
			t.Errorf("ecsCPU(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]int{"2048": 2048, "2 GB": 2048, "0.5GB": 512} {
		if got, err := ecsMemory(in); err != nil || got != want {
			t.Errorf("ecsMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "two", "1x"} {
		if _, err := cpuUnits(bad); err == nil {
			t.Errorf("cpuUnits(%q) accepted", bad)
		}
		if _, err := mebibytes(bad); err == nil {
			t.Errorf("mebibytes(%q) accepted", bad)
		}
	}
}

func TestParseTask(t *testing.T) {
	k8s := func(m map[string]any) engine.Values { return engine.Values{"kubernetes": m} }
	ecsp := func(m map[string]any) engine.Values { return engine.Values{"ecs": m} }
	got, err := parseTask(model.StepKubernetes, k8s(map[string]any{"image": "busybox", "command": []any{"/bin/sh"}, "args": []any{"-c", "echo"},
		"env": map[string]any{"A": "1"}, "cpu": "500m", "memory": "1Gi", "app_name": "x"}))
	if err != nil || got.image != "busybox" || strings.Join(got.entryPoint, " ") != "/bin/sh" || strings.Join(got.command, " ") != "-c echo" ||
		got.env["A"] != "1" || got.cpu != 512 || got.memory != 1024 {
		t.Fatalf("%+v %v", got, err)
	}
	for _, tc := range []struct {
		typ    model.StepType
		params engine.Values
		err    string
	}{
		{model.StepKubernetes, k8s(map[string]any{}), "image: required"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "0"}), "gpu: 0 GPUs: request at least 1, or leave gpu out"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "-2"}), "gpu: -2 GPUs: request at least 1"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "two"}), `gpu: "two" is not a whole number of GPUs`},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "1.5"}), `gpu: "1.5" is not a whole number of GPUs`},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "1000000"}), "gpu: 1000000 GPUs is more than 8"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": true}), "gpu: must be a STRING or a number"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "1", "disk": "100Gi"}), "disk: a step with gpu runs as a Batch job on EC2, which has no per-job disk size"},
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "volumes": "v"}), "volumes: not a field"},
		{model.StepECS, ecsp(map[string]any{}), "exactly one of image and task_definition"},
		{model.StepECS, ecsp(map[string]any{"image": "x", "task_definition": "y"}), "exactly one of image and task_definition"},
		{model.StepECS, ecsp(map[string]any{"task_definition": "y", "entry_point": []any{"sh"}}), "entry_point: only with image"},
		{model.StepECS, ecsp(map[string]any{"image": "x", "disk": int64(300)}), "outside Fargate's 21-200"},
		{model.StepECS, ecsp(map[string]any{"image": "x", "command": "echo"}), "command: must be a STRING_ARRAY"},
		{model.StepECS, engine.Values{}, `param "ecs" is missing`},
	} {
		if _, err := parseTask(tc.typ, tc.params); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want %q", tc.params, err, tc.err)
		}
	}
}

func TestAllowedDefinition(t *testing.T) {
	r := &Runner{cfg: Config{AllowTaskDefinitions: []string{"etl"}}}
	for def, want := range map[string]bool{
		"etl": true, "etl:3": true, "arn:aws:ecs:us-east-1:1:task-definition/etl:3": true,
		"etl-admin": false, "arn:aws:ecs:us-east-1:1:task-definition/other:1": false,
	} {
		if got := r.allowedDefinition(def); got != want {
			t.Errorf("allowedDefinition(%q) = %v", def, got)
		}
	}
}

func TestLogsURL(t *testing.T) {
	got := LogsURL("eu-west-1", "/maestro/prod/ecs", "maestro/main/abc123")
	want := "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:log-groups/log-group/$252Fmaestro$252Fprod$252Fecs/log-events/maestro$252Fmain$252Fabc123"
	if got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
}

// fakeECS records what the runner asks of ECS and answers like a cluster
// that starts every task.
type fakeECS struct {
	registered []string // images of registered task definitions
	ran        []string // task definitions run
	// registeredRoles and overrideRoles are the task roles of registered
	// task definitions and of RunTask overrides ("" for none).
	registeredRoles, overrideRoles []string
}

func (f *fakeECS) RunTask(_ context.Context, in *ecs.RunTaskInput, _ ...func(*ecs.Options)) (*ecs.RunTaskOutput, error) {
	f.ran = append(f.ran, aws.ToString(in.TaskDefinition))
	if in.Overrides != nil {
		f.overrideRoles = append(f.overrideRoles, aws.ToString(in.Overrides.TaskRoleArn))
	}
	return &ecs.RunTaskOutput{Tasks: []types.Task{{TaskArn: aws.String("arn:aws:ecs:us-east-1:123456789012:task/data/0123")}}}, nil
}

func (f *fakeECS) StopTask(context.Context, *ecs.StopTaskInput, ...func(*ecs.Options)) (*ecs.StopTaskOutput, error) {
	return &ecs.StopTaskOutput{}, nil
}

func (f *fakeECS) RegisterTaskDefinition(_ context.Context, in *ecs.RegisterTaskDefinitionInput, _ ...func(*ecs.Options)) (*ecs.RegisterTaskDefinitionOutput, error) {
	f.registered = append(f.registered, aws.ToString(in.ContainerDefinitions[0].Image))
	f.registeredRoles = append(f.registeredRoles, aws.ToString(in.TaskRoleArn))
	return &ecs.RegisterTaskDefinitionOutput{TaskDefinition: &types.TaskDefinition{
		TaskDefinitionArn: aws.String("arn:aws:ecs:us-east-1:123456789012:task-definition/" + aws.ToString(in.Family) + ":1")}}, nil
}

func (f *fakeECS) DescribeTaskDefinition(context.Context, *ecs.DescribeTaskDefinitionInput, ...func(*ecs.Options)) (*ecs.DescribeTaskDefinitionOutput, error) {
	return nil, errors.New("ClientException: unable to describe task definition")
}

type noLogs struct{}

func (noLogs) GetLogEvents(context.Context, *cloudwatchlogs.GetLogEventsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetLogEventsOutput, error) {
	return &cloudwatchlogs.GetLogEventsOutput{}, nil
}

func newTestRunner(t *testing.T, allow *images.AllowList) (*Runner, *fakeECS) {
	t.Helper()
	f := &fakeECS{}
	r, err := New(Config{ECS: f, Logs: noLogs{}, Cluster: "data", Subnets: []string{"subnet-1"}, LogGroup: "/maestro/test/ecs",
		Region: "us-east-1", Family: "maestro-test-task", StartedBy: "maestro-test-task", AllowImages: allow})
	if err != nil {
		t.Fatal(err)
	}
	return r, f
}

func TestDispatchRefusesImagesOffTheAllowList(t *testing.T) {
	allow, err := images.ParseAllowList([]string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/", "docker.io/library/busybox"})
	if err != nil {
		t.Fatal(err)
	}
	step := func(typ model.StepType, image string) orchestrator.StepWork {
		param := ParamECS
		if typ == model.StepKubernetes {
			param = ParamKubernetes
		}
		return orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "job", Attempt: 1}, StepType: typ,
			Params: engine.Values{param: map[string]any{"image": image}}}
	}
	for _, tc := range []struct {
		typ   model.StepType
		image string
		want  string // in the fatal message; "" when the image runs
	}{
		{model.StepECS, "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/job:1", ""},
		{model.StepKubernetes, "busybox", ""},
		{model.StepECS, "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl-evil/job:1", "is not on the image allow-list"},
		{model.StepECS, "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl", "is not on the image allow-list"},
		{model.StepKubernetes, "evil.example.com/busybox", "is not on the image allow-list"},
		{model.StepKubernetes, "busybox-evil:latest", "is not on the image allow-list"},
		{model.StepKubernetes, "etl/../busybox", "not a valid image reference"},
	} {
		r, f := newTestRunner(t, allow)
		h, end, err := r.Dispatch(context.Background(), step(tc.typ, tc.image), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.image, err)
		}
		if tc.want == "" {
			if end != nil || h.Job == "" || len(f.registered) != 1 || f.registered[0] != tc.image || len(f.ran) != 1 {
				t.Errorf("%s: handover %+v, end %+v, registered %v, ran %v; want it run", tc.image, h, end, f.registered, f.ran)
			}
			continue
		}
		if len(f.registered) != 0 || len(f.ran) != 0 {
			t.Errorf("%s: registered %v and ran %v; want nothing asked of ECS", tc.image, f.registered, f.ran)
		}
		if end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, tc.want) ||
			!strings.Contains(end.Message, strconv.Quote(tc.image)) {
			t.Errorf("%s: end %+v; want a fatal error naming the image and %q", tc.image, end, tc.want)
		} else if tc.want == "is not on the image allow-list" && !strings.Contains(end.Message, "ecsImages") {
			t.Errorf("%s: %q does not name the ecsImages setting", tc.image, end.Message)
		}
	}
	// Without a list no image runs.
	r, f := newTestRunner(t, nil)
	_, end, err := r.Dispatch(context.Background(), step(model.StepKubernetes, "busybox"), "")
	if err != nil || end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, "no image may run") || len(f.ran) != 0 {
		t.Errorf("nil list: end %+v, err %v, ran %v", end, err, f.ran)
	}
}
