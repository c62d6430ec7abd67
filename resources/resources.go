// Package resources describes the shape of every AWS resource Maestro uses:
// the DynamoDB table, the SQS queues, the SNS topics, the S3 bucket and the
// EventBridge Scheduler group.
//
// It is the single source of truth for names and settings. The CDK app
// (infra/) and the local stack (localstack/) both provision from a [Spec],
// so the package holds plain data only and imports nothing from AWS.
package resources

import (
	"fmt"
	"regexp"
	"time"
)

// Prefix starts every physical resource name.
const Prefix = "maestro"

// Attribute names of the table's items and indexes.
const (
	// AttrPK is the table's partition key attribute (type S).
	AttrPK = "pk"
	// AttrSK is the table's sort key attribute (type S).
	AttrSK = "sk"
	// AttrGSI1PK is the partition key attribute of index GSI1 (type S).
	AttrGSI1PK = "gsi1pk"
	// AttrGSI1SK is the sort key attribute of index GSI1 (type S).
	AttrGSI1SK = "gsi1sk"
	// AttrTTL is the table's time-to-live attribute (a number of epoch seconds).
	AttrTTL = "ttl"
	// AttrOutbox is the attribute that marks an item written with outbox
	// work; the stream router only needs records whose new image has it.
	AttrOutbox = "ob"
)

// GSI1 is the name of the table's one global secondary index.
const GSI1 = "gsi1"

// Table attribute types, as DynamoDB spells them.
const (
	// TypeString is DynamoDB's string scalar type.
	TypeString = "S"
	// TypeNumber is DynamoDB's number scalar type.
	TypeNumber = "N"
)

// Table settings, as DynamoDB spells them.
const (
	// BillingPayPerRequest is on-demand capacity.
	BillingPayPerRequest = "PAY_PER_REQUEST"
	// StreamNewAndOldImages makes stream records carry both item images.
	StreamNewAndOldImages = "NEW_AND_OLD_IMAGES"
	// ProjectionAll copies every attribute into an index.
	ProjectionAll = "ALL"
	// ProjectionKeysOnly copies only the table's and the index's keys.
	ProjectionKeysOnly = "KEYS_ONLY"
)

// S3 event names the signals bucket notifies about.
const (
	// S3ObjectCreated matches every object-created event.
	S3ObjectCreated = "s3:ObjectCreated:*"
	// S3ObjectRemoved matches every object-removed event.
	S3ObjectRemoved = "s3:ObjectRemoved:*"
)

// Retention and redrive defaults shared by the queues.
const (
	// QueueRetention is how long a work queue keeps a message.
	QueueRetention = 4 * 24 * time.Hour
	// DLQRetention is how long a dead-letter queue keeps a message (SQS's maximum).
	DLQRetention = 14 * 24 * time.Hour
	// MaxReceiveCount is how often a message is received before it moves to its DLQ.
	MaxReceiveCount = 5
)

// stagePattern is what a stage name may look like: it becomes part of
// table, queue, topic and bucket names, so it is kept DNS-safe and short.
var stagePattern = regexp.MustCompile(`^[a-z0-9-]{1,20}$`)

// ParseStage checks that s is a valid stage name (1 to 20 characters of
// lower-case letters, digits and '-') and returns it.
func ParseStage(s string) (string, error) {
	if !stagePattern.MatchString(s) {
		return "", fmt.Errorf("invalid stage %q: want 1 to 20 characters of a-z, 0-9 and '-'", s)
	}
	return s, nil
}

// KeyAttribute is one key attribute of a table or index.
type KeyAttribute struct {
	// Name is the attribute name.
	Name string
	// Type is the DynamoDB scalar type: TypeString or TypeNumber.
	Type string
}

// Index is a global secondary index.
type Index struct {
	// Name is the index name.
	Name string
	// PartitionKey is the index's hash key.
	PartitionKey KeyAttribute
	// SortKey is the index's range key.
	SortKey KeyAttribute
	// Projection is the projection type (ProjectionAll or ProjectionKeysOnly).
	Projection string
}

