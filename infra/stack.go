package infra

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/resources"
)

// Queues are the stack's SQS queues.
type Queues struct {
	// Decision is the FIFO decision queue; DecisionDLQ its dead-letter queue.
	Decision, DecisionDLQ awssqs.Queue
	// Work is the step work and timer queue; WorkDLQ its dead-letter queue.
	Work, WorkDLQ awssqs.Queue
	// SignalIngest receives S3 object events and Signals topic messages;
	// SignalIngestDLQ is its dead-letter queue.
	SignalIngest, SignalIngestDLQ awssqs.Queue
}

// deadLetter is a dead-letter queue with a short name for alarm names.
type deadLetter struct {
	dlq    awssqs.Queue
	suffix string
}

// dlqs returns the dead-letter queues.
func (q Queues) dlqs() []deadLetter {
	return []deadLetter{{q.DecisionDLQ, "decision-dlq"}, {q.WorkDLQ, "work-dlq"}, {q.SignalIngestDLQ, "signal-ingest-dlq"}}
}

// Stack is the deployed system: the CDK stack and its main constructs.
type Stack struct {
	awscdk.Stack
	// Spec is the resource shape the stack was built from.
	Spec resources.Spec
	// Table is the DynamoDB table.
	Table awsdynamodb.Table
	// Queues are the SQS queues.
	Queues Queues
	// EventsTopic and SignalsTopic are the SNS topics.
	EventsTopic, SignalsTopic awssns.Topic
	// Bucket is the signals bucket.
	Bucket awss3.Bucket
	// SchedulerGroup is the EventBridge Scheduler group of the timers.
	SchedulerGroup awsscheduler.CfnScheduleGroup
	// SchedulerRole is the role Scheduler assumes to deliver to the queues.
	SchedulerRole awsiam.Role
	// Functions are the Lambda functions by handler name.
	Functions map[string]*Function
	// API is the REST API.
	API *API
	// Jobs is what ECS and Batch steps need beside the worker.
	Jobs *Jobs
}

// NewStack builds the stack under scope. It reports invalid props, including
// a missing <AssetDir>/<handler>/bootstrap (make build), before creating
// anything.
func NewStack(scope constructs.Construct, id string, props Props) (*Stack, error) {
	s, err := props.resolve()
	if err != nil {
		return nil, fmt.Errorf("infra: %w", err)
	}
	sp := s.StackProps
	if sp.StackName == nil {
		sp.StackName = jsii.String(resources.Prefix + "-" + s.Stage)
	}
	if sp.Description == nil {
		sp.Description = jsii.String(fmt.Sprintf("Maestro workflow orchestrator, stage %s", s.Stage))
	}
	st := &Stack{Stack: awscdk.NewStack(scope, jsii.String(id), &sp), Spec: s.spec}
	// cfn-lint 1.51's schema lacks the dashboard's (newer) Tags property.
	awscdk.Tags_Of(st.Stack).Add(jsii.String("maestro:stage"), jsii.String(s.Stage), &awscdk.TagProps{
		ExcludeResourceTypes: jsii.Strings("AWS::CloudWatch::Dashboard"),
	})

	if st.Table, err = newTable(st.Stack, s); err != nil {
		return nil, err
	}
	st.Queues = newQueues(st.Stack, s)
	st.EventsTopic, st.SignalsTopic = newTopics(st.Stack, s, st.Queues.SignalIngest)
	st.Bucket, err = newBucket(st.Stack, s, st.Queues.SignalIngest)
	if err != nil {
		return nil, err
	}
	if err := attachBuckets(st.Stack, s, st.Queues.SignalIngest); err != nil {
		return nil, err
	}
	st.SchedulerGroup, st.SchedulerRole = newScheduler(st.Stack, s, st.Queues)
	if st.Functions, err = newFunctions(st.Stack, s, st); err != nil {
		return nil, err
	}
	restrictSenders(st, s)
	st.API = newAPI(st.Stack, s, st.Functions[HandlerAPI])
	if s.monitor {
		newMonitoring(st.Stack, s, st)
	}
	newOutputs(st.Stack, st)
	suppressFindings(st, s)
	return st, nil
}

// removal is the removal policy of stateful resources.
func (s settings) removal() awscdk.RemovalPolicy {
	if s.retain {
		return awscdk.RemovalPolicy_RETAIN
	}
	return awscdk.RemovalPolicy_DESTROY
}

func seconds(d time.Duration) awscdk.Duration {
	return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
}

