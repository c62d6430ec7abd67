package infra

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

func TestResolveDefaults(t *testing.T) {
	tests := []struct {
		name       string
		props      Props
		stage      string
		retain     bool
		monitoring bool
		accountCW  bool
	}{
		{"empty props are the dev stage", Props{}, "dev", false, true, true},
		{"other stages are retained", Props{Stage: "prod"}, "prod", true, true, true},
		{"explicit retain wins", Props{Stage: "prod", Retain: ptr(false)}, "prod", false, true, true},
		{"dev may be retained", Props{Retain: ptr(true)}, "dev", true, true, true},
		{"toggles", Props{Monitoring: ptr(false), APIGatewayAccountRole: ptr(false)}, "dev", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.props
			p.AssetDir = assetsFor(t)
			s, err := p.resolve()
			if err != nil {
				t.Fatal(err)
			}
			if s.Stage != tt.stage || s.retain != tt.retain || s.monitor != tt.monitoring || s.accountCW != tt.accountCW {
				t.Errorf("stage %s retain %v monitoring %v accountCW %v; want %s %v %v %v",
					s.Stage, s.retain, s.monitor, s.accountCW, tt.stage, tt.retain, tt.monitoring, tt.accountCW)
			}
			if s.LogRetentionDays != DefaultLogRetentionDays || s.API != DefaultAPISettings() {
				t.Errorf("defaults not applied: %+v", s.Props)
			}
			if s.spec.Stage != tt.stage {
				t.Errorf("spec for stage %s", s.spec.Stage)
			}
			for _, h := range Handlers() {
				if s.functions[h] != DefaultFunctionSettings(h) {
					t.Errorf("%s settings %+v, want defaults %+v", h, s.functions[h], DefaultFunctionSettings(h))
				}
			}
		})
	}
}

