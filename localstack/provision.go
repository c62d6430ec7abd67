package localstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/resources"
)

// Resources names the provisioned resources of one stage, with the URLs
// and ARNs clients need.
type Resources struct {
	// Stage is the stage the resources belong to.
	Stage string `json:"stage"`
	// Region is the region they live in.
	Region string `json:"region"`
	// Table is the DynamoDB table.
	Table TableInfo `json:"table"`
	// Queues are the SQS queues.
	Queues QueueSet `json:"queues"`
	// Topics are the SNS topics.
	Topics TopicSet `json:"topics"`
	// Bucket is the signals bucket.
	Bucket BucketInfo `json:"bucket"`
	// SchedulerGroup is the EventBridge Scheduler group.
	SchedulerGroup GroupInfo `json:"schedulerGroup"`
	// SignalsSubscriptionARN is the subscription of the SignalIngest queue
	// to the Signals topic.
	SignalsSubscriptionARN string `json:"signalsSubscriptionArn"`
}

// TableInfo identifies the table and its stream.
type TableInfo struct {
	// Name is the table name.
	Name string `json:"name"`
	// ARN is the table ARN.
	ARN string `json:"arn"`
	// StreamARN is the ARN of the table's current stream.
	StreamARN string `json:"streamArn"`
}

// QueueInfo identifies one queue.
type QueueInfo struct {
	// Name is the queue name.
	Name string `json:"name"`
	// URL is the queue URL that SQS calls take.
	URL string `json:"url"`
	// ARN is the queue ARN.
	ARN string `json:"arn"`
}

// QueueSet holds every queue of a stage.
type QueueSet struct {
	// Decision is the FIFO decision queue.
	Decision QueueInfo `json:"decision"`
	// DecisionDLQ is its dead-letter queue.
	DecisionDLQ QueueInfo `json:"decisionDlq"`
	// Work is the step work and timer queue.
	Work QueueInfo `json:"work"`
	// WorkDLQ is its dead-letter queue.
	WorkDLQ QueueInfo `json:"workDlq"`
	// SignalIngest receives S3 and SNS signals.
	SignalIngest QueueInfo `json:"signalIngest"`
	// SignalIngestDLQ is its dead-letter queue.
	SignalIngestDLQ QueueInfo `json:"signalIngestDlq"`
}

// TopicInfo identifies one topic.
type TopicInfo struct {
	// Name is the topic name.
	Name string `json:"name"`
	// ARN is the topic ARN.
	ARN string `json:"arn"`
}

// TopicSet holds every topic of a stage.
type TopicSet struct {
	// Events fans out status changes.
	Events TopicInfo `json:"events"`
	// Signals receives incoming signals.
	Signals TopicInfo `json:"signals"`
}

// BucketInfo identifies the bucket.
type BucketInfo struct {
	// Name is the bucket name.
	Name string `json:"name"`
	// ARN is the bucket ARN.
	ARN string `json:"arn"`
}

// GroupInfo identifies the scheduler group.
type GroupInfo struct {
	// Name is the group name.
	Name string `json:"name"`
	// ARN is the group ARN.
	ARN string `json:"arn"`
}

// tableActiveTimeout bounds the wait for a new table to become ACTIVE.
const tableActiveTimeout = time.Minute