// attributeTypes maps a Spec attribute type to CDK's.
var attributeTypes = map[string]awsdynamodb.AttributeType{
	resources.TypeString: awsdynamodb.AttributeType_STRING,
	resources.TypeNumber: awsdynamodb.AttributeType_NUMBER,
}

// mapped returns what m maps k to; an error names k, a what ("attribute
// type"), when m does not have it.
func mapped[V any](m map[string]V, k, what string) (V, error) {
	v, ok := m[k]
	if !ok {
		return v, fmt.Errorf("infra: unsupported %s %q", what, k)
	}
	return v, nil
}

func attribute(k resources.KeyAttribute) (*awsdynamodb.Attribute, error) {
	t, err := mapped(attributeTypes, k.Type, "attribute type")
	if err != nil {
		return nil, fmt.Errorf("attribute %s: %w", k.Name, err)
	}
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: t}, nil
}

// keys returns the attributes of a table's or an index's partition key pk
// and sort key sk.
func keys(pk, sk resources.KeyAttribute) (*awsdynamodb.Attribute, *awsdynamodb.Attribute, error) {
	p, err := attribute(pk)
	if err != nil {
		return nil, nil, err
	}
	s, err := attribute(sk)
	if err != nil {
		return nil, nil, err
	}
	return p, s, nil
}

// newTable creates the table from the Spec: keys, index, stream, TTL and
// billing mode, plus point-in-time recovery and, when retained, deletion
// protection.
func newTable(scope constructs.Construct, s settings) (awsdynamodb.Table, error) {
	t := s.spec.Table
	if t.BillingMode != resources.BillingPayPerRequest {
		return nil, fmt.Errorf("infra: table billing mode %q is not supported", t.BillingMode)
	}
	if t.StreamViewType != resources.StreamNewAndOldImages {
		return nil, fmt.Errorf("infra: table stream view %q is not supported", t.StreamViewType)
	}
	pk, sk, err := keys(t.PartitionKey, t.SortKey)
	if err != nil {
		return nil, err
	}
	table := awsdynamodb.NewTable(scope, jsii.String("Table"), &awsdynamodb.TableProps{
		TableName:           jsii.String(t.Name),
		PartitionKey:        pk,
		SortKey:             sk,
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:              awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		TimeToLiveAttribute: jsii.String(t.TTLAttribute),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		DeletionProtection: jsii.Bool(s.retain),
		RemovalPolicy:      s.removal(),
	})
	for _, ix := range t.GlobalIndexes {
		var projection awsdynamodb.ProjectionType
		switch ix.Projection {
		case resources.ProjectionAll:
			projection = awsdynamodb.ProjectionType_ALL
		case resources.ProjectionKeysOnly:
			projection = awsdynamodb.ProjectionType_KEYS_ONLY
		default:
			return nil, fmt.Errorf("infra: index %s projection %q is not supported", ix.Name, ix.Projection)
		}
		ipk, isk, err := keys(ix.PartitionKey, ix.SortKey)
		if err != nil {
			return nil, err
		}
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   ipk,
			SortKey:        isk,
			ProjectionType: projection,
		})
	}
	return table, nil
}

// newQueue creates one queue of the Spec, encrypted with SQS-managed keys
// and refusing requests without TLS. A dead-letter queue (source: the
// name of the queue it serves) accepts redrives from its source queue only;
// another queue accepts none, so no queue of the account can move messages
// into it as its dead-letter queue, around its queue policy (senders.go).
func newQueue(scope constructs.Construct, id string, q resources.Queue, dlq awssqs.IQueue, source string, s settings) awssqs.Queue {
	props := &awssqs.QueueProps{
		QueueName:          jsii.String(q.Name),
		VisibilityTimeout:  seconds(q.VisibilityTimeout),
		RetentionPeriod:    seconds(q.Retention),
		Encryption:         awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:         jsii.Bool(true),
		RemovalPolicy:      s.removal(),
		RedriveAllowPolicy: &awssqs.RedriveAllowPolicy{RedrivePermission: awssqs.RedrivePermission_DENY_ALL},
	}
	if source != "" {
		// By ARN, not reference: the source queue refers to this one.
		arn := awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{Service: jsii.String("sqs"), Resource: jsii.String(source),
			ArnFormat: awscdk.ArnFormat_NO_RESOURCE_NAME})
		props.RedriveAllowPolicy = &awssqs.RedriveAllowPolicy{RedrivePermission: awssqs.RedrivePermission_BY_QUEUE,
			SourceQueues: &[]awssqs.IQueue{awssqs.Queue_FromQueueArn(scope, jsii.String(id+"Source"), arn)}}
	}
	if q.FIFO {
		props.Fifo = jsii.Bool(true)
		if q.ContentBasedDeduplication {
			props.ContentBasedDeduplication = jsii.Bool(true)
		}
	}
	if dlq != nil {
		props.DeadLetterQueue = &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(float64(q.MaxReceiveCount))}
	}
	return awssqs.NewQueue(scope, jsii.String(id), props)
}

