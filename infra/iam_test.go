package infra

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
)

// wildcardResourceActions are the only actions that may be granted on
// Resource "*": X-Ray's and Scheduler's ListSchedules, which have no
// resource-level permissions.
func wildcardResourceActions() []string {
	return []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords", "scheduler:ListSchedules",
		"ecs:DescribeTaskDefinition", "ecs:RegisterTaskDefinition", "ecr:GetAuthorizationToken", "batch:DescribeJobDefinitions"}
}

// allowedManagedPolicies are the AWS managed policies roles may carry,
// each a documented exception (see nag.go).
func allowedManagedPolicies() []string {
	return []string{
		"arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs",
		"arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
	}
}

// roleGrants collects the grants of every role by logical id, from the
// stack's AWS::IAM::Policy resources and the roles' inline policies.
func roleGrants(t *testing.T, s *synthesized) map[string][]grant {
	t.Helper()
	out := map[string][]grant{}
	for id, r := range s.resourcesOf("AWS::IAM::Role") {
		out[id] = nil
		inline, _ := props(r)["Policies"].([]any)
		for _, p := range inline {
			g, err := grants(p.(map[string]any)["PolicyDocument"].(map[string]any))
			if err != nil {
				t.Fatalf("role %s: %v", id, err)
			}
			out[id] = append(out[id], g...)
		}
	}
	for id, r := range s.resourcesOf("AWS::IAM::Policy") {
		g, err := grants(props(r)["PolicyDocument"].(map[string]any))
		if err != nil {
			t.Fatalf("policy %s: %v", id, err)
		}
		roles := strs(props(r)["Roles"])
		if len(roles) != 1 {
			t.Fatalf("policy %s is attached to %v, want one role", id, roles)
		}
		role := strings.TrimSuffix(strings.TrimPrefix(roles[0], "${"), "}")
		out[role] = append(out[role], g...)
	}
	for id := range out {
		slices.SortFunc(out[id], func(a, b grant) int {
			return strings.Compare(a.Action+a.Resource+a.Condition, b.Action+b.Resource+b.Condition)
		})
	}
	return out
}

func TestNoWildcardPermissions(t *testing.T) {
	full, dev := synth(t)
	for _, s := range []*synthesized{full, dev} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			policies := 0
			for role, gs := range roleGrants(t, s) {
				for _, g := range gs {
					policies++
					if strings.Contains(g.Action, "*") {
						t.Errorf("role %s: wildcard action %q on %s", role, g.Action, g.Resource)
					}
					if g.Resource == "*" && !slices.Contains(wildcardResourceActions(), g.Action) {
						t.Errorf("role %s: %s on Resource \"*\" (only X-Ray may have it)", role, g.Action)
					}
					if g.Resource == "" {
						t.Errorf("role %s: %s has no resource", role, g.Action)
					}
				}
			}
			if policies == 0 {
				t.Fatal("no IAM grants found: the walk is broken")
			}
			for id, r := range s.resourcesOf("AWS::IAM::Role") {
				for _, arn := range strs(props(r)["ManagedPolicyArns"]) {
					if !slices.Contains(allowedManagedPolicies(), arn) {
						t.Errorf("role %s has managed policy %s", id, arn)
					}
				}
			}
			for id, r := range s.resourcesOf("AWS::IAM::ManagedPolicy") {
				t.Errorf("unexpected customer managed policy %s: %v", id, props(r))
			}
		})
	}
}

