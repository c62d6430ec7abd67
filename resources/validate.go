package resources

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Naming rules of the AWS services, as documented for each resource.
var (
	tableNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	queueNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,75}(\.fifo)?$`)
	topicNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,256}$`)
	groupNamePattern = regexp.MustCompile(`^[0-9a-zA-Z._-]{1,64}$`)
	// bucketNamePattern is S3's general-purpose bucket rule: 3 to 63
	// characters of lower-case letters, digits, '.' and '-', starting and
	// ending with a letter or digit.
	bucketNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	ipLikePattern     = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
)

// Validate reports every way s breaks the services' rules: a bad stage, a
// name AWS would reject, a duplicate name, a dead-letter queue that does not
// exist or does not match its queue's type, or a setting out of range.
func (s Spec) Validate() error {
	var errs []error
	if _, err := ParseStage(s.Stage); err != nil {
		errs = append(errs, err)
	}
	if !tableNamePattern.MatchString(s.Table.Name) {
		errs = append(errs, fmt.Errorf("table name %q: want 3 to 255 characters of a-z, A-Z, 0-9, '_', '-', '.'", s.Table.Name))
	}
	if s.Table.TTLAttribute == "" {
		errs = append(errs, errors.New("table: TTL attribute is empty"))
	}
	errs = append(errs, s.validateQueues()...)
	seenTopics := map[string]bool{}
	for _, t := range []Topic{s.Topics.Events, s.Topics.Signals} {
		if !topicNamePattern.MatchString(t.Name) {
			errs = append(errs, fmt.Errorf("topic name %q: want 1 to 256 characters of a-z, A-Z, 0-9, '_', '-'", t.Name))
		}
		if seenTopics[t.Name] {
			errs = append(errs, fmt.Errorf("topic name %q is used twice", t.Name))
		}
		seenTopics[t.Name] = true
	}
	if err := validateBucketName(s.Bucket.Name); err != nil {
		errs = append(errs, err)
	}
	if len(s.Bucket.NotifyEvents) == 0 {
		errs = append(errs, fmt.Errorf("bucket %q: no notification events", s.Bucket.Name))
	}
	if !groupNamePattern.MatchString(s.SchedulerGroup) {
		errs = append(errs, fmt.Errorf("scheduler group %q: want 1 to 64 characters of a-z, A-Z, 0-9, '.', '_', '-'", s.SchedulerGroup))
	}
	if s.StreamFilterAttribute == "" {
		errs = append(errs, errors.New("stream filter attribute is empty"))
	}
	return errors.Join(errs...)
}

func (s Spec) validateQueues() []error {
	var errs []error
	byName := map[string]Queue{}
	for _, q := range s.Queues.All() {
		if _, dup := byName[q.Name]; dup {
			errs = append(errs, fmt.Errorf("queue name %q is used twice", q.Name))
		}
		byName[q.Name] = q
	}
	for _, q := range s.Queues.All() {
		if !queueNamePattern.MatchString(q.Name) || len(q.Name) > 80 {
			errs = append(errs, fmt.Errorf("queue name %q: want at most 80 characters of a-z, A-Z, 0-9, '_', '-'", q.Name))
		}
		if q.FIFO != strings.HasSuffix(q.Name, ".fifo") {
			errs = append(errs, fmt.Errorf("queue %q: a queue is FIFO exactly when its name ends in .fifo", q.Name))
		}
		if q.ContentBasedDeduplication && !q.FIFO {
			errs = append(errs, fmt.Errorf("queue %q: content-based deduplication needs a FIFO queue", q.Name))
		}
		if q.VisibilityTimeout < 0 || q.VisibilityTimeout > 12*time.Hour || q.VisibilityTimeout%time.Second != 0 {
			errs = append(errs, fmt.Errorf("queue %q: visibility timeout %v: want whole seconds in [0s, 12h]", q.Name, q.VisibilityTimeout))
		}
		if q.Retention < time.Minute || q.Retention > DLQRetention || q.Retention%time.Second != 0 {
			errs = append(errs, fmt.Errorf("queue %q: retention %v: want whole seconds in [1m, 336h]", q.Name, q.Retention))
		}
		if q.DeadLetterQueue == "" {
			if q.MaxReceiveCount != 0 {
				errs = append(errs, fmt.Errorf("queue %q: max receive count without a dead-letter queue", q.Name))
			}
			continue
		}
		dlq, ok := byName[q.DeadLetterQueue]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("queue %q: dead-letter queue %q is not in the spec", q.Name, q.DeadLetterQueue))
		case dlq.FIFO != q.FIFO:
			errs = append(errs, fmt.Errorf("queue %q: dead-letter queue %q must be of the same type (FIFO or standard)", q.Name, dlq.Name))
		case dlq.DeadLetterQueue != "":
			errs = append(errs, fmt.Errorf("queue %q: dead-letter queue %q has a dead-letter queue itself", q.Name, dlq.Name))
		}
		if q.MaxReceiveCount < 1 || q.MaxReceiveCount > 1000 {
			errs = append(errs, fmt.Errorf("queue %q: max receive count %d: want 1 to 1000", q.Name, q.MaxReceiveCount))
		}
	}
	return errs
}

func validateBucketName(name string) error {
	if !bucketNamePattern.MatchString(name) || strings.Contains(name, "..") || ipLikePattern.MatchString(name) {
		return fmt.Errorf("bucket name %q: want a DNS name of 3 to 63 lower-case letters, digits, '.' and '-'", name)
	}
	return nil
}

// ValidateBucketName reports whether name is a valid general-purpose S3
// bucket name: a DNS name of 3 to 63 lower-case letters, digits, '.' and
// '-' that does not look like an IP address.
func ValidateBucketName(name string) error { return validateBucketName(name) }