func newQueues(scope constructs.Construct, s settings) Queues {
	qs := s.spec.Queues
	var out Queues
	out.DecisionDLQ = newQueue(scope, "DecisionDLQ", qs.DecisionDLQ, nil, qs.Decision.Name, s)
	out.WorkDLQ = newQueue(scope, "WorkDLQ", qs.WorkDLQ, nil, qs.Work.Name, s)
	out.SignalIngestDLQ = newQueue(scope, "SignalIngestDLQ", qs.SignalIngestDLQ, nil, qs.SignalIngest.Name, s)
	out.Decision = newQueue(scope, "DecisionQueue", qs.Decision, out.DecisionDLQ, "", s)
	out.Work = newQueue(scope, "WorkQueue", qs.Work, out.WorkDLQ, "", s)
	out.SignalIngest = newQueue(scope, "SignalIngestQueue", qs.SignalIngest, out.SignalIngestDLQ, "", s)
	return out
}

// newTopics creates the Events and Signals topics, encrypted with the
// AWS-managed SNS key, and subscribes the signal-ingest queue to Signals
// with raw message delivery.
func newTopics(scope constructs.Construct, s settings, ingest awssqs.IQueue) (events, signals awssns.Topic) {
	key := awskms.Alias_FromAliasName(scope, jsii.String("SnsManagedKey"), jsii.String("alias/aws/sns"))
	topic := func(id string, t resources.Topic) awssns.Topic {
		return awssns.NewTopic(scope, jsii.String(id), &awssns.TopicProps{
			TopicName:  jsii.String(t.Name),
			MasterKey:  key,
			EnforceSSL: jsii.Bool(true),
		})
	}
	events = topic("EventsTopic", s.spec.Topics.Events)
	signals = topic("SignalsTopic", s.spec.Topics.Signals)
	signals.AddSubscription(awssnssubscriptions.NewSqsSubscription(ingest, &awssnssubscriptions.SqsSubscriptionProps{
		RawMessageDelivery: jsii.Bool(true),
	}))
	return events, signals
}

// bucketName is the deployed name of the signals bucket.
func (s settings) bucketName() string {
	if s.BucketName != "" {
		return s.BucketName
	}
	return s.spec.Bucket.Name + "-" + *awscdk.Aws_ACCOUNT_ID()
}

// newBucket creates the signals bucket with CloudFormation's own
// notification configuration (no custom resource): every Spec event goes
// to the signal-ingest queue. The queue policy names the bucket by its ARN
// string rather than a reference, so the bucket can depend on the policy
// without a cycle (S3 checks the destination when it is configured).
func newBucket(scope constructs.Construct, s settings, ingest awssqs.Queue) (awss3.Bucket, error) {
	name := s.bucketName()
	arn := bucketARN(name)
	grant := ingest.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("SignalsBucketNotifications"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("s3.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sqs:SendMessage"),
		Resources:  &[]*string{ingest.QueueArn()},
		Conditions: &map[string]any{
			"ArnEquals":    map[string]any{"aws:SourceArn": arn},
			"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()},
		},
	}))
	bucket := awss3.NewBucket(scope, jsii.String("SignalsBucket"), &awss3.BucketProps{
		BucketName:        jsii.String(name),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     s.removal(),
	})
	var configs []any
	for _, e := range s.spec.Bucket.NotifyEvents {
		configs = append(configs, &awss3.CfnBucket_QueueConfigurationProperty{Event: jsii.String(e), Queue: ingest.QueueArn()})
	}
	cfn, ok := bucket.Node().DefaultChild().(awss3.CfnBucket)
	if !ok {
		return nil, fmt.Errorf("infra: signals bucket has no CfnBucket")
	}
	cfn.SetNotificationConfiguration(&awss3.CfnBucket_NotificationConfigurationProperty{QueueConfigurations: &configs})
	bucket.Node().AddDependency(grant.PolicyDependable)
	return bucket, nil
}

