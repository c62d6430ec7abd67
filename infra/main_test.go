package infra

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/signals"
)

// emulator is the AWS emulator the shape-agreement test provisions into.
var emulator *localstack.Emulator

// TestMain finds or starts an emulator (the shape-agreement test needs one;
// like every integration test of the project it fails without), runs the
// tests and stops jsii's node process. (jsii starts node while packages
// initialize, so JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION only takes
// effect from the environment; the Makefile exports it.)
func TestMain(m *testing.M) {
	code := localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e })
	jsii.Close()
	os.Exit(code)
}

// Stages of the two stacks every test shares: a non-dev stage with every
// option set, and the default dev stage with the optional parts turned off.
const (
	fullStage = "infratest"
	devStage  = DefaultStage
)

// Settings of the full stack that tests check.
var (
	testAlarmTopic = "arn:aws:sns:us-east-1:123456789012:ops-alarms"
	testAttached   = []string{"existing-signals-bucket"}
	testHTTPAllow  = []string{"api.example.com", "*.example.org"}
	testFunctions  = []string{"etl-loader", "arn:aws:lambda:us-east-1:123456789012:function:train"}
	testCBQueues   = []string{"arn:aws:sqs:us-east-1:123456789012:jobs"}
	testCBTopics   = []string{"arn:aws:sns:us-east-1:123456789012:jobs"}
	testECS        = ECSSettings{Cluster: "arn:aws:ecs:us-east-1:123456789012:cluster/data", Subnets: []string{"subnet-0a1", "subnet-0b2"},
		SecurityGroups: []string{"sg-0c3"}, TaskRoleARN: "arn:aws:iam::123456789012:role/etl-task", TaskDefinitions: []string{"spark-submit"},
		Images: []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/", "123456789012.dkr.ecr.us-east-1.amazonaws.com/tools/spark",
			"210987654321.dkr.ecr.eu-west-1.amazonaws.com/shared/base@sha256:" + strings.Repeat("c", 64), "public.ecr.aws/docker/library/python"}}
	// testPublicImages are the images of a third stack with ECS steps
	// whose allow-list names no ECR repository.
	testPublicImages = []string{"public.ecr.aws/docker/library/python", "docker.io/library/busybox"}
	testBatchQueues  = []string{"arn:aws:batch:us-east-1:123456789012:job-queue/etl"}
	testBatchDefs    = []string{"etl-job"}
	testGPUQueue     = "arn:aws:batch:us-east-1:123456789012:job-queue/gpu"
	testRules        = []signals.Rule{{Bucket: "existing-signals-bucket", Prefix: "exports/", Name: "warehouse/exports"}}
)

// synthesized is one synthesized stack.
type synthesized struct {
	stack    *Stack
	template assertions.Template
	// json is the template as plain JSON values.
	json map[string]any
	// nagErrors and nagWarnings are cdk-nag's unsuppressed findings.
	nagErrors, nagWarnings []*cxapi.SynthesisMessage
}

// synthesis is the shared result: the stacks come from one App and one
// synthesis, so the package's tests pay for it once. ecsPublic is a third
// stack with ECS steps whose image allow-list names no ECR repository.
type synthesis struct {
	full, dev, ecsPublic *synthesized
	// teams is the full stack's settings with team rights and the other
	// access settings (testAccess).
	teams *synthesized
	err   error
}

var (
	synthOnce   sync.Once
	synthResult synthesis
)

// synth returns the shared synthesis, failing the test when it failed.
func synth(t *testing.T) (full, dev *synthesized) {
	t.Helper()
	synthOnce.Do(func() { synthResult = doSynth() })
	if synthResult.err != nil {
		t.Fatalf("synthesis: %v", synthResult.err)
	}
	return synthResult.full, synthResult.dev
}

// synthECSPublic returns the shared synthesis's third stack (see
// synthesis).
func synthECSPublic(t *testing.T) *synthesized {
	t.Helper()
	synth(t)
	return synthResult.ecsPublic
}

// cdkContext is the "context" of the repository's cdk.json, so the tests
// synthesize with the feature flags `cdk synth` uses.
func cdkContext() (map[string]any, error) {
	raw, err := os.ReadFile(filepath.Join("..", "cdk.json"))
	if err != nil {
		return nil, fmt.Errorf("read cdk.json: %w", err)
	}
	var doc struct {
		App     string         `json:"app"`
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse cdk.json: %w", err)
	}
	if doc.App != "go run ./infra/app" {
		return nil, fmt.Errorf("cdk.json app is %q, want the infra/app command", doc.App)
	}
	delete(doc.Context, CtxStage)
	return doc.Context, nil
}

