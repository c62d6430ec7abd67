package resources

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStage(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{"local", false},
		{"dev-1", false},
		{"a", false},
		{"abcdefghij0123456789", false},
		{"", true},
		{"abcdefghij0123456789x", true},
		{"Local", true},
		{"dev_1", true},
		{"dev.1", true},
		{"dev 1", true},
		{"prod/eu", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStage(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "invalid stage") {
					t.Fatalf("ParseStage(%q) error = %v, want an invalid stage error", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.in {
				t.Fatalf("ParseStage(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.in)
			}
		})
	}
}

func TestForStageNames(t *testing.T) {
	s := ForStage("local")
	tests := []struct {
		what, got, want string
	}{
		{"table", s.Table.Name, "maestro-local"},
		{"decision", s.Queues.Decision.Name, "maestro-local-decision.fifo"},
		{"decision dlq", s.Queues.DecisionDLQ.Name, "maestro-local-decision-dlq.fifo"},
		{"work", s.Queues.Work.Name, "maestro-local-work"},
		{"work dlq", s.Queues.WorkDLQ.Name, "maestro-local-work-dlq"},
		{"ingest", s.Queues.SignalIngest.Name, "maestro-local-signal-ingest"},
		{"ingest dlq", s.Queues.SignalIngestDLQ.Name, "maestro-local-signal-ingest-dlq"},
		{"events topic", s.Topics.Events.Name, "maestro-local-events"},
		{"signals topic", s.Topics.Signals.Name, "maestro-local-signals"},
		{"bucket", s.Bucket.Name, "maestro-local-signals"},
		{"scheduler group", s.SchedulerGroup, "maestro-local"},
		{"stream filter", s.StreamFilterAttribute, "ob"},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestForStageTable(t *testing.T) {
	s := ForStage("local")
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := Table{
		Name:           "maestro-local",
		PartitionKey:   KeyAttribute{Name: "pk", Type: "S"},
		SortKey:        KeyAttribute{Name: "sk", Type: "S"},
		BillingMode:    "PAY_PER_REQUEST",
		StreamViewType: "NEW_AND_OLD_IMAGES",
		TTLAttribute:   "ttl",
		GlobalIndexes: []Index{{
			Name:         "gsi1",
			PartitionKey: KeyAttribute{Name: "gsi1pk", Type: "S"},
			SortKey:      KeyAttribute{Name: "gsi1sk", Type: "S"},
			Projection:   "KEYS_ONLY",
		}},
	}
	if !reflect.DeepEqual(s.Table, want) {
		t.Errorf("table = %+v\nwant    %+v", s.Table, want)
	}
	if got, want := s.Bucket.NotifyEvents, []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}; !slices.Equal(got, want) {
		t.Errorf("bucket events = %v, want %v", got, want)
	}
}

func TestForStageQueues(t *testing.T) {
	q := ForStage("local").Queues
	const day = 24 * time.Hour
	tests := []struct {
		name       string
		q          Queue
		fifo       bool
		dedup      bool
		visibility time.Duration
		retention  time.Duration
		dlq        string
		maxRecv    int
	}{
		{"decision", q.Decision, true, true, 30 * time.Second, 4 * day, q.DecisionDLQ.Name, 5},
		{"work", q.Work, false, false, 60 * time.Second, 4 * day, q.WorkDLQ.Name, 5},
		{"ingest", q.SignalIngest, false, false, 30 * time.Second, 4 * day, q.SignalIngestDLQ.Name, 5},
		{"decision dlq", q.DecisionDLQ, true, false, 30 * time.Second, 14 * day, "", 0},
		{"work dlq", q.WorkDLQ, false, false, 30 * time.Second, 14 * day, "", 0},
		{"ingest dlq", q.SignalIngestDLQ, false, false, 30 * time.Second, 14 * day, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.q
			if got.FIFO != tt.fifo || got.ContentBasedDeduplication != tt.dedup ||
				got.VisibilityTimeout != tt.visibility || got.Retention != tt.retention ||
				got.DeadLetterQueue != tt.dlq || got.MaxReceiveCount != tt.maxRecv {
				t.Errorf("queue = %+v; want fifo=%v dedup=%v visibility=%v retention=%v dlq=%q maxReceive=%d",
					got, tt.fifo, tt.dedup, tt.visibility, tt.retention, tt.dlq, tt.maxRecv)
			}
		})
	}
}

func TestQueuesAllOrdersDLQsFirst(t *testing.T) {
	all := ForStage("x").Queues.All()
	if len(all) != 6 {
		t.Fatalf("All() has %d queues, want 6", len(all))
	}
	created := map[string]bool{}
	for _, q := range all {
		if q.DeadLetterQueue != "" && !created[q.DeadLetterQueue] {
			t.Errorf("%s listed before its DLQ %s", q.Name, q.DeadLetterQueue)
		}
		created[q.Name] = true
	}
}

func TestNamesUniqueWithinAndAcrossStages(t *testing.T) {
	stages := []string{"local", "dev", "prod", "local-2", "abcdefghij0123456789"}
	seen := map[string]string{}
	add := func(kind, name, stage string) {
		key := kind + ":" + name
		if prev, ok := seen[key]; ok {
			t.Errorf("%s name %q used by stage %q and %q", kind, name, prev, stage)
		}
		seen[key] = stage
	}
	for _, st := range stages {
		s := ForStage(st)
		if err := s.Validate(); err != nil {
			t.Fatalf("stage %s: %v", st, err)
		}
		add("table", s.Table.Name, st)
		for _, q := range s.Queues.All() {
			add("queue", q.Name, st)
		}
		add("topic", s.Topics.Events.Name, st)
		add("topic", s.Topics.Signals.Name, st)
		add("bucket", s.Bucket.Name, st)
		add("group", s.SchedulerGroup, st)
	}
}

func TestLongestStageFitsLimits(t *testing.T) {
	s := ForStage(strings.Repeat("z", 20))
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, q := range s.Queues.All() {
		if len(q.Name) > 80 {
			t.Errorf("queue name %q longer than 80", q.Name)
		}
	}
	if len(s.Bucket.Name) > 63 {
		t.Errorf("bucket name %q longer than 63", s.Bucket.Name)
	}
}

func TestForStageReturnsIndependentSlices(t *testing.T) {
	a := ForStage("a")
	a.Bucket.NotifyEvents[0] = "changed"
	a.Table.GlobalIndexes[0].Name = "changed"
	b := ForStage("a")
	if b.Bucket.NotifyEvents[0] != S3ObjectCreated || b.Table.GlobalIndexes[0].Name != GSI1 {
		t.Errorf("ForStage shares slices between calls")
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   string
	}{
		{"bad stage", func(s *Spec) { s.Stage = "Bad_Stage" }, "invalid stage"},
		{"short table", func(s *Spec) { s.Table.Name = "ab" }, "table name"},
		{"no ttl", func(s *Spec) { s.Table.TTLAttribute = "" }, "TTL attribute"},
		{"duplicate queue", func(s *Spec) { s.Queues.Work.Name = s.Queues.SignalIngest.Name }, "used twice"},
		{"fifo without suffix", func(s *Spec) { s.Queues.Work.FIFO = true }, "ends in .fifo"},
		{"dedup on standard", func(s *Spec) { s.Queues.Work.ContentBasedDeduplication = true }, "content-based"},
		{"missing dlq", func(s *Spec) { s.Queues.Work.DeadLetterQueue = "nope" }, "not in the spec"},
		{"dlq type mismatch", func(s *Spec) { s.Queues.Work.DeadLetterQueue = s.Queues.DecisionDLQ.Name }, "same type"},
		{"chained dlq", func(s *Spec) { s.Queues.Work.DeadLetterQueue = s.Queues.SignalIngest.Name }, "has a dead-letter queue itself"},
		{"receive count", func(s *Spec) { s.Queues.Work.MaxReceiveCount = 0 }, "max receive count"},
		{"receive count no dlq", func(s *Spec) { s.Queues.WorkDLQ.MaxReceiveCount = 3 }, "without a dead-letter queue"},
		{"visibility", func(s *Spec) { s.Queues.Work.VisibilityTimeout = 13 * time.Hour }, "visibility timeout"},
		{"retention", func(s *Spec) { s.Queues.Work.Retention = 15 * 24 * time.Hour }, "retention"},
		{"long queue", func(s *Spec) { s.Queues.Work.Name = strings.Repeat("q", 81) }, "queue name"},
		{"bucket upper", func(s *Spec) { s.Bucket.Name = "Maestro-signals" }, "bucket name"},
		{"bucket ip", func(s *Spec) { s.Bucket.Name = "192.168.1.1" }, "bucket name"},
		{"bucket dots", func(s *Spec) { s.Bucket.Name = "a..b" }, "bucket name"},
		{"bucket short", func(s *Spec) { s.Bucket.Name = "ab" }, "bucket name"},
		{"no bucket events", func(s *Spec) { s.Bucket.NotifyEvents = nil }, "notification events"},
		{"same topics", func(s *Spec) { s.Topics.Signals = s.Topics.Events }, "used twice"},
		{"topic chars", func(s *Spec) { s.Topics.Events.Name = "a.b" }, "topic name"},
		{"group chars", func(s *Spec) { s.SchedulerGroup = "a/b" }, "scheduler group"},
		{"no filter", func(s *Spec) { s.StreamFilterAttribute = "" }, "stream filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ForStage("local")
			tt.mutate(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStreamFilterPattern(t *testing.T) {
	got := ForStage("local").StreamFilterPattern()
	want := map[string]any{"dynamodb": map[string]any{"NewImage": map[string]any{
		"ob": map[string]any{"S": []any{map[string]any{"exists": true}}},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StreamFilterPattern() = %#v, want %#v", got, want)
	}
}

func TestValidateBucketName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"maestro-dev-signals", true},
		{"my.bucket-1", true},
		{"ab", false},
		{"Upper", false},
		{"10.0.0.1", false},
		{"a..b", false},
		{"-start", false},
	} {
		if err := ValidateBucketName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateBucketName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