// Provision creates the resources of spec with cfg's credentials and
// endpoint: the table (with its stream, TTL and index), the queues with
// their redrive policies, the topics, the bucket with object notifications
// to the SignalIngest queue, the Signals topic's subscription of that queue
// (raw message delivery) and the scheduler group. It is idempotent: what
// already exists is kept and brought up to date where the service allows.
func Provision(ctx context.Context, cfg aws.Config, spec resources.Spec) (*Resources, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("provision stage %q: %w", spec.Stage, err)
	}
	p := provisioner{
		ddb:   dynamodb.NewFromConfig(cfg),
		sqs:   sqs.NewFromConfig(cfg),
		sns:   sns.NewFromConfig(cfg),
		sched: scheduler.NewFromConfig(cfg),
		s3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			// Emulators address buckets by path; AWS takes both.
			o.UsePathStyle = cfg.BaseEndpoint != nil
		}),
		region: cfg.Region,
		spec:   spec,
	}
	out := &Resources{Stage: spec.Stage, Region: cfg.Region}
	var err error
	if out.Table, err = p.table(ctx); err != nil {
		return nil, err
	}
	if out.Queues, err = p.queues(ctx); err != nil {
		return nil, err
	}
	if out.Topics, err = p.topics(ctx); err != nil {
		return nil, err
	}
	partition := arnPartition(out.Queues.SignalIngest.ARN)
	out.Bucket = BucketInfo{Name: spec.Bucket.Name, ARN: "arn:" + partition + ":s3:::" + spec.Bucket.Name}
	if err := p.ingestPolicy(ctx, out); err != nil {
		return nil, err
	}
	if err := p.bucket(ctx, out.Queues.SignalIngest.ARN); err != nil {
		return nil, err
	}
	if out.SignalsSubscriptionARN, err = p.subscription(ctx, out.Topics.Signals.ARN, out.Queues.SignalIngest.ARN); err != nil {
		return nil, err
	}
	if out.SchedulerGroup, err = p.group(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// provisioner carries the clients of one Provision call.
type provisioner struct {
	ddb    *dynamodb.Client
	sqs    *sqs.Client
	sns    *sns.Client
	s3     *s3.Client
	sched  *scheduler.Client
	region string
	spec   resources.Spec
}

func (p *provisioner) table(ctx context.Context) (TableInfo, error) {
	t := p.spec.Table
	key := func(k resources.KeyAttribute, kt ddbtypes.KeyType) ddbtypes.KeySchemaElement {
		return ddbtypes.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: kt}
	}
	attrs := map[string]ddbtypes.ScalarAttributeType{
		t.PartitionKey.Name: ddbtypes.ScalarAttributeType(t.PartitionKey.Type),
		t.SortKey.Name:      ddbtypes.ScalarAttributeType(t.SortKey.Type),
	}
	var gsis []ddbtypes.GlobalSecondaryIndex
	for _, ix := range t.GlobalIndexes {
		attrs[ix.PartitionKey.Name] = ddbtypes.ScalarAttributeType(ix.PartitionKey.Type)
		attrs[ix.SortKey.Name] = ddbtypes.ScalarAttributeType(ix.SortKey.Type)
		gsis = append(gsis, ddbtypes.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  []ddbtypes.KeySchemaElement{key(ix.PartitionKey, ddbtypes.KeyTypeHash), key(ix.SortKey, ddbtypes.KeyTypeRange)},
			Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionType(ix.Projection)},
		})
	}
	var defs []ddbtypes.AttributeDefinition
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		defs = append(defs, ddbtypes.AttributeDefinition{AttributeName: aws.String(name), AttributeType: attrs[name]})
	}
	streamSpec := &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewType(t.StreamViewType)}
	_, err := p.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:              aws.String(t.Name),
		AttributeDefinitions:   defs,
		KeySchema:              []ddbtypes.KeySchemaElement{key(t.PartitionKey, ddbtypes.KeyTypeHash), key(t.SortKey, ddbtypes.KeyTypeRange)},
		BillingMode:            ddbtypes.BillingMode(t.BillingMode),
		GlobalSecondaryIndexes: gsis,
		StreamSpecification:    streamSpec,
	})
	var inUse *ddbtypes.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return TableInfo{}, fmt.Errorf("create table %s: %w", t.Name, err)
	}
	desc, err := p.waitTableActive(ctx, t.Name)
	if err != nil {
		return TableInfo{}, err
	}
	for _, ix := range t.GlobalIndexes {
		if !hasIndex(desc, ix.Name) {
			return TableInfo{}, fmt.Errorf("table %s exists without index %s: delete it or add the index", t.Name, ix.Name)
		}
	}
	if ss := desc.StreamSpecification; ss == nil || !aws.ToBool(ss.StreamEnabled) || ss.StreamViewType != streamSpec.StreamViewType {
		if ss != nil && aws.ToBool(ss.StreamEnabled) {
			return TableInfo{}, fmt.Errorf("table %s has a %s stream, want %s", t.Name, ss.StreamViewType, t.StreamViewType)
		}
		if _, err := p.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(t.Name), StreamSpecification: streamSpec}); err != nil {
			return TableInfo{}, fmt.Errorf("enable stream of table %s: %w", t.Name, err)
		}
		if desc, err = p.waitTableActive(ctx, t.Name); err != nil {
			return TableInfo{}, err
		}
	}
	if err := p.ttl(ctx); err != nil {
		return TableInfo{}, err
	}
	info := TableInfo{Name: t.Name, ARN: aws.ToString(desc.TableArn), StreamARN: aws.ToString(desc.LatestStreamArn)}
	if info.StreamARN == "" {
		return TableInfo{}, fmt.Errorf("table %s reports no stream ARN", t.Name)
	}
	return info, nil
}

