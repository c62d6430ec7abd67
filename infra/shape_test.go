package infra

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/resources"
)

// shape is the part of a stage's resources that the Spec defines, in a
// form all three sources (the Spec, the synthesized template and the
// resources localstack.Provision creates) can be reduced to.
type shape struct {
	Table  tableShape
	Queues map[string]queueShape
	// Topics are the topic names, sorted.
	Topics []string
	// BucketEvents are the signals bucket's notification events, each as
	// "<event> -> <queue name>". (The bucket's name differs on purpose: in
	// AWS it carries the account id.)
	BucketEvents []string
	// SchedulerGroup is the schedule group's name.
	SchedulerGroup string
}

type tableShape struct {
	Name, HashKey, RangeKey string
	// Attributes maps each key attribute to its type.
	Attributes map[string]string
	Indexes    map[string]indexShape
	Billing    string
	StreamView string
	TTL        string
}

type indexShape struct{ HashKey, RangeKey, Projection string }

type queueShape struct {
	FIFO, ContentBasedDeduplication bool
	VisibilitySeconds               int
	RetentionSeconds                int
	DeadLetterQueue                 string
	MaxReceiveCount                 int
}

// specShape is what the Spec says.
func specShape(spec resources.Spec) shape {
	t := spec.Table
	sh := shape{
		Table: tableShape{
			Name: t.Name, HashKey: t.PartitionKey.Name, RangeKey: t.SortKey.Name,
			Attributes: map[string]string{t.PartitionKey.Name: t.PartitionKey.Type, t.SortKey.Name: t.SortKey.Type},
			Indexes:    map[string]indexShape{},
			Billing:    t.BillingMode, StreamView: t.StreamViewType, TTL: t.TTLAttribute,
		},
		Queues:         map[string]queueShape{},
		Topics:         []string{spec.Topics.Events.Name, spec.Topics.Signals.Name},
		SchedulerGroup: spec.SchedulerGroup,
	}
	for _, ix := range t.GlobalIndexes {
		sh.Table.Attributes[ix.PartitionKey.Name] = ix.PartitionKey.Type
		sh.Table.Attributes[ix.SortKey.Name] = ix.SortKey.Type
		sh.Table.Indexes[ix.Name] = indexShape{ix.PartitionKey.Name, ix.SortKey.Name, ix.Projection}
	}
	for _, q := range spec.Queues.All() {
		sh.Queues[q.Name] = queueShape{
			FIFO: q.FIFO, ContentBasedDeduplication: q.ContentBasedDeduplication,
			VisibilitySeconds: int(q.VisibilityTimeout / time.Second), RetentionSeconds: int(q.Retention / time.Second),
			DeadLetterQueue: q.DeadLetterQueue, MaxReceiveCount: q.MaxReceiveCount,
		}
	}
	for _, e := range spec.Bucket.NotifyEvents {
		sh.BucketEvents = append(sh.BucketEvents, e+" -> "+spec.Queues.SignalIngest.Name)
	}
	sh.sort()
	return sh
}

func (sh *shape) sort() {
	slices.Sort(sh.Topics)
	slices.Sort(sh.BucketEvents)
}