func TestFunctionRolesGrantExactly(t *testing.T) {
	full, _ := synth(t)
	s := full
	st := s.stack
	byRole := roleGrants(t, s)
	ref := func(id string) string { return "${" + id + ".Arn}" }
	table := ref(s.logicalID(t, st.Table))
	decision := ref(s.logicalID(t, st.Queues.Decision))
	work := ref(s.logicalID(t, st.Queues.Work))
	ingest := ref(s.logicalID(t, st.Queues.SignalIngest))
	ingestDLQ := ref(s.logicalID(t, st.Queues.SignalIngestDLQ))
	schedulerRole := ref(s.logicalID(t, st.SchedulerRole))
	eventsTopic := "${" + s.logicalID(t, st.EventsTopic) + "}" // a topic's Ref is its ARN
	base := func(h string) []grant {
		logs := ref(s.logicalID(t, st.Functions[h].LogGroup))
		return []grant{
			{"logs:CreateLogStream", logs, ""}, {"logs:PutLogEvents", logs, ""},
			{"xray:PutTelemetryRecords", "*", ""}, {"xray:PutTraceSegments", "*", ""},
		}
	}
	on := func(resource string, actions ...string) []grant {
		var out []grant
		for _, a := range actions {
			out = append(out, grant{a, resource, ""})
		}
		return out
	}
	store := []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}
	consume := []string{"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}
	// Committers send the steps they start to the work queue themselves.
	dispatch := on(work, "sqs:SendMessage")
	// The deciding functions read foreach items (items_from) from the
	// signals bucket and the attached one, and from no other.
	items := slices.Concat(on(ref(s.logicalID(t, st.Bucket))+"/*", "s3:GetObject"),
		on("arn:${AWS::Partition}:s3:::"+testAttached[0]+"/*", "s3:GetObject"))
	onCluster := "ArnEquals:ecs:cluster=arn:aws:ecs:us-east-1:123456789012:cluster/data"
	executionRole := ref(s.logicalID(t, st.Jobs.ExecutionRole))
	ecsLogs := ref(s.logicalID(t, st.Jobs.ECSLogs))
	want := map[string][]grant{
		HandlerAPI: slices.Concat(base(HandlerAPI), on(table, store...), on(table, "dynamodb:ConditionCheckItem"), dispatch, items),
		HandlerRouter: slices.Concat(base(HandlerRouter),
			on(table+"/stream/*", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"),
			on(table, "dynamodb:BatchGetItem"),
			on(decision, "sqs:SendMessage"), on(work, "sqs:SendMessage"), on(eventsTopic, "sns:Publish"),
			on("arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/"+st.Spec.SchedulerGroup+"/*", "scheduler:CreateSchedule"),
			on("arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/"+st.Spec.SchedulerGroup+"/wt-*", "scheduler:DeleteSchedule"),
			[]grant{{"iam:PassRole", schedulerRole, "StringEquals:iam:PassedToService=scheduler.amazonaws.com"}}),
		HandlerDecider: slices.Concat(base(HandlerDecider), on(table, store...), on(decision, consume...), dispatch, items),
		HandlerWorker: slices.Concat(base(HandlerWorker), on(table, store...), on(work, consume...),
			on(table+"/index/gsi1", "dynamodb:Query"),
			on("arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/"+st.Spec.SchedulerGroup+"/tt-*",
				"scheduler:CreateSchedule", "scheduler:DeleteSchedule", "scheduler:GetSchedule", "scheduler:UpdateSchedule"),
			on("*", "scheduler:ListSchedules"),
			[]grant{{"iam:PassRole", schedulerRole, "StringEquals:iam:PassedToService=scheduler.amazonaws.com"}}, dispatch, items,
			// Wakes of a run's decider for its steps' ends, and hand-offs.
			on(decision, "sqs:SendMessage"),
			// Lambda and Callback steps: exactly the configured functions
			// (any version or alias), queue and topic.
			on("arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:etl-loader", "lambda:InvokeFunction"),
			on("arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:etl-loader:*", "lambda:InvokeFunction"),
			on("arn:aws:lambda:us-east-1:123456789012:function:train", "lambda:InvokeFunction"),
			on("arn:aws:lambda:us-east-1:123456789012:function:train:*", "lambda:InvokeFunction"),
			on("arn:aws:sqs:us-east-1:123456789012:jobs", "sqs:SendMessage"),
			on("arn:aws:sns:us-east-1:123456789012:jobs", "sns:Publish"),
			// ECS steps: tasks of the stage's own task definitions and the
			// allowed families, on the configured cluster only; the
			// execution role and the task role passed to ECS tasks only.
			[]grant{
				{"ecs:RunTask", "arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task-definition/maestro-infratest-task-*:*", onCluster},
				{"ecs:RunTask", "arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task-definition/spark-submit:*", onCluster},
				{"ecs:StopTask", "arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task/data/*", onCluster},
				{"iam:PassRole", executionRole, "StringEquals:iam:PassedToService=ecs-tasks.amazonaws.com"},
				{"iam:PassRole", "arn:aws:iam::123456789012:role/etl-task", "StringEquals:iam:PassedToService=ecs-tasks.amazonaws.com"},
				{"iam:PassRole", ref(s.logicalID(t, st.Jobs.NotebookRole)), "StringEquals:iam:PassedToService=ecs-tasks.amazonaws.com"},
			},
			on("*", "ecs:DescribeTaskDefinition", "ecs:RegisterTaskDefinition"),
			on(ecsLogs+":log-stream:*", "logs:GetLogEvents"),
			// Batch steps: the allowed queue and definition; jobs by id.
			on("arn:aws:batch:us-east-1:123456789012:job-queue/etl", "batch:SubmitJob"),
			on("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job-definition/etl-job", "batch:SubmitJob"),
			on("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job-definition/etl-job:*", "batch:SubmitJob"),
			on("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job/*", "batch:TerminateJob"),
			// GPU steps: the GPU queue, in definitions of the stage's own
			// that the worker registers, with the task role passed to Batch.
			on("arn:aws:batch:us-east-1:123456789012:job-queue/gpu", "batch:SubmitJob"),
			on("arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job-definition/maestro-infratest-task-gpu-*",
				"batch:RegisterJobDefinition", "batch:SubmitJob"),
			on("*", "batch:DescribeJobDefinitions"),
			[]grant{{"iam:PassRole", "arn:aws:iam::123456789012:role/etl-task", "StringEquals:iam:PassedToService=batch.amazonaws.com"}},
			on("arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/batch/job:log-stream:*", "logs:GetLogEvents")),
		HandlerSignals: slices.Concat(base(HandlerSignals),
			on(table, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"),
			on(ingest, consume...), on(ingestDLQ, "sqs:SendMessage")),
	}
	for _, h := range Handlers() {
		t.Run(h, func(t *testing.T) {
			role := s.logicalID(t, st.Functions[h].Role)
			w := want[h]
			slices.SortFunc(w, func(a, b grant) int {
				return strings.Compare(a.Action+a.Resource+a.Condition, b.Action+b.Resource+b.Condition)
			})
			if got := byRole[role]; !reflect.DeepEqual(got, w) {
				t.Errorf("grants of %s:\n got %v\nwant %v", h, got, w)
			}
			trust := props(s.resourcesOf("AWS::IAM::Role")[role])["AssumeRolePolicyDocument"].(map[string]any)
			if got := render(trust["Statement"]); !strings.Contains(got, "lambda.amazonaws.com") || strings.Count(got, "Service") != 1 {
				t.Errorf("trust policy of %s = %s, want lambda.amazonaws.com only", h, got)
			}
		})
	}
	t.Run("ECS execution role", func(t *testing.T) {
		role := s.logicalID(t, st.Jobs.ExecutionRole)
		// Exactly the ECR repositories on the image allow-list: under etl/,
		// tools/spark and under it, and the pinned shared/base of another
		// account and region; the ECR Public entry needs no permission.
		pull := []string{"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}
		want := slices.Concat(on(ecsLogs, "logs:CreateLogStream", "logs:PutLogEvents"),
			on("arn:${AWS::Partition}:ecr:us-east-1:123456789012:repository/etl/*", pull...),
			on("arn:${AWS::Partition}:ecr:us-east-1:123456789012:repository/tools/spark", pull...),
			on("arn:${AWS::Partition}:ecr:us-east-1:123456789012:repository/tools/spark/*", pull...),
			on("arn:${AWS::Partition}:ecr:eu-west-1:210987654321:repository/shared/base", pull...),
			on("*", "ecr:GetAuthorizationToken"))
		slices.SortFunc(want, func(a, b grant) int {
			return strings.Compare(a.Action+a.Resource+a.Condition, b.Action+b.Resource+b.Condition)
		})
		if got := byRole[role]; !reflect.DeepEqual(got, want) {
			t.Errorf("execution role grants\n got %v\nwant %v", got, want)
		}
		trust := props(s.resourcesOf("AWS::IAM::Role")[role])["AssumeRolePolicyDocument"].(map[string]any)
		if got := render(trust["Statement"]); !strings.Contains(got, "ecs-tasks.amazonaws.com") || strings.Count(got, "Service") != 1 {
			t.Errorf("execution role trust %s, want ecs-tasks.amazonaws.com only", got)
		}
	})
	t.Run("Notebook task role", func(t *testing.T) {
		// Writes only under the notebook prefix; reads input notebooks
		// from the stack's bucket and the attached one.
		role := s.logicalID(t, st.Jobs.NotebookRole)
		bucket := ref(s.logicalID(t, st.Bucket))
		want := slices.Concat(on(bucket+"/maestro-notebooks/*", "s3:PutObject"), on(bucket+"/*", "s3:GetObject"),
			on("arn:${AWS::Partition}:s3:::"+testAttached[0]+"/*", "s3:GetObject"))
		slices.SortFunc(want, func(a, b grant) int {
			return strings.Compare(a.Action+a.Resource+a.Condition, b.Action+b.Resource+b.Condition)
		})
		if got := byRole[role]; !reflect.DeepEqual(got, want) {
			t.Errorf("notebook task role grants\n got %v\nwant %v", got, want)
		}
		trust := props(s.resourcesOf("AWS::IAM::Role")[role])["AssumeRolePolicyDocument"].(map[string]any)
		if got := render(trust["Statement"]); !strings.Contains(got, "ecs-tasks.amazonaws.com") || strings.Count(got, "Service") != 1 {
			t.Errorf("notebook task role trust %s, want ecs-tasks.amazonaws.com only", got)
		}
		env := props(s.resourcesOf("AWS::Lambda::Function")[s.logicalID(t, st.Functions[HandlerWorker].Function)])["Environment"].(map[string]any)["Variables"].(map[string]any)
		if render(env[wiring.EnvNotebookPrefix]) != "maestro-notebooks/" || !strings.Contains(render(env[wiring.EnvNotebookTaskRoleARN]), role) ||
			!strings.Contains(render(env[wiring.EnvNotebookBucket]), s.logicalID(t, st.Bucket)) {
			t.Errorf("worker notebook env: %s %s %s", render(env[wiring.EnvNotebookBucket]), render(env[wiring.EnvNotebookPrefix]), render(env[wiring.EnvNotebookTaskRoleARN]))
		}
	})
	t.Run("ECS execution role without ECR entries", func(t *testing.T) {
		// Only public images: the role may write its logs and pull from no
		// ECR repository, not even get an ECR token.
		p := synthECSPublic(t)
		got := roleGrants(t, p)[p.logicalID(t, p.stack.Jobs.ExecutionRole)]
		want := on("${"+p.logicalID(t, p.stack.Jobs.ECSLogs)+".Arn}", "logs:CreateLogStream", "logs:PutLogEvents")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("execution role grants\n got %v\nwant %v", got, want)
		}
		for _, h := range []string{HandlerAPI, HandlerWorker} {
			env := props(p.resourcesOf("AWS::Lambda::Function")[p.logicalID(t, p.stack.Functions[h].Function)])["Environment"].(map[string]any)["Variables"].(map[string]any)
			if got := render(env[wiring.EnvECSImages]); got != strings.Join(testPublicImages, ",") {
				t.Errorf("%s: %s = %q", h, wiring.EnvECSImages, got)
			}
		}
		if len(p.nagErrors) > 0 || len(p.nagWarnings) > 0 {
			t.Errorf("cdk-nag: %d errors, %d warnings", len(p.nagErrors), len(p.nagWarnings))
		}
	})
	t.Run("scheduler role", func(t *testing.T) {
		role := s.logicalID(t, st.SchedulerRole)
		want := slices.Concat(on(decision, "sqs:SendMessage"), on(work, "sqs:SendMessage"))
		slices.SortFunc(want, func(a, b grant) int { return strings.Compare(a.Resource, b.Resource) })
		got := byRole[role]
		slices.SortFunc(got, func(a, b grant) int { return strings.Compare(a.Resource, b.Resource) })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("scheduler role grants %v, want %v", got, want)
		}
		trust := props(s.resourcesOf("AWS::IAM::Role")[role])["AssumeRolePolicyDocument"].(map[string]any)
		stmts := trust["Statement"].([]any)
		if len(stmts) != 1 {
			t.Fatalf("scheduler trust has %d statements", len(stmts))
		}
		stmt := stmts[0].(map[string]any)
		if got := render(stmt["Principal"].(map[string]any)["Service"]); got != "scheduler.amazonaws.com" {
			t.Errorf("scheduler role principal %s", got)
		}
		group := "${" + s.logicalID(t, st.SchedulerGroup) + ".Arn}"
		if got, want := renderCondition(stmt["Condition"]), "ArnEquals:aws:SourceArn="+group+";StringEquals:aws:SourceAccount=${AWS::AccountId}"; got != want {
			t.Errorf("scheduler trust condition %s, want %s", got, want)
		}
	})
	t.Run("attached bucket notifications", func(t *testing.T) {
		found := 0
		for role, gs := range byRole {
			for _, g := range gs {
				if !strings.HasPrefix(g.Action, "s3:") || g.Action == "s3:GetObject" || role == s.logicalID(t, st.Jobs.NotebookRole) {
					continue // the functions' item reads and the notebook task role are checked above
				}
				found++
				if g.Resource != "arn:${AWS::Partition}:s3:::"+testAttached[0] ||
					(g.Action != "s3:PutBucketNotification" && g.Action != "s3:GetBucketNotification") {
					t.Errorf("role %s: %s on %s", role, g.Action, g.Resource)
				}
			}
		}
		if found != 2 {
			t.Errorf("found %d S3 grants, want Put/GetBucketNotification on the attached bucket", found)
		}
	})
}
