package batchstep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

// emulator holds the Batch job definitions and queue of the team rights
// test.
var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

// nilLogs stands for CloudWatch Logs, which Dispatch never reads.
type nilLogs struct{}

func (nilLogs) GetLogEvents(context.Context, *cloudwatchlogs.GetLogEventsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetLogEventsOutput, error) {
	return nil, errors.New("not read by Dispatch")
}

// TestDispatchWithTeamRights submits Batch steps on the emulator: with
// team rights, only job definitions whose role is the team's job role are
// submitted, pinned to the revision checked.
func TestDispatchWithTeamRights(t *testing.T) {
	const (
		dataJobs  = "arn:aws:iam::123456789012:role/data-jobs"
		otherJobs = "arn:aws:iam::123456789012:role/ml-jobs"
	)
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	b := batch.NewFromConfig(cfg)
	suffix := randomSuffix(t)
	queue := testQueue(t, cfg, b, suffix)
	register := func(name, role string) string {
		t.Helper()
		props := &types.ContainerProperties{Image: aws.String("etl:1"), Vcpus: aws.Int32(1), Memory: aws.Int32(512)}
		if role != "" {
			props.JobRoleArn = aws.String(role)
		}
		out, err := b.RegisterJobDefinition(ctx, &batch.RegisterJobDefinitionInput{JobDefinitionName: aws.String(name + suffix),
			Type: types.JobDefinitionTypeContainer, ContainerProperties: props})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.JobDefinitionArn)
	}
	dataDef := register("etl-data-", dataJobs)
	register("etl-ml-", otherJobs)
	register("etl-none-", "")
	movedFrom := register("etl-moving-", dataJobs)
	register("etl-moving-", otherJobs) // its latest revision runs with another role
	data := teamrights.Scope{Enforced: true, Team: "data", Rights: teamrights.Rights{JobRoleARN: dataJobs}}

	for _, tc := range []struct {
		name       string
		definition string
		scope      teamrights.Scope
		err        error
		submitted  string // the definition submitted; "" when refused
		want       string // in the refusal
	}{
		{"no team rights: as named", "etl-ml-" + suffix, teamrights.Scope{}, nil, "etl-ml-" + suffix, ""},
		{"the team's role: its latest revision, pinned", "etl-data-" + suffix, data, nil, dataDef, ""},
		{"a pinned revision with the team's role", movedFrom[strings.LastIndex(movedFrom, "/")+1:], data, nil, movedFrom, ""},
		{"another team's role", "etl-ml-" + suffix, data, nil, "", `runs with role ` + otherJobs + `, not team "data"'s job role ` + dataJobs},
		{"no role at all", "etl-none-" + suffix, data, nil, "", "runs with role none"},
		{"the latest revision changed role", "etl-moving-" + suffix, data, nil, "", "runs with role " + otherJobs},
		{"a team without a job role", "etl-data-" + suffix, teamrights.Scope{Enforced: true, Team: "ml"}, nil, "",
			`team "ml" has no Batch job role (CDK context teams.ml.jobRoleArn)`},
		{"owners without rights", "etl-data-" + suffix, teamrights.Scope{}, teamrights.Refused("owners name no team"), "", "owners name no team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := definitionName(tc.definition)
			r, err := New(Config{Batch: &recording{Client: b}, Logs: nilLogs{}, AllowQueues: []string{queue}, AllowDefinitions: []string{def},
				Rights: func(context.Context, orchestrator.StepWork) (teamrights.Scope, error) { return tc.scope, tc.err }})
			if err != nil {
				t.Fatal(err)
			}
			m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "job", Attempt: 1},
				Params: engine.Values{ParamBatch: map[string]any{"job_queue": queue, "job_definition": tc.definition}}}
			h, end, err := r.Dispatch(ctx, m, "")
			if err != nil {
				t.Fatal(err)
			}
			rec := r.cfg.Batch.(*recording)
			if tc.submitted == "" {
				if end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, tc.want) || len(rec.submitted) != 0 {
					t.Errorf("end %+v, submitted %v; want a fatal error saying %q and nothing submitted", end, rec.submitted, tc.want)
				}
				return
			}
			if end != nil || h.Job == "" || len(rec.submitted) != 1 || rec.submitted[0] != tc.submitted {
				t.Errorf("end %+v, handover %+v, submitted %v; want %s submitted", end, h, rec.submitted, tc.submitted)
			}
		})
	}
}

// recording is the emulator's Batch client, noting the job definitions
// submitted.
type recording struct {
	*batch.Client
	submitted []string
}

func (r *recording) SubmitJob(ctx context.Context, in *batch.SubmitJobInput, opts ...func(*batch.Options)) (*batch.SubmitJobOutput, error) {
	r.submitted = append(r.submitted, aws.ToString(in.JobDefinition))
	return r.Client.SubmitJob(ctx, in, opts...)
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// testQueue creates a job queue on an unmanaged compute environment.
func testQueue(t *testing.T, cfg aws.Config, b *batch.Client, suffix string) string {
	t.Helper()
	ctx := context.Background()
	role, err := iam.NewFromConfig(cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("batch-rights-" + suffix),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := b.CreateComputeEnvironment(ctx, &batch.CreateComputeEnvironmentInput{ComputeEnvironmentName: aws.String("ce-rights-" + suffix),
		Type: types.CETypeUnmanaged, State: types.CEStateEnabled, ServiceRole: role.Role.Arn})
	if err != nil {
		t.Fatal(err)
	}
	queue := "rights-" + suffix
	if _, err := b.CreateJobQueue(ctx, &batch.CreateJobQueueInput{JobQueueName: aws.String(queue), Priority: aws.Int32(1), State: types.JQStateEnabled,
		ComputeEnvironmentOrder: []types.ComputeEnvironmentOrder{{Order: aws.Int32(1), ComputeEnvironment: ce.ComputeEnvironmentArn}}}); err != nil {
		t.Fatal(err)
	}
	return queue
}