// Table describes the one DynamoDB table.
type Table struct {
	// Name is the physical table name.
	Name string
	// PartitionKey is the table's hash key.
	PartitionKey KeyAttribute
	// SortKey is the table's range key.
	SortKey KeyAttribute
	// BillingMode is the capacity mode (BillingPayPerRequest).
	BillingMode string
	// StreamViewType is what stream records carry (StreamNewAndOldImages).
	StreamViewType string
	// TTLAttribute is the time-to-live attribute name.
	TTLAttribute string
	// GlobalIndexes are the table's global secondary indexes.
	GlobalIndexes []Index
}

// Queue describes one SQS queue.
type Queue struct {
	// Name is the physical queue name; FIFO queue names end in ".fifo".
	Name string
	// FIFO is whether the queue is a FIFO queue.
	FIFO bool
	// ContentBasedDeduplication lets a FIFO queue derive the deduplication
	// id from the body when a sender gives none (EventBridge Scheduler
	// requires it of FIFO targets).
	ContentBasedDeduplication bool
	// VisibilityTimeout is how long a received message stays hidden.
	VisibilityTimeout time.Duration
	// Retention is how long the queue keeps a message.
	Retention time.Duration
	// DeadLetterQueue is the Name of the queue that receives messages after
	// MaxReceiveCount receives; empty for a dead-letter queue itself.
	DeadLetterQueue string
	// MaxReceiveCount is the number of receives before a message moves to
	// DeadLetterQueue; zero when there is no dead-letter queue.
	MaxReceiveCount int
}

// Queues holds every queue of a stage.
type Queues struct {
	// Decision is the FIFO queue of decision tasks, one message group per
	// workflow instance, so an instance's decisions are serialised.
	Decision Queue
	// DecisionDLQ is the FIFO dead-letter queue of Decision.
	DecisionDLQ Queue
	// Work is the standard queue of step work and timers.
	Work Queue
	// WorkDLQ is the dead-letter queue of Work.
	WorkDLQ Queue
	// SignalIngest receives S3 object events and SNS signal messages.
	SignalIngest Queue
	// SignalIngestDLQ is the dead-letter queue of SignalIngest.
	SignalIngestDLQ Queue
}

// All returns every queue, dead-letter queues before the queues that use
// them, so they can be created in order.
func (q Queues) All() []Queue {
	return []Queue{q.DecisionDLQ, q.WorkDLQ, q.SignalIngestDLQ, q.Decision, q.Work, q.SignalIngest}
}

// Topic describes one SNS topic.
type Topic struct {
	// Name is the physical topic name.
	Name string
}

// Topics holds every topic of a stage.
type Topics struct {
	// Events fans out workflow and step status changes.
	Events Topic
	// Signals receives incoming signals; it delivers to the SignalIngest queue.
	Signals Topic
}

// Bucket describes the S3 bucket whose object events are signals.
type Bucket struct {
	// Name is the bucket name: DNS-valid and lower-case. In AWS bucket names
	// are global, so a deployment may need to add an account-specific suffix.
	Name string
	// NotifyEvents are the S3 events sent to the SignalIngest queue.
	NotifyEvents []string
}

// Spec is the complete resource shape of one stage.
type Spec struct {
	// Stage is the stage name every physical name carries.
	Stage string
	// Table is the one DynamoDB table.
	Table Table
	// Queues are the SQS queues.
	Queues Queues
	// Topics are the SNS topics.
	Topics Topics
	// Bucket is the signals bucket.
	Bucket Bucket
	// SchedulerGroup is the EventBridge Scheduler group that holds the
	// stage's timers and time triggers.
	SchedulerGroup string
	// StreamFilterAttribute stands for the stream event-source filter: the
	// stream router only needs records whose NEW image has this attribute.
	StreamFilterAttribute string
}

