package infra

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/steps/ecsstep"
	"github.com/maestro-serverless/maestro/store"
)

// ApplyChecks adds cdk-nag's AwsSolutions rule pack to scope: synthesis
// then reports every unsuppressed finding as an error or warning
// annotation. NewStack suppresses the findings this design accepts, each
// with its written reason.
func ApplyChecks(scope constructs.IConstruct, verbose bool) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: &verbose}), nil)
}

// Reasons of the accepted cdk-nag findings.
const (
	reasonXRay = "Active tracing: X-Ray's PutTraceSegments and PutTelemetryRecords support no resource-level " +
		"permissions, so AWS requires Resource \"*\" for them (the only wildcard resource of the function roles)."
	reasonStream = "Lambda's stream event source mapping reads the table's stream; the stream ARN carries a label " +
		"that changes whenever the stream is re-created, so the grant names this table's streams (table/<name>/stream/*), " +
		"as AWS documents for stream consumers."
	reasonSchedules = "The router creates one-time schedules whose names are derived at run time from stream record ids; " +
		"the grant is confined to the stage's own schedule group (schedule/<group>/*). It deletes only runs' workflow-timeout " +
		"schedules, named wt-<run hash> at run time (schedule/<group>/wt-*)."
	reasonTriggerSchedules = "The worker keeps the recurring schedules of time triggers, named tt-<workflow hash>-<index> " +
		"at run time; the grant is confined to that prefix in the stage's schedule group. scheduler:ListSchedules " +
		"supports no resource-level permission, so AWS requires Resource \"*\" for it."
	reasonFunctionVersions = "A Lambda step may name a version or alias of a function on the stack's lambdaFunctions " +
		"allow-list (its qualifier); the grant is confined to that function's qualified ARNs (function:<name>:*)."
	reasonTaskDefinitions = "ECS steps run images in task definitions the worker registers as they are first needed, " +
		"named <stage prefix>-task-<hash>; each revision is a new ARN, so RunTask is granted on those families' revisions and the " +
		"configured families' (family:*), on the configured cluster only (condition ecs:cluster). ecs:RegisterTaskDefinition " +
		"and ecs:DescribeTaskDefinition support no resource-level permissions."
	reasonItems = "A foreach step with items_from names its object (s3://bucket/key) at run time; the deciding functions " +
		"may GetObject in the stack's signals bucket and its attached buckets only, and refuse every other bucket themselves."
	reasonNotebooks = "A Notebook step's task writes its executed notebook under the stack bucket's notebook prefix, " +
		"named per workflow, run, step and attempt at run time (PutObject on <bucket>/" + ecsstep.DefaultNotebookPrefix + "*); it reads its input notebook, " +
		"named by the step at run time, from the stack's bucket and the attached buckets only (GetObject)."
	reasonTasks   = "Task ids are made by ECS when a task starts; StopTask is granted on the configured cluster's tasks only."
	reasonJobLogs = "A job's log stream is named after its task or job id, known when it ends; the grant is read-only " +
		"(GetLogEvents) on the one log group the jobs write to."
	reasonExecutionRole = "The execution role pulls the images of the tasks ECS steps run from the ECR repositories " +
		"on the ecsImages allow-list; an entry that admits the repositories under a path is granted on repository/<path>/*. " +
		"ecr:GetAuthorizationToken supports no resource-level permission."
	reasonGPUJobDefinitions = "Kubernetes steps that request GPUs run in Batch job definitions the worker registers as they " +
		"are first needed, one per image and resource shape, named after the stage's task family; DescribeJobDefinitions " +
		"supports no resource-level permissions."
	reasonBatchJobs = "Batch job ids are made by Batch at submission; TerminateJob is granted on the account's jobs of " +
		"this region. SubmitJob is granted on the configured queues and job definitions (any revision) only."
	reasonAPIGatewayRole = "API Gateway's account-level CloudWatch role serves every REST API of the account and region " +
		"and writes to log groups API Gateway names itself; AmazonAPIGatewayPushToCloudWatchLogs is AWS's documented " +
		"policy for it. Set context apiGatewayAccountRole=false when the account already has one."
	reasonValidation = "Lambda proxy integration: the api handler validates method, path, query and JSON body of every " +
		"request itself and answers 400; API Gateway models would duplicate its schema."
	reasonWAF = "Every method requires SigV4-signed IAM credentials and the stage is throttled; a WAF web ACL adds a " +
		"fixed monthly cost and can be associated by account policy where required."
	reasonCognito = "The API authorizes with IAM (SigV4) on every method instead of Cognito user pools: its callers " +
		"are IAM principals (roles, users, services)."
	reasonAccessLogs = "The bucket only holds signal objects whose events go to the signal-ingest queue; server access " +
		"logs would need a second bucket. Use CloudTrail S3 data events where an audit trail is required."
	reasonNotificationsHandler = "CDK's bucket-notifications custom resource (only present when attachBuckets names " +
		"existing buckets) runs with AWSLambdaBasicExecutionRole so it can write its own logs; its inline policy " +
		"allows s3:PutBucketNotification on the attached buckets only."
)