func TestResolveMergesFunctionOverrides(t *testing.T) {
	s, err := Props{AssetDir: assetsFor(t), Functions: map[string]FunctionSettings{
		HandlerAPI:     {MemoryMB: 1024},
		HandlerWorker:  {Timeout: 45 * time.Second, ReservedConcurrency: 5},
		HandlerSignals: {ReservedConcurrency: NoReservedConcurrency},
	}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FunctionSettings{
		HandlerAPI:     {MemoryMB: 1024, Timeout: 29 * time.Second, ReservedConcurrency: 50},
		HandlerRouter:  DefaultFunctionSettings(HandlerRouter),
		HandlerDecider: DefaultFunctionSettings(HandlerDecider),
		HandlerWorker:  {MemoryMB: 256, Timeout: 45 * time.Second, ReservedConcurrency: 5},
		HandlerSignals: {MemoryMB: 256, Timeout: 30 * time.Second, ReservedConcurrency: NoReservedConcurrency},
	}
	if !reflect.DeepEqual(s.functions, want) {
		t.Errorf("functions %+v, want %+v", s.functions, want)
	}
}

func TestDefaultTimeoutsFitQueues(t *testing.T) {
	s, err := Props{AssetDir: assetsFor(t)}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if got, v := s.functions[HandlerDecider].Timeout, s.spec.Queues.Decision.VisibilityTimeout; got > v {
		t.Errorf("decider timeout %v > decision visibility %v", got, v)
	}
	if got, v := s.functions[HandlerWorker].Timeout, s.spec.Queues.Work.VisibilityTimeout; got > v {
		t.Errorf("worker timeout %v > work visibility %v", got, v)
	}
	if got, v := s.functions[HandlerSignals].Timeout, s.spec.Queues.SignalIngest.VisibilityTimeout; got > v {
		t.Errorf("signals timeout %v > signal-ingest visibility %v", got, v)
	}
	if got := s.functions[HandlerAPI].Timeout; got > 29*time.Second {
		t.Errorf("api timeout %v exceeds API Gateway's 29 s", got)
	}
}

func TestResolveRejects(t *testing.T) {
	tests := []struct {
		name  string
		props Props
		want  string
	}{
		{"bad stage", Props{Stage: "Prod_1"}, "invalid stage"},
		{"unknown handler", Props{Functions: map[string]FunctionSettings{"signal": {}}}, `unknown handler "signal"`},
		{"small memory", Props{Functions: map[string]FunctionSettings{HandlerAPI: {MemoryMB: 64}}}, "api: memory 64 MB"},
		{"long timeout", Props{Functions: map[string]FunctionSettings{HandlerRouter: {Timeout: time.Hour}}}, "router: timeout 1h0m0s"},
		{"fractional timeout", Props{Functions: map[string]FunctionSettings{HandlerRouter: {Timeout: 1500 * time.Millisecond}}}, "whole seconds"},
		{"timeout over visibility", Props{Functions: map[string]FunctionSettings{HandlerDecider: {Timeout: 31 * time.Second}}}, "exceeds its queue's visibility timeout"},
		{"signals timeout over visibility", Props{Functions: map[string]FunctionSettings{HandlerSignals: {Timeout: 31 * time.Second}}},
			"signals: timeout 31s exceeds its queue's visibility timeout"},
		{"negative concurrency", Props{Functions: map[string]FunctionSettings{HandlerWorker: {ReservedConcurrency: -2}}}, "reserved concurrency -2: want a positive number, or -1 to reserve none"},
		{"retention", Props{LogRetentionDays: 10}, "log retention 10 days"},
		{"throttling", Props{API: APISettings{RateLimit: -1}}, "api throttling"},
		{"attach bucket", Props{AttachBuckets: []string{"Bad_Bucket"}}, "attach bucket"},
		{"bucket name", Props{BucketName: "x"}, "bucket:"},
		{"alarm topic", Props{AlarmTopicARN: "ops-alarms"}, "not an ARN"},
		{"allow-list comma", Props{HTTPAllow: []string{"a.com,b.com"}}, "http allow-list"},
		{"loopback allowed", Props{HTTPAllow: []string{"api.example.com", "loopback"}}, `http allow-list entry "loopback" admits the worker's own loopback addresses`},
		{"loopback CIDR", Props{HTTPAllow: []string{"127.0.0.0/8"}}, `http allow-list entry "127.0.0.0/8" covers 127.0.0.0/8`},
		{"runtime API address", Props{HTTPAllow: []string{"127.0.0.1:9001"}}, `http allow-list entry "127.0.0.1:9001" covers 127.0.0.0/8`},
		{"IPv6 loopback", Props{HTTPAllow: []string{"[::1]"}}, `http allow-list entry "[::1]" covers ::1/128`},
		{"every IPv4 address", Props{HTTPAllow: []string{"0.0.0.0/0"}}, `http allow-list entry "0.0.0.0/0" covers 127.0.0.0/8`},
		{"metadata address", Props{HTTPAllow: []string{"169.254.169.254"}}, `http allow-list entry "169.254.169.254" covers 169.254.0.0/16`},
		{"lambda function", Props{LambdaFunctions: []string{"etl,train"}}, `lambda function "etl,train"`},
		{"qualified function ARN", Props{LambdaFunctions: []string{"arn:aws:lambda:us-east-1:1:function:f:live"}}, "unqualified function ARN"},
		{"callback queue URL", Props{CallbackQueues: []string{"https://sqs.us-east-1.amazonaws.com/1/q"}}, "want an SQS queue ARN"},
		{"callback topic", Props{CallbackTopics: []string{"arn:aws:sqs:us-east-1:1:q"}}, "want an SNS topic ARN"},
		{"ecs cluster", Props{ECS: ECSSettings{Cluster: "data", Subnets: []string{"subnet-1"}}}, "want a cluster ARN"},
		{"ecs subnets", Props{ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c"}}, "at least one subnet"},
		{"ecs subnet id", Props{ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"10.0.0.0/24"}}}, "want a subnet id"},
		{"ecs image without a registry", Props{ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"subnet-1"},
			Images: []string{"docker.io/library/busybox", "python"}}}, `image allow-list entry "python": name the registry`},
		{"ecs image with a tag", Props{ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"subnet-1"},
			Images: []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl:latest"}}}, `"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl:latest": a tag can be moved`},
		{"ecs image with a comma", Props{ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"subnet-1"},
			Images: []string{"docker.io/library/a,docker.io/library/b"}}}, "an entry has no commas"},
		{"ecs images without a cluster", Props{ECS: ECSSettings{Images: []string{"docker.io/library/busybox"}}}, "want a cluster ARN"},
		{"batch queue", Props{BatchJobQueues: []string{"etl"}}, "want a job queue ARN"},
		{"batch definition", Props{BatchJobDefinitions: []string{"etl:3"}}, "want a job definition name"},
		{"batch gpu queue", Props{BatchGPUJobQueue: "gpu", ECS: ECSSettings{Cluster: "arn:aws:ecs:us-east-1:1:cluster/c", Subnets: []string{"subnet-1"}}},
			`batch GPU job queue "gpu": want a job queue ARN`},
		{"batch gpu queue without ECS", Props{BatchGPUJobQueue: "arn:aws:batch:us-east-1:1:job-queue/gpu"}, "batch GPU job queue: needs the ECS settings"},
		{"missing binaries", Props{AssetDir: "testdata/no-such-dir"}, "worker: no testdata/no-such-dir/worker/bootstrap (run make build first)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.props
			if p.AssetDir == "" {
				p.AssetDir = assetsFor(t)
			}
			_, err := p.resolve()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("resolve() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewStackRejectsBadPropsBeforeBuilding(t *testing.T) {
	app := awscdk.NewApp(nil)
	st, err := NewStack(app, "Bad", Props{Stage: "Bad Stage"})
	if err == nil || st != nil {
		t.Fatalf("NewStack = %v, %v; want an error", st, err)
	}
	if n := len(*app.Node().Children()); n != 0 {
		t.Errorf("the app has %d children after a rejected NewStack", n)
	}
}

// TestSynthRefusesLoopbackHTTPAllow goes the way `cdk synth -c
// httpAllow=...` goes: context, then NewStack, which builds nothing.
func TestSynthRefusesLoopbackHTTPAllow(t *testing.T) {
	assets := assetsFor(t)
	for _, allow := range []string{"api.example.com,loopback", "api.example.com, 127.0.0.1:9001", "[::1]:9001"} {
		p, err := PropsFromContext(getter(map[string]any{CtxHTTPAllow: allow, CtxAssetDir: assets}))
		if err != nil {
			t.Fatal(err)
		}
		app := awscdk.NewApp(nil)
		st, err := NewStack(app, "Loopback", p)
		bad := strings.TrimSpace(allow[strings.LastIndex(allow, ",")+1:])
		if err == nil || st != nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("httpAllow=%s: NewStack = %v, %v; want an error naming %q", allow, st, err, bad)
		}
		if n := len(*app.Node().Children()); n != 0 {
			t.Errorf("httpAllow=%s: the app has %d children", allow, n)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// assetsFor makes a test's asset directory with stand-in binaries.
func assetsFor(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, h := range Handlers() {
		if err := os.MkdirAll(filepath.Join(dir, h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h, "bootstrap"), []byte("stand-in"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolveDefaultAssetDir(t *testing.T) {
	// Tests run in infra/, where build/lambda does not exist: the default
	// shows in the error.
	_, err := Props{}.resolve()
	if err == nil || !strings.Contains(err.Error(), "no "+DefaultAssetDir+"/api/bootstrap") {
		t.Fatalf("resolve() = %v, want a missing %s/api/bootstrap", err, DefaultAssetDir)
	}
}