func hasIndex(desc *ddbtypes.TableDescription, name string) bool {
	for _, g := range desc.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == name {
			return true
		}
	}
	return false
}

// waitTableActive polls until the table is ACTIVE.
func (p *provisioner) waitTableActive(ctx context.Context, name string) (*ddbtypes.TableDescription, error) {
	ctx, cancel := context.WithTimeout(ctx, tableActiveTimeout)
	defer cancel()
	for {
		out, err := p.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("describe table %s: %w", name, err)
		}
		if out.Table.TableStatus == ddbtypes.TableStatusActive {
			return out.Table, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("table %s is %s, not ACTIVE: %w", name, out.Table.TableStatus, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ttl enables time to live on the table's TTL attribute unless it is on.
func (p *provisioner) ttl(ctx context.Context) error {
	t := p.spec.Table
	out, err := p.ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(t.Name)})
	if err != nil {
		return fmt.Errorf("describe TTL of table %s: %w", t.Name, err)
	}
	if d := out.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == t.TTLAttribute &&
		(d.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabled || d.TimeToLiveStatus == ddbtypes.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = p.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(t.Name),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable TTL on %s.%s: %w", t.Name, t.TTLAttribute, err)
	}
	return nil
}

func (p *provisioner) queues(ctx context.Context) (QueueSet, error) {
	byName := map[string]QueueInfo{}
	for _, q := range p.spec.Queues.All() { // dead-letter queues come first
		attrs := map[string]string{
			string(sqstypes.QueueAttributeNameVisibilityTimeout):      seconds(q.VisibilityTimeout),
			string(sqstypes.QueueAttributeNameMessageRetentionPeriod): seconds(q.Retention),
		}
		if q.FIFO {
			attrs[string(sqstypes.QueueAttributeNameContentBasedDeduplication)] = strconv.FormatBool(q.ContentBasedDeduplication)
		}
		if q.DeadLetterQueue != "" {
			dlq, ok := byName[q.DeadLetterQueue]
			if !ok {
				return QueueSet{}, fmt.Errorf("queue %s: dead-letter queue %s not created first", q.Name, q.DeadLetterQueue)
			}
			policy, err := json.Marshal(map[string]string{
				"deadLetterTargetArn": dlq.ARN,
				"maxReceiveCount":     strconv.Itoa(q.MaxReceiveCount),
			})
			if err != nil {
				return QueueSet{}, fmt.Errorf("queue %s: redrive policy: %w", q.Name, err)
			}
			attrs[string(sqstypes.QueueAttributeNameRedrivePolicy)] = string(policy)
		}
		info, err := p.queue(ctx, q, attrs)
		if err != nil {
			return QueueSet{}, err
		}
		byName[q.Name] = info
	}
	qs := p.spec.Queues
	return QueueSet{
		Decision:        byName[qs.Decision.Name],
		DecisionDLQ:     byName[qs.DecisionDLQ.Name],
		Work:            byName[qs.Work.Name],
		WorkDLQ:         byName[qs.WorkDLQ.Name],
		SignalIngest:    byName[qs.SignalIngest.Name],
		SignalIngestDLQ: byName[qs.SignalIngestDLQ.Name],
	}, nil
}

// queue creates one queue, or brings an existing one's attributes up to date.
func (p *provisioner) queue(ctx context.Context, q resources.Queue, attrs map[string]string) (QueueInfo, error) {
	createAttrs := maps.Clone(attrs)
	if q.FIFO {
		createAttrs[string(sqstypes.QueueAttributeNameFifoQueue)] = "true"
	}
	var url string
	out, err := p.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: createAttrs})
	var exists *sqstypes.QueueNameExists
	switch {
	case err == nil:
		url = aws.ToString(out.QueueUrl)
	case errors.As(err, &exists):
		// The queue exists with other attributes: update them in place.
		got, err := p.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q.Name)})
		if err != nil {
			return QueueInfo{}, fmt.Errorf("get URL of queue %s: %w", q.Name, err)
		}
		url = aws.ToString(got.QueueUrl)
		if _, err := p.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
			return QueueInfo{}, fmt.Errorf("update attributes of queue %s: %w", q.Name, err)
		}
	default:
		return QueueInfo{}, fmt.Errorf("create queue %s: %w", q.Name, err)
	}
	arn, err := queueARN(ctx, p.sqs, url)
	if err != nil {
		return QueueInfo{}, err
	}
	return QueueInfo{Name: q.Name, URL: url, ARN: arn}, nil
}