// ForStage returns the resource shape of a stage. The stage should come from
// ParseStage; Validate reports a bad one.
func ForStage(stage string) Spec {
	base := Prefix + "-" + stage
	dlq := func(name string, fifo bool) Queue {
		q := Queue{Name: name + "-dlq", FIFO: fifo, VisibilityTimeout: 30 * time.Second, Retention: DLQRetention}
		if fifo {
			q.Name += ".fifo"
		}
		return q
	}
	decisionDLQ := dlq(base+"-decision", true)
	workDLQ := dlq(base+"-work", false)
	ingestDLQ := dlq(base+"-signal-ingest", false)
	return Spec{
		Stage: stage,
		Table: Table{
			Name:           base,
			PartitionKey:   KeyAttribute{Name: AttrPK, Type: TypeString},
			SortKey:        KeyAttribute{Name: AttrSK, Type: TypeString},
			BillingMode:    BillingPayPerRequest,
			StreamViewType: StreamNewAndOldImages,
			TTLAttribute:   AttrTTL,
			GlobalIndexes: []Index{{
				Name:         GSI1,
				PartitionKey: KeyAttribute{Name: AttrGSI1PK, Type: TypeString},
				SortKey:      KeyAttribute{Name: AttrGSI1SK, Type: TypeString},
				// The sweep index (see package store): keys are all the
				// sweeper reads, and a run item's body is not copied on
				// every commit.
				Projection: ProjectionKeysOnly,
			}},
		},
		Queues: Queues{
			Decision: Queue{
				Name:                      base + "-decision.fifo",
				FIFO:                      true,
				ContentBasedDeduplication: true,
				VisibilityTimeout:         30 * time.Second,
				Retention:                 QueueRetention,
				DeadLetterQueue:           decisionDLQ.Name,
				MaxReceiveCount:           MaxReceiveCount,
			},
			DecisionDLQ: decisionDLQ,
			Work: Queue{
				Name:              base + "-work",
				VisibilityTimeout: 60 * time.Second,
				Retention:         QueueRetention,
				DeadLetterQueue:   workDLQ.Name,
				MaxReceiveCount:   MaxReceiveCount,
			},
			WorkDLQ: workDLQ,
			SignalIngest: Queue{
				Name:              base + "-signal-ingest",
				VisibilityTimeout: 30 * time.Second,
				Retention:         QueueRetention,
				DeadLetterQueue:   ingestDLQ.Name,
				MaxReceiveCount:   MaxReceiveCount,
			},
			SignalIngestDLQ: ingestDLQ,
		},
		Topics: Topics{
			Events:  Topic{Name: base + "-events"},
			Signals: Topic{Name: base + "-signals"},
		},
		Bucket: Bucket{
			Name:         base + "-signals",
			NotifyEvents: []string{S3ObjectCreated, S3ObjectRemoved},
		},
		SchedulerGroup:        base,
		StreamFilterAttribute: AttrOutbox,
	}
}

// StreamFilterPattern returns the Lambda event-source filter pattern of the
// stream router's DynamoDB event source mapping: it passes the records whose
// NEW image has StreamFilterAttribute as a string (the outbox is a JSON
// string). Records of deleted items have no new image, so they never pass.
// The local stack applies the same rule in its stream pump.
func (s Spec) StreamFilterPattern() map[string]any {
	return map[string]any{
		"dynamodb": map[string]any{
			"NewImage": map[string]any{
				s.StreamFilterAttribute: map[string]any{
					TypeString: []any{map[string]any{"exists": true}},
				},
			},
		},
	}
}

// FunctionMemoryMB is the memory the stack deploys the function of
// handler ("api", "router", "decider", "worker", "signals") with unless
// configured otherwise: what infra deploys, what the local stack bills a
// run's share of an invocation at, and what the benchmark prices.
func FunctionMemoryMB(handler string) int {
	switch handler {
	case "api", "decider":
		return 512
	default: // router, worker, signals
		return 256
	}
}
