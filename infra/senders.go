package infra

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// SendersSid names the statement of each queue and topic policy that
// denies sending (publishing) to every principal but the stack's senders.
const SendersSid = "OnlyStackSenders"

// senders are who may send to one queue or publish to one topic: the
// stack's roles that do (by their identity policies), and the AWS resources
// on whose behalf an AWS service delivers (EventBridge rules, buckets, SNS
// topics, a dead-letter queue's source queue), by aws:SourceArn.
type senders struct {
	roles   []awsiam.IRole
	sources []*string
}

// restrictSenders adds to each queue's and topic's policy an explicit Deny
// of sqs:SendMessage (sns:Publish) for every principal but its senders. An
// identity policy of the account suffices to send to a queue or topic of the
// same account, so without it any principal allowed sqs:SendMessage on "*"
// could forge work messages (a job_event saying a task stopped with exit
// code 0 succeeds its step), S3 notifications or change events.
//
// The Deny applies when the caller's role is none of the senders' roles
// (aws:PrincipalArn, absent for AWS services) and the request is made on
// behalf of none of their resources (aws:SourceArn, present only on
// service-to-service requests): a role is admitted by its ARN, a service by
// the resource it delivers for. The services also need the Allow statements
// CDK adds for them with the same aws:SourceArn (rule targets, the topic
// subscription, bucket notifications).
//
// The signals topic is left open to the account: it is the entrance for
// signals that callers publish. SQS moves messages to a dead-letter queue
// itself rather than through SendMessage; its source queue's ARN is
// admitted anyway, so that the move works even if it were authorized as a
// call made on the source queue's behalf.
func restrictSenders(st *Stack, s settings) {
	q := st.Queues
	fn := func(h string) awsiam.IRole { return st.Functions[h].Role }
	ingest := senders{sources: []*string{jsii.String(bucketARN(s.bucketName())), st.SignalsTopic.TopicArn()}}
	for _, b := range s.AttachBuckets {
		ingest.sources = append(ingest.sources, jsii.String(bucketARN(b)))
	}
	work := senders{roles: []awsiam.IRole{fn(HandlerAPI), fn(HandlerDecider), fn(HandlerWorker), fn(HandlerRouter), st.SchedulerRole}}
	if j := st.Jobs; j != nil {
		for _, r := range []awsevents.Rule{j.ECSRule, j.BatchRule} {
			if r != nil {
				work.sources = append(work.sources, r.RuleArn())
			}
		}
	}
	for _, t := range []struct {
		queue awssqs.Queue
		who   senders
	}{
		{q.Decision, senders{roles: []awsiam.IRole{fn(HandlerRouter), fn(HandlerWorker), st.SchedulerRole}}},
		{q.Work, work},
		{q.SignalIngest, ingest},
		{q.DecisionDLQ, senders{sources: []*string{q.Decision.QueueArn()}}},
		{q.WorkDLQ, senders{sources: []*string{q.Work.QueueArn()}}},
		{q.SignalIngestDLQ, senders{roles: []awsiam.IRole{fn(HandlerSignals)}, sources: []*string{q.SignalIngest.QueueArn()}}},
	} {
		t.queue.AddToResourcePolicy(denyOthers("sqs:SendMessage", t.queue.QueueArn(), t.who))
	}
	st.EventsTopic.AddToResourcePolicy(denyOthers("sns:Publish", st.EventsTopic.TopicArn(), senders{roles: []awsiam.IRole{fn(HandlerRouter)}}))
}

// denyOthers is the Deny of action on resource to all but who.
func denyOthers(action string, resource *string, who senders) awsiam.PolicyStatement {
	cond := map[string]any{}
	if len(who.roles) > 0 {
		arns := make([]*string, len(who.roles))
		for i, r := range who.roles {
			arns[i] = r.RoleArn()
		}
		cond["aws:PrincipalArn"] = arns
	}
	if len(who.sources) > 0 {
		cond["aws:SourceArn"] = who.sources
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String(SendersSid),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewStarPrincipal()},
		Actions:    jsii.Strings(action),
		Resources:  &[]*string{resource},
		Conditions: &map[string]any{"ArnNotEquals": cond},
	})
}

// bucketARN is the ARN of the bucket named name, in the stack's partition.
func bucketARN(name string) string { return "arn:" + *awscdk.Aws_PARTITION() + ":s3:::" + name }