// queueARN asks SQS for the ARN of the queue at url.
func queueARN(ctx context.Context, client interface {
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}, url string) (string, error) {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", fmt.Errorf("get ARN of queue %s: %w", url, err)
	}
	arn := out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", fmt.Errorf("queue %s reports no ARN", url)
	}
	return arn, nil
}

func seconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }

func (p *provisioner) topics(ctx context.Context) (TopicSet, error) {
	create := func(t resources.Topic) (TopicInfo, error) {
		out, err := p.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(t.Name)})
		if err != nil {
			return TopicInfo{}, fmt.Errorf("create topic %s: %w", t.Name, err)
		}
		return TopicInfo{Name: t.Name, ARN: aws.ToString(out.TopicArn)}, nil
	}
	events, err := create(p.spec.Topics.Events)
	if err != nil {
		return TopicSet{}, err
	}
	signals, err := create(p.spec.Topics.Signals)
	if err != nil {
		return TopicSet{}, err
	}
	return TopicSet{Events: events, Signals: signals}, nil
}

// ingestPolicy lets the bucket and the Signals topic send to the
// SignalIngest queue, as AWS requires (emulators do not check).
func (p *provisioner) ingestPolicy(ctx context.Context, r *Resources) error {
	q := r.Queues.SignalIngest
	statement := func(sid, service, condition, source string) map[string]any {
		return map[string]any{
			"Sid":       sid,
			"Effect":    "Allow",
			"Principal": map[string]string{"Service": service},
			"Action":    "sqs:SendMessage",
			"Resource":  q.ARN,
			"Condition": map[string]any{condition: map[string]string{"aws:SourceArn": source}},
		}
	}
	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{
			statement("BucketNotifications", "s3.amazonaws.com", "ArnLike", r.Bucket.ARN),
			statement("SignalsTopic", "sns.amazonaws.com", "ArnEquals", r.Topics.Signals.ARN),
		},
	})
	if err != nil {
		return fmt.Errorf("queue policy of %s: %w", q.Name, err)
	}
	_, err = p.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl:   aws.String(q.URL),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNamePolicy): string(policy)},
	})
	if err != nil {
		return fmt.Errorf("set policy of queue %s: %w", q.Name, err)
	}
	return nil
}

func (p *provisioner) bucket(ctx context.Context, queueARN string) error {
	b := p.spec.Bucket
	in := &s3.CreateBucketInput{Bucket: aws.String(b.Name)}
	if p.region != "" && p.region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(p.region)}
	}
	_, err := p.s3.CreateBucket(ctx, in)
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", b.Name, err)
	}
	events := make([]s3types.Event, len(b.NotifyEvents))
	for i, e := range b.NotifyEvents {
		events[i] = s3types.Event(e)
	}
	// Setting the configuration makes S3 send an s3:TestEvent; skip it when
	// nothing would change.
	cur, err := p.s3.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(b.Name)})
	if err != nil {
		return fmt.Errorf("get notifications of bucket %s: %w", b.Name, err)
	}
	if len(cur.QueueConfigurations) == 1 && len(cur.TopicConfigurations) == 0 && len(cur.LambdaFunctionConfigurations) == 0 &&
		aws.ToString(cur.QueueConfigurations[0].QueueArn) == queueARN && slices.Equal(cur.QueueConfigurations[0].Events, events) {
		return nil
	}
	_, err = p.s3.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(b.Name),
		NotificationConfiguration: &s3types.NotificationConfiguration{
			QueueConfigurations: []s3types.QueueConfiguration{{
				Id:       aws.String("maestro-signal-ingest"),
				QueueArn: aws.String(queueARN),
				Events:   events,
			}},
		},
	})
	if err != nil {
		return fmt.Errorf("set notifications of bucket %s: %w", b.Name, err)
	}
	return nil
}

