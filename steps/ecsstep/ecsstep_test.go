package ecsstep

import (
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
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
		{model.StepKubernetes, k8s(map[string]any{"image": "x", "gpu": "1"}), "Fargate has no GPUs"},
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