// templateShape reads the shape from the synthesized template.
func templateShape(t *testing.T, s *synthesized) shape {
	t.Helper()
	sh := shape{Queues: map[string]queueShape{}}
	tables := s.resourcesOf("AWS::DynamoDB::Table")
	if len(tables) != 1 {
		t.Fatalf("%d tables", len(tables))
	}
	for _, r := range tables {
		p := props(r)
		tb := tableShape{Name: render(p["TableName"]), Attributes: map[string]string{}, Indexes: map[string]indexShape{}}
		tb.HashKey, tb.RangeKey = keySchema(p["KeySchema"])
		for _, a := range p["AttributeDefinitions"].([]any) {
			a := a.(map[string]any)
			tb.Attributes[render(a["AttributeName"])] = render(a["AttributeType"])
		}
		gsis, _ := p["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			g := g.(map[string]any)
			h, r := keySchema(g["KeySchema"])
			tb.Indexes[render(g["IndexName"])] = indexShape{h, r, render(g["Projection"].(map[string]any)["ProjectionType"])}
		}
		tb.Billing = render(p["BillingMode"])
		tb.StreamView = render(p["StreamSpecification"].(map[string]any)["StreamViewType"])
		if ttl := p["TimeToLiveSpecification"].(map[string]any); ttl["Enabled"] == true {
			tb.TTL = render(ttl["AttributeName"])
		}
		sh.Table = tb
	}
	nameOf := map[string]string{} // logical id -> queue name
	queues := s.resourcesOf("AWS::SQS::Queue")
	for id, r := range queues {
		nameOf[id] = render(props(r)["QueueName"])
	}
	for id, r := range queues {
		p := props(r)
		q := queueShape{
			FIFO:                      p["FifoQueue"] == true,
			ContentBasedDeduplication: p["ContentBasedDeduplication"] == true,
			VisibilitySeconds:         int(p["VisibilityTimeout"].(float64)),
			RetentionSeconds:          int(p["MessageRetentionPeriod"].(float64)),
		}
		if rp, ok := p["RedrivePolicy"].(map[string]any); ok {
			target := strings.TrimSuffix(strings.TrimPrefix(render(rp["deadLetterTargetArn"]), "${"), ".Arn}")
			q.DeadLetterQueue = nameOf[target]
			q.MaxReceiveCount = int(rp["maxReceiveCount"].(float64))
		}
		sh.Queues[nameOf[id]] = q
	}
	for _, r := range s.resourcesOf("AWS::SNS::Topic") {
		sh.Topics = append(sh.Topics, render(props(r)["TopicName"]))
	}
	bucket := props(s.resourcesOf("AWS::S3::Bucket")[s.logicalID(t, s.stack.Bucket)])
	for _, c := range bucket["NotificationConfiguration"].(map[string]any)["QueueConfigurations"].([]any) {
		qc := c.(map[string]any)
		target := strings.TrimSuffix(strings.TrimPrefix(render(qc["Queue"]), "${"), ".Arn}")
		sh.BucketEvents = append(sh.BucketEvents, render(qc["Event"])+" -> "+nameOf[target])
	}
	for _, r := range s.resourcesOf("AWS::Scheduler::ScheduleGroup") {
		sh.SchedulerGroup = render(props(r)["Name"])
	}
	sh.sort()
	return sh
}

func keySchema(v any) (hash, rng string) {
	for _, k := range v.([]any) {
		k := k.(map[string]any)
		switch k["KeyType"] {
		case "HASH":
			hash = render(k["AttributeName"])
		case "RANGE":
			rng = render(k["AttributeName"])
		}
	}
	return hash, rng
}

