package infra

import (
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/steps/batchstep"
	"github.com/maestro-serverless/maestro/steps/ecsstep"
)

// Jobs holds what ECS and Batch steps need beside the worker.
type Jobs struct {
	// ECSLogs receives the logs of the task definitions the worker
	// registers; ExecutionRole pulls their images and writes those logs.
	// Both nil without ECS settings.
	ECSLogs       awslogs.LogGroup
	ExecutionRole awsiam.Role
	// NotebookRole is the task role of Notebook steps' tasks: it may write
	// the executed notebooks under the bucket's notebook prefix, and read
	// input notebooks from the stack's bucket and the attached ones. Nil
	// without ECS settings.
	NotebookRole awsiam.Role
	// ECSRule and BatchRule send the state changes of the stack's tasks
	// and jobs to the work queue (nil when not configured).
	ECSRule, BatchRule awsevents.Rule
}

// ecrRepositoryARNs are the ARNs of the ECR repositories on the image
// allow-list (see images.AllowList.ECR), in the stack's partition: a
// registry's images cannot be pulled across partitions.
func ecrRepositoryARNs(stack awscdk.Stack, s settings) []*string {
	list, _ := images.ParseAllowList(s.ECS.Images) // checked by resolve
	var arns []*string
	for _, r := range list.ECR() {
		for _, name := range r.Names {
			arns = append(arns, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ecr"), Region: jsii.String(r.Region),
				Account: jsii.String(r.Account), Resource: jsii.String("repository"), ResourceName: jsii.String(name)}))
		}
	}
	return arns
}

// jobEventInput is what the rules send: the event wrapped as a job_event
// work message.
func jobEventInput() awsevents.RuleTargetInput {
	return awsevents.RuleTargetInput_FromObject(map[string]any{"kind": "job_event", "job_event": awsevents.EventField_FromPath(jsii.String("$"))})
}