// standInAssets makes a directory with a stand-in bootstrap per handler:
// synthesis only packages the files.
func standInAssets() (string, error) {
	dir, err := os.MkdirTemp("", "maestro-infra-assets-")
	if err != nil {
		return "", err
	}
	for _, h := range Handlers() {
		if err := os.MkdirAll(filepath.Join(dir, h), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, h, "bootstrap"), []byte("stand-in for "+h), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func doSynth() (res synthesis) {
	defer func() {
		if r := recover(); r != nil { // jsii reports failures as panics
			res = synthesis{err: fmt.Errorf("panic: %v", r)}
		}
	}()
	ctx, err := cdkContext()
	if err != nil {
		return synthesis{err: err}
	}
	assets, err := standInAssets()
	if err != nil {
		return synthesis{err: err}
	}
	defer os.RemoveAll(assets)
	out, err := os.MkdirTemp("", "maestro-infra-cdkout-")
	if err != nil {
		return synthesis{err: err}
	}
	defer os.RemoveAll(out)

	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(out), Context: &ctx})
	fullProps := Props{
		Stage:               fullStage,
		AssetDir:            assets,
		HTTPAllow:           testHTTPAllow,
		LambdaFunctions:     testFunctions,
		CallbackQueues:      testCBQueues,
		CallbackTopics:      testCBTopics,
		ECS:                 testECS,
		BatchJobQueues:      testBatchQueues,
		BatchJobDefinitions: testBatchDefs,
		BatchGPUJobQueue:    testGPUQueue,
		AttachBuckets:       testAttached,
		SignalRules:         testRules,
		AlarmTopicARN:       testAlarmTopic,
		Functions: map[string]FunctionSettings{
			HandlerWorker: {MemoryMB: 1024, ReservedConcurrency: 20},
		},
		API:                 APISettings{RateLimit: 10, BurstLimit: 20},
		LogRetentionDays:    90,
		MaestroChangeEvents: true,
	}
	full, err := NewStack(app, "Full", fullProps)
	if err != nil {
		return synthesis{err: err}
	}
	teamsProps := fullProps
	teamsProps.Stage, teamsProps.Access = teamsStage, testAccess
	teams, err := NewStack(app, "Teams", teamsProps)
	if err != nil {
		return synthesis{err: err}
	}
	off := false
	dev, err := NewStack(app, "Dev", Props{
		Stage:                 devStage,
		AssetDir:              assets,
		Monitoring:            &off,
		APIGatewayAccountRole: &off,
	})
	if err != nil {
		return synthesis{err: err}
	}
	ecsPublic, err := NewStack(app, "EcsPublic", Props{
		Stage:                 "ecspublic",
		AssetDir:              assets,
		ECS:                   ECSSettings{Cluster: testECS.Cluster, Subnets: testECS.Subnets, Images: testPublicImages},
		Monitoring:            &off,
		APIGatewayAccountRole: &off,
	})
	if err != nil {
		return synthesis{err: err}
	}
	ApplyChecks(app, false)
	app.Synth(nil)
	return synthesis{full: inspect(full), dev: inspect(dev), ecsPublic: inspect(ecsPublic), teams: inspect(teams)}
}

func inspect(st *Stack) *synthesized {
	tmpl := assertions.Template_FromStack(st.Stack, nil)
	ann := assertions.Annotations_FromStack(st.Stack)
	nag := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-"))
	s := &synthesized{stack: st, template: tmpl, json: *tmpl.ToJSON()}
	s.nagErrors = *ann.FindError(jsii.String("*"), nag)
	s.nagWarnings = *ann.FindWarning(jsii.String("*"), nag)
	return s
}

// check runs an assertions call, turning its panic into a test error.
func check(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	f()
}

// resourcesOf returns the template's resources of one type by logical id.
func (s *synthesized) resourcesOf(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range s.json["Resources"].(map[string]any) {
		res := r.(map[string]any)
		if res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

// props returns a resource's Properties.
func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// logicalID is the template id of a construct's CloudFormation resource:
// the construct itself when it is one, else its default child.
func (s *synthesized) logicalID(t *testing.T, c constructs.IConstruct) string {
	t.Helper()
	el, ok := c.(awscdk.CfnElement)
	if !ok {
		el, ok = c.Node().DefaultChild().(awscdk.CfnElement)
	}
	if !ok {
		t.Fatalf("%s has no CloudFormation resource", *c.Node().Path())
	}
	return *s.stack.GetLogicalId(el)
}