// subscription subscribes the queue to the topic with raw message delivery,
// unless it already is.
func (p *provisioner) subscription(ctx context.Context, topicARN, queueARN string) (string, error) {
	pages := sns.NewListSubscriptionsByTopicPaginator(p.sns, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicARN)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list subscriptions of %s: %w", topicARN, err)
		}
		for _, s := range page.Subscriptions {
			if aws.ToString(s.Protocol) == "sqs" && aws.ToString(s.Endpoint) == queueARN {
				arn := aws.ToString(s.SubscriptionArn)
				_, err := p.sns.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
					SubscriptionArn: aws.String(arn),
					AttributeName:   aws.String("RawMessageDelivery"),
					AttributeValue:  aws.String("true"),
				})
				if err != nil {
					return "", fmt.Errorf("set raw delivery on %s: %w", arn, err)
				}
				return arn, nil
			}
		}
	}
	out, err := p.sns.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn:              aws.String(topicARN),
		Protocol:              aws.String("sqs"),
		Endpoint:              aws.String(queueARN),
		Attributes:            map[string]string{"RawMessageDelivery": "true"},
		ReturnSubscriptionArn: true,
	})
	if err != nil {
		return "", fmt.Errorf("subscribe %s to %s: %w", queueARN, topicARN, err)
	}
	return aws.ToString(out.SubscriptionArn), nil
}

func (p *provisioner) group(ctx context.Context) (GroupInfo, error) {
	name := p.spec.SchedulerGroup
	out, err := p.sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(name)})
	if err == nil {
		return GroupInfo{Name: name, ARN: aws.ToString(out.ScheduleGroupArn)}, nil
	}
	var conflict *schedtypes.ConflictException
	if !errors.As(err, &conflict) {
		return GroupInfo{}, fmt.Errorf("create schedule group %s: %w", name, err)
	}
	got, err := p.sched.GetScheduleGroup(ctx, &scheduler.GetScheduleGroupInput{Name: aws.String(name)})
	if err != nil {
		return GroupInfo{}, fmt.Errorf("get schedule group %s: %w", name, err)
	}
	return GroupInfo{Name: name, ARN: aws.ToString(got.Arn)}, nil
}

// arnPartition returns the partition field of an ARN ("aws" when unclear).
func arnPartition(arn string) string {
	parts := strings.SplitN(arn, ":", 3)
	if len(parts) < 3 || parts[1] == "" {
		return "aws"
	}
	return parts[1]
}

// Deprovision deletes the stage's table and queues: what grows with use
// on the emulator. Tests call it when a stage is done, so that an emulator
// shared by many stages does not carry every finished stage's items (Amazon's
// DynamoDB Local slows down as its in-memory database fills). Topics, the
// bucket and the scheduler group are left: they hold nothing that grows.
// Resources already gone are not an error.
func Deprovision(ctx context.Context, cfg aws.Config, r *Resources) error {
	var errs []error
	ddb := dynamodb.NewFromConfig(cfg)
	if r.Table.Name != "" {
		_, err := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(r.Table.Name)})
		var nf *ddbtypes.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, fmt.Errorf("delete table %s: %w", r.Table.Name, err))
		}
	}
	q := sqs.NewFromConfig(cfg)
	for _, qi := range []QueueInfo{r.Queues.Decision, r.Queues.DecisionDLQ, r.Queues.Work, r.Queues.WorkDLQ, r.Queues.SignalIngest, r.Queues.SignalIngestDLQ} {
		if qi.URL == "" {
			continue
		}
		_, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(qi.URL)})
		var nf *sqstypes.QueueDoesNotExist
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, fmt.Errorf("delete queue %s: %w", qi.Name, err))
		}
	}
	return errors.Join(errs...)
}