// newJobs creates the ECS log group and execution role, the EventBridge
// rules that route ECS task and Batch job state changes to the work queue,
// and the worker's grants and environment for ECS and Batch steps.
func newJobs(scope constructs.Construct, s settings, st *Stack, worker *Function) *Jobs {
	j := &Jobs{}
	stack := awscdk.Stack_Of(scope)
	family := s.name("task")
	if e := s.ECS; e.Cluster != "" {
		j.ECSLogs = awslogs.NewLogGroup(scope, jsii.String("EcsTaskLogs"), &awslogs.LogGroupProps{
			LogGroupName:  jsii.String("/maestro/" + s.Stage + "/ecs"),
			Retention:     logRetention(s.LogRetentionDays),
			RemovalPolicy: s.removal(),
		})
		j.ExecutionRole = awsiam.NewRole(scope, jsii.String("EcsExecutionRole"), &awsiam.RoleProps{
			AssumedBy:   awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
			Description: jsii.String("Pulls the images of " + family + "-* task definitions and writes their logs"),
		})
		j.ExecutionRole.AddToPrincipalPolicy(allow([]string{"logs:CreateLogStream", "logs:PutLogEvents"}, j.ECSLogs.LogGroupArn()))
		// The role pulls from the ECR repositories on the image allow-list
		// only; other registries' images (ECR Public, Docker Hub) need no
		// IAM permission.
		if repos := ecrRepositoryARNs(stack, s); len(repos) > 0 {
			j.ExecutionRole.AddToPrincipalPolicy(allow([]string{"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"}, repos...))
			j.ExecutionRole.AddToPrincipalPolicy(allow([]string{"ecr:GetAuthorizationToken"}, jsii.String("*")))
		}

		clusterName := e.Cluster[strings.LastIndex(e.Cluster, "/")+1:]
		onCluster := &map[string]any{"ArnEquals": map[string]any{"ecs:cluster": e.Cluster}}
		defs := []*string{stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ecs"), Resource: jsii.String("task-definition"),
			ResourceName: jsii.String(family + "-*:*")})}
		for _, f := range e.TaskDefinitions {
			defs = append(defs, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ecs"), Resource: jsii.String("task-definition"),
				ResourceName: jsii.String(f + ":*")}))
		}
		worker.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("ecs:RunTask"), Resources: &defs, Conditions: onCluster,
		}))
		worker.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("ecs:StopTask"), Conditions: onCluster,
			Resources: &[]*string{stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ecs"), Resource: jsii.String("task"),
				ResourceName: jsii.String(clusterName + "/*")})},
		}))
		// Neither supports resource-level permissions.
		worker.Role.AddToPrincipalPolicy(allow([]string{"ecs:DescribeTaskDefinition", "ecs:RegisterTaskDefinition"}, jsii.String("*")))
		// With teams, tasks run with their team's task role only (see
		// package teamrights): the stack's task role and the notebook role
		// are never passed.
		teams := len(s.Access.Teams) > 0
		passed := []*string{j.ExecutionRole.RoleArn()}
		switch {
		case teams:
			passed = append(passed, *jsii.Strings(s.Access.teamTaskRoles()...)...)
		case e.TaskRoleARN != "":
			passed = append(passed, jsii.String(e.TaskRoleARN))
		}
		passRole(worker.Role, "ecs-tasks.amazonaws.com", passed...)
		worker.Role.AddToPrincipalPolicy(allow([]string{"logs:GetLogEvents"}, jsii.String(*j.ECSLogs.LogGroupArn()+":log-stream:*")))

		// Notebook steps run papermill in tasks with a role of their own:
		// it writes only under the notebook prefix.
		j.NotebookRole = awsiam.NewRole(scope, jsii.String("NotebookTaskRole"), &awsiam.RoleProps{
			AssumedBy:   awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
			Description: jsii.String("Notebook steps' tasks: write executed notebooks under " + ecsstep.DefaultNotebookPrefix + ", read input notebooks"),
		})
		j.NotebookRole.AddToPrincipalPolicy(allow([]string{"s3:PutObject"}, st.Bucket.ArnForObjects(jsii.String(ecsstep.DefaultNotebookPrefix+"*"))))
		inputs := []*string{st.Bucket.ArnForObjects(jsii.String("*"))}
		for _, b := range s.AttachBuckets {
			inputs = append(inputs, jsii.String("arn:"+*awscdk.Aws_PARTITION()+":s3:::"+b+"/*"))
		}
		j.NotebookRole.AddToPrincipalPolicy(allow([]string{"s3:GetObject"}, inputs...))
		if !teams {
			passRole(worker.Role, "ecs-tasks.amazonaws.com", j.NotebookRole.RoleArn())
		}

		env := map[string]string{
			wiring.EnvECSCluster: e.Cluster, wiring.EnvECSSubnets: strings.Join(e.Subnets, ","),
			wiring.EnvECSAssignPublicIP: strconv.FormatBool(e.AssignPublicIP), wiring.EnvECSExecutionRoleARN: *j.ExecutionRole.RoleArn(),
			wiring.EnvECSLogGroup: *j.ECSLogs.LogGroupName(), wiring.EnvECSFamily: family,
			wiring.EnvNotebookBucket: *st.Bucket.BucketName(), wiring.EnvNotebookPrefix: ecsstep.DefaultNotebookPrefix,
			wiring.EnvNotebookTaskRoleARN: *j.NotebookRole.RoleArn(),
		}
		if len(e.SecurityGroups) > 0 {
			env[wiring.EnvECSSecurityGroups] = strings.Join(e.SecurityGroups, ",")
		}
		if e.TaskRoleARN != "" {
			env[wiring.EnvECSTaskRoleARN] = e.TaskRoleARN
		}
		if len(e.TaskDefinitions) > 0 {
			env[wiring.EnvECSTaskDefinitions] = strings.Join(e.TaskDefinitions, ",")
		}
		if len(e.Images) > 0 {
			env[wiring.EnvECSImages] = strings.Join(e.Images, ",")
		}
		for k, v := range env {
			worker.Function.AddEnvironment(jsii.String(k), jsii.String(v), nil)
		}
		j.ECSRule = awsevents.NewRule(scope, jsii.String("EcsTaskStoppedRule"), &awsevents.RuleProps{
			RuleName:    jsii.String(s.name("ecs-task-stopped")),
			Description: jsii.String("Stopped tasks of " + family + " steps to the work queue"),
			EventPattern: &awsevents.EventPattern{
				Source: jsii.Strings("aws.ecs"), DetailType: jsii.Strings("ECS Task State Change"),
				Detail: &map[string]any{"lastStatus": []string{"STOPPED"}, "clusterArn": []string{e.Cluster}, "startedBy": []string{family}},
			},
		})
		j.ECSRule.AddTarget(awseventstargets.NewSqsQueue(st.Queues.Work, &awseventstargets.SqsQueueProps{Message: jobEventInput()}))
	}
	if len(s.BatchJobQueues) > 0 || s.BatchGPUJobQueue != "" {
		var arns []*string
		for _, q := range s.BatchJobQueues {
			arns = append(arns, jsii.String(q))
		}
		for _, d := range s.BatchJobDefinitions {
			for _, name := range []string{d, d + ":*"} {
				arns = append(arns, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("batch"), Resource: jsii.String("job-definition"),
					ResourceName: jsii.String(name)}))
			}
		}
		queues := s.BatchJobQueues
		if q := s.BatchGPUJobQueue; q != "" {
			queues = append(slices.Clone(queues), q)
			gpuDefs := stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("batch"), Resource: jsii.String("job-definition"),
				ResourceName: jsii.String(family + "-gpu-*")})
			arns = append(arns, jsii.String(q), gpuDefs)
			// GPU steps run in job definitions the worker registers, named
			// after the stage's task family; DescribeJobDefinitions has no
			// resource-level permissions.
			worker.Role.AddToPrincipalPolicy(allow([]string{"batch:RegisterJobDefinition"}, gpuDefs))
			worker.Role.AddToPrincipalPolicy(allow([]string{"batch:DescribeJobDefinitions"}, jsii.String("*")))
			// GPU jobs run with the stack's task role, or with teams their
			// team's task role.
			switch {
			case len(s.Access.Teams) > 0:
				passRole(worker.Role, "batch.amazonaws.com", *jsii.Strings(s.Access.teamTaskRoles()...)...)
			case s.ECS.TaskRoleARN != "":
				passRole(worker.Role, "batch.amazonaws.com", jsii.String(s.ECS.TaskRoleARN))
			}
			worker.Function.AddEnvironment(jsii.String(wiring.EnvBatchGPUJobQueue), jsii.String(q), nil)
		} else if len(s.Access.Teams) > 0 && len(s.BatchJobQueues) > 0 {
			// With teams, the worker reads a Batch step's job definition
			// to check its role (SubmitJob cannot override it; see
			// batchstep's rights.go). No role is passed.
			worker.Role.AddToPrincipalPolicy(allow([]string{"batch:DescribeJobDefinitions"}, jsii.String("*")))
		}
		worker.Role.AddToPrincipalPolicy(allow([]string{"batch:SubmitJob"}, arns...))
		// Job ids are made by Batch: a job's ARN cannot be known before.
		worker.Role.AddToPrincipalPolicy(allow([]string{"batch:TerminateJob"}, stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("batch"), Resource: jsii.String("job"), ResourceName: jsii.String("*")})))
		worker.Role.AddToPrincipalPolicy(allow([]string{"logs:GetLogEvents"}, stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("logs"), Resource: jsii.String("log-group"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
			ResourceName: jsii.String(batchstep.DefaultLogGroup + ":log-stream:*")})))
		if len(s.BatchJobQueues) > 0 {
			worker.Function.AddEnvironment(jsii.String(wiring.EnvBatchJobQueues), jsii.String(strings.Join(s.BatchJobQueues, ",")), nil)
		}
		if len(s.BatchJobDefinitions) > 0 {
			worker.Function.AddEnvironment(jsii.String(wiring.EnvBatchJobDefinitions), jsii.String(strings.Join(s.BatchJobDefinitions, ",")), nil)
		}
		j.BatchRule = awsevents.NewRule(scope, jsii.String("BatchJobEndedRule"), &awsevents.RuleProps{
			RuleName:    jsii.String(s.name("batch-job-ended")),
			Description: jsii.String("Ended jobs of the Batch step queues to the work queue"),
			EventPattern: &awsevents.EventPattern{
				Source: jsii.Strings("aws.batch"), DetailType: jsii.Strings("Batch Job State Change"),
				Detail: &map[string]any{"status": []string{"SUCCEEDED", "FAILED"}, "jobQueue": queues},
			},
		})
		j.BatchRule.AddTarget(awseventstargets.NewSqsQueue(st.Queues.Work, &awseventstargets.SqsQueueProps{Message: jobEventInput()}))
	}
	return j
}