// s3EventTypes maps a Spec event name to CDK's.
var s3EventTypes = map[string]awss3.EventType{
	resources.S3ObjectCreated: awss3.EventType_OBJECT_CREATED,
	resources.S3ObjectRemoved: awss3.EventType_OBJECT_REMOVED,
}

// attachBuckets routes the object events of existing buckets to the
// signal-ingest queue. CloudFormation cannot configure a bucket it does not
// own, so CDK's notifications custom resource merges the queue into each
// bucket's existing configuration.
func attachBuckets(scope constructs.Construct, s settings, ingest awssqs.IQueue) error {
	for i, name := range s.AttachBuckets {
		b := awss3.Bucket_FromBucketName(scope, jsii.String(fmt.Sprintf("AttachedBucket%d", i)), jsii.String(name))
		for _, e := range s.spec.Bucket.NotifyEvents {
			et, err := mapped(s3EventTypes, e, "bucket event")
			if err != nil {
				return err
			}
			b.AddEventNotification(et, awss3notifications.NewSqsDestination(ingest))
		}
	}
	return nil
}

// newScheduler creates the schedule group and the role EventBridge
// Scheduler assumes to deliver due timers. The role may only send to the
// work and decision queues, and only schedules of this account's group may
// assume it.
func newScheduler(scope constructs.Construct, s settings, q Queues) (awsscheduler.CfnScheduleGroup, awsiam.Role) {
	group := awsscheduler.NewCfnScheduleGroup(scope, jsii.String("SchedulerGroup"), &awsscheduler.CfnScheduleGroupProps{
		Name: jsii.String(s.spec.SchedulerGroup),
	})
	principal := awsiam.NewPrincipalWithConditions(
		awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), nil),
		&map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()},
			"ArnEquals":    map[string]any{"aws:SourceArn": group.AttrArn()},
		})
	role := awsiam.NewRole(scope, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		AssumedBy:   principal,
		Description: jsii.String("EventBridge Scheduler delivers Maestro timers to the work and decision queues"),
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage"),
		Resources: &[]*string{q.Work.QueueArn(), q.Decision.QueueArn()},
	}))
	// The recovery sweeper runs on the worker, once a minute.
	awsscheduler.NewCfnSchedule(scope, jsii.String("SweepSchedule"), &awsscheduler.CfnScheduleProps{
		Name:               jsii.String(SweepScheduleName),
		GroupName:          group.Ref(),
		Description:        jsii.String("Maestro recovery sweeper: re-drives runs whose wake, work or outbox was lost"),
		ScheduleExpression: jsii.String(SweepScheduleExpression),
		FlexibleTimeWindow: &awsscheduler.CfnSchedule_FlexibleTimeWindowProperty{Mode: jsii.String("OFF")},
		Target: &awsscheduler.CfnSchedule_TargetProperty{
			Arn:     q.Work.QueueArn(),
			RoleArn: role.RoleArn(),
			Input:   jsii.String(orchestrator.SweepBody),
		},
	})
	return group, role
}

// The recovery sweeper's recurring schedule in the stage's group (its name
// is outside the "tt-" prefix the worker keeps for time triggers).
const (
	SweepScheduleName       = "sweep"
	SweepScheduleExpression = "rate(1 minute)"
)

func newOutputs(scope constructs.Construct, st *Stack) {
	out := func(id, desc string, value *string) {
		awscdk.NewCfnOutput(scope, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("ApiUrl", "Base URL of the IAM-authorized REST API", st.API.RestAPI.Url())
	out("TableName", "DynamoDB table", st.Table.TableName())
	out("EventsTopicArn", "SNS topic of workflow and step status changes", st.EventsTopic.TopicArn())
	out("SignalsTopicArn", "SNS topic that accepts incoming signals", st.SignalsTopic.TopicArn())
	out("SignalsBucketName", "S3 bucket whose object events are signals", st.Bucket.BucketName())
	out("SchedulerGroupName", "EventBridge Scheduler group of long timers", st.SchedulerGroup.Ref())
	for _, q := range []struct {
		id    string
		queue awssqs.Queue
	}{
		{"DecisionQueueName", st.Queues.Decision}, {"DecisionDLQName", st.Queues.DecisionDLQ},
		{"WorkQueueName", st.Queues.Work}, {"WorkDLQName", st.Queues.WorkDLQ},
		{"SignalIngestQueueName", st.Queues.SignalIngest}, {"SignalIngestDLQName", st.Queues.SignalIngestDLQ},
	} {
		out(q.id, "SQS queue", q.queue.QueueName())
	}
}