// emulatorShape reads the shape of what localstack.Provision created.
func emulatorShape(ctx context.Context, cfg aws.Config, res *localstack.Resources) (shape, error) {
	sh := shape{Queues: map[string]queueShape{}}
	ddb := dynamodb.NewFromConfig(cfg)
	desc, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(res.Table.Name)})
	if err != nil {
		return sh, fmt.Errorf("describe table: %w", err)
	}
	tb := desc.Table
	ts := tableShape{Name: aws.ToString(tb.TableName), Attributes: map[string]string{}, Indexes: map[string]indexShape{}}
	for _, k := range tb.KeySchema {
		if k.KeyType == "HASH" {
			ts.HashKey = aws.ToString(k.AttributeName)
		} else {
			ts.RangeKey = aws.ToString(k.AttributeName)
		}
	}
	for _, a := range tb.AttributeDefinitions {
		ts.Attributes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	for _, g := range tb.GlobalSecondaryIndexes {
		ix := indexShape{Projection: string(g.Projection.ProjectionType)}
		for _, k := range g.KeySchema {
			if k.KeyType == "HASH" {
				ix.HashKey = aws.ToString(k.AttributeName)
			} else {
				ix.RangeKey = aws.ToString(k.AttributeName)
			}
		}
		ts.Indexes[aws.ToString(g.IndexName)] = ix
	}
	if tb.BillingModeSummary != nil {
		ts.Billing = string(tb.BillingModeSummary.BillingMode)
	}
	if tb.StreamSpecification != nil && aws.ToBool(tb.StreamSpecification.StreamEnabled) {
		ts.StreamView = string(tb.StreamSpecification.StreamViewType)
	}
	ttl, err := ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(res.Table.Name)})
	if err != nil {
		return sh, fmt.Errorf("describe TTL: %w", err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && (d.TimeToLiveStatus == "ENABLED" || d.TimeToLiveStatus == "ENABLING") {
		ts.TTL = aws.ToString(d.AttributeName)
	}
	sh.Table = ts

	client := sqs.NewFromConfig(cfg)
	nameOfARN := map[string]string{}
	qs := res.Queues
	infos := []localstack.QueueInfo{qs.Decision, qs.DecisionDLQ, qs.Work, qs.WorkDLQ, qs.SignalIngest, qs.SignalIngestDLQ}
	for _, q := range infos {
		nameOfARN[q.ARN] = q.Name
	}
	for _, q := range infos {
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(q.URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
		})
		if err != nil {
			return sh, fmt.Errorf("attributes of %s: %w", q.Name, err)
		}
		a := out.Attributes
		qsh := queueShape{FIFO: a["FifoQueue"] == "true", ContentBasedDeduplication: a["ContentBasedDeduplication"] == "true"}
		if qsh.VisibilitySeconds, err = strconv.Atoi(a["VisibilityTimeout"]); err != nil {
			return sh, fmt.Errorf("%s visibility %q: %w", q.Name, a["VisibilityTimeout"], err)
		}
		if qsh.RetentionSeconds, err = strconv.Atoi(a["MessageRetentionPeriod"]); err != nil {
			return sh, fmt.Errorf("%s retention %q: %w", q.Name, a["MessageRetentionPeriod"], err)
		}
		if rp := a["RedrivePolicy"]; rp != "" {
			var policy struct {
				Target string          `json:"deadLetterTargetArn"`
				Max    json.RawMessage `json:"maxReceiveCount"`
			}
			if err := json.Unmarshal([]byte(rp), &policy); err != nil {
				return sh, fmt.Errorf("%s redrive policy %q: %w", q.Name, rp, err)
			}
			qsh.DeadLetterQueue = nameOfARN[policy.Target]
			if qsh.MaxReceiveCount, err = strconv.Atoi(strings.Trim(string(policy.Max), `"`)); err != nil {
				return sh, fmt.Errorf("%s max receive count %s: %w", q.Name, policy.Max, err)
			}
		}
		sh.Queues[q.Name] = qsh
	}

	topics, err := sns.NewFromConfig(cfg).ListTopics(ctx, &sns.ListTopicsInput{})
	if err != nil {
		return sh, fmt.Errorf("list topics: %w", err)
	}
	prefix := resources.Prefix + "-" + res.Stage + "-"
	for _, tp := range topics.Topics {
		arn := aws.ToString(tp.TopicArn)
		if name := arn[strings.LastIndex(arn, ":")+1:]; strings.HasPrefix(name, prefix) {
			sh.Topics = append(sh.Topics, name)
		}
	}
	notif, err := s3.NewFromConfig(cfg, localstack.UsePathStyle).GetBucketNotificationConfiguration(ctx,
		&s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(res.Bucket.Name)})
	if err != nil {
		return sh, fmt.Errorf("bucket notifications: %w", err)
	}
	for _, qc := range notif.QueueConfigurations {
		for _, e := range qc.Events {
			sh.BucketEvents = append(sh.BucketEvents, string(e)+" -> "+nameOfARN[aws.ToString(qc.QueueArn)])
		}
	}
	group, err := scheduler.NewFromConfig(cfg).GetScheduleGroup(ctx, &scheduler.GetScheduleGroupInput{Name: aws.String(res.SchedulerGroup.Name)})
	if err != nil {
		return sh, fmt.Errorf("schedule group: %w", err)
	}
	sh.SchedulerGroup = aws.ToString(group.Name)
	sh.sort()
	return sh, nil
}

// TestShapeAgreement proves that the deployed and the local stack have the
// same shape: the synthesized template, the Spec, and what
// localstack.Provision creates from the Spec on the emulator all reduce to
// the same table keys, indexes, stream, TTL, queue attributes and redrive,
// topics, bucket notifications and schedule group.
func TestShapeAgreement(t *testing.T) {
	full, dev := synth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*synthesized{full, dev} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			want := specShape(s.stack.Spec)
			if got := templateShape(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("template shape\n got %+v\nwant %+v (the Spec)", got, want)
			}
			// The stage name is shared with a developer's emulator when
			// AWS_ENDPOINT_URL points at one; Provision is idempotent.
			res, err := localstack.Provision(ctx, cfg, s.stack.Spec)
			if err != nil {
				t.Fatalf("Provision: %v", err)
			}
			got, err := emulatorShape(ctx, cfg, res)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("provisioned shape (%s)\n got %+v\nwant %+v (the Spec)", emulator.Kind, got, want)
			}
		})
	}
}