func suppress(c constructs.IConstruct, children bool, s ...*cdknag.NagPackSuppression) {
	cdknag.NagSuppressions_AddResourceSuppressions(c, &s, jsii.Bool(children))
}

func finding(id, reason string, appliesTo ...string) *cdknag.NagPackSuppression {
	sup := &cdknag.NagPackSuppression{Id: jsii.String(id), Reason: jsii.String(reason)}
	if len(appliesTo) > 0 {
		list := make([]any, len(appliesTo))
		for i, a := range appliesTo {
			list[i] = a
		}
		sup.AppliesTo = &list
	}
	return sup
}

// suppressFindings records the accepted findings on the constructs they
// concern, narrowed to the exact permission where the rule allows it.
func suppressFindings(st *Stack, s settings) {
	for _, fn := range st.Functions {
		suppress(fn.Role, true, finding("AwsSolutions-IAM5", reasonXRay, "Resource::*"))
	}
	bucket := st.Bucket.Node().DefaultChild().(awscdk.CfnElement)
	items := []string{"Resource::<" + *st.GetLogicalId(bucket) + ".Arn>/*"}
	for _, b := range s.AttachBuckets {
		items = append(items, "Resource::arn:<AWS::Partition>:s3:::"+b+"/*")
	}
	for _, h := range []string{HandlerAPI, HandlerDecider, HandlerWorker} {
		suppress(st.Functions[h].Role, true, finding("AwsSolutions-IAM5", reasonItems, items...))
	}
	table := st.Table.Node().DefaultChild().(awscdk.CfnElement)
	router := st.Functions[HandlerRouter].Role
	suppress(router, true,
		finding("AwsSolutions-IAM5", reasonStream, "Resource::<"+*st.GetLogicalId(table)+".Arn>/stream/*"),
		finding("AwsSolutions-IAM5", reasonSchedules,
			"Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/"+st.Spec.SchedulerGroup+"/*"),
		finding("AwsSolutions-IAM5", reasonSchedules,
			"Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/"+st.Spec.SchedulerGroup+"/"+store.RunTimeoutSchedulePrefix+"*"))
	worker := st.Functions[HandlerWorker].Role
	suppress(worker, true,
		finding("AwsSolutions-IAM5", reasonTriggerSchedules,
			"Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/"+st.Spec.SchedulerGroup+"/"+TriggerSchedulePrefix+"*"))
	for _, f := range s.LambdaFunctions {
		arn := f
		if !strings.HasPrefix(f, "arn:") {
			arn = "arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:" + f
		}
		suppress(worker, true, finding("AwsSolutions-IAM5", reasonFunctionVersions, "Resource::"+arn+":*"))
	}
	if j := st.Jobs; j != nil {
		partition := "arn:<AWS::Partition>:"
		regional := func(service string) string { return partition + service + ":<AWS::Region>:<AWS::AccountId>:" }
		if j.ExecutionRole != nil {
			suppress(worker, true,
				finding("AwsSolutions-IAM5", reasonTaskDefinitions, "Resource::"+regional("ecs")+"task-definition/"+s.name("task")+"-*:*", "Resource::*"),
				finding("AwsSolutions-IAM5", reasonTasks, "Resource::"+regional("ecs")+"task/"+s.ECS.Cluster[strings.LastIndex(s.ECS.Cluster, "/")+1:]+"/*"),
				finding("AwsSolutions-IAM5", reasonJobLogs, "Resource::<"+*st.GetLogicalId(j.ECSLogs.Node().DefaultChild().(awscdk.CfnElement))+".Arn>:log-stream:*"))
			for _, f := range s.ECS.TaskDefinitions {
				suppress(worker, true, finding("AwsSolutions-IAM5", reasonTaskDefinitions, "Resource::"+regional("ecs")+"task-definition/"+f+":*"))
			}
			suppress(j.NotebookRole, true, finding("AwsSolutions-IAM5", reasonNotebooks,
				append([]string{"Resource::<" + *st.GetLogicalId(bucket) + ".Arn>/" + ecsstep.DefaultNotebookPrefix + "*"}, items...)...))
			list, _ := images.ParseAllowList(s.ECS.Images) // checked by resolve
			for _, r := range list.ECR() {
				applies := []string{"Resource::*"} // ecr:GetAuthorizationToken
				for _, name := range r.Names {
					if strings.HasSuffix(name, "*") {
						applies = append(applies, "Resource::"+partition+"ecr:"+r.Region+":"+r.Account+":repository/"+name)
					}
				}
				suppress(j.ExecutionRole, true, finding("AwsSolutions-IAM5", reasonExecutionRole, applies...))
			}
		}
		if len(s.BatchJobQueues) > 0 || s.BatchGPUJobQueue != "" {
			suppress(worker, true,
				finding("AwsSolutions-IAM5", reasonBatchJobs, "Resource::"+regional("batch")+"job/*"),
				finding("AwsSolutions-IAM5", reasonJobLogs, "Resource::"+regional("logs")+"log-group:/aws/batch/job:log-stream:*"))
			for _, d := range s.BatchJobDefinitions {
				suppress(worker, true, finding("AwsSolutions-IAM5", reasonBatchJobs, "Resource::"+regional("batch")+"job-definition/"+d+":*"))
			}
		}
		if s.BatchGPUJobQueue != "" {
			suppress(worker, true, finding("AwsSolutions-IAM5", reasonGPUJobDefinitions,
				"Resource::"+regional("batch")+"job-definition/"+s.name("task")+"-gpu-*", "Resource::*"))
		}
	}
	api := st.API.RestAPI
	suppress(api, false, finding("AwsSolutions-APIG2", reasonValidation))
	suppress(api.DeploymentStage(), false, finding("AwsSolutions-APIG3", reasonWAF))
	for _, m := range *api.Methods() {
		suppress(m, false, finding("AwsSolutions-COG4", reasonCognito))
	}
	if role := api.Node().TryFindChild(jsii.String("CloudWatchRole")); role != nil {
		suppress(role, true, finding("AwsSolutions-IAM4", reasonAPIGatewayRole,
			"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"))
	}
	suppress(st.Bucket, false, finding("AwsSolutions-S1", reasonAccessLogs))
	// CDK creates the notifications handler at the stack's root, once.
	for _, c := range *st.Node().Children() {
		if strings.HasPrefix(*c.Node().Id(), "BucketNotificationsHandler") {
			suppress(c, true, finding("AwsSolutions-IAM4", reasonNotificationsHandler,
				"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"))
		}
	}
}
