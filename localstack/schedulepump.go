package localstack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SchedulerAPI is the part of the EventBridge Scheduler client a
// SchedulePump uses.
type SchedulerAPI interface {
	ListSchedules(context.Context, *scheduler.ListSchedulesInput, ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error)
	GetSchedule(context.Context, *scheduler.GetScheduleInput, ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(context.Context, *scheduler.DeleteScheduleInput, ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// SQSSendAPI is the part of the SQS client a SchedulePump uses to deliver.
type SQSSendAPI interface {
	GetQueueUrl(context.Context, *sqs.GetQueueUrlInput, ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Defaults of SchedulePumpOptions.
const (
	// DefaultScheduleInterval is how often the schedules are listed.
	DefaultScheduleInterval = time.Second
	// DefaultMaxFiresPerPoll bounds the fires of one schedule per poll, so
	// a clock jumped far ahead catches up over several polls.
	DefaultMaxFiresPerPoll = 100
)

// Context attributes EventBridge Scheduler replaces in a target's input.
const (
	ctxScheduleARN   = "<aws.scheduler.schedule-arn>"
	ctxScheduledTime = "<aws.scheduler.scheduled-time>"
	ctxExecutionID   = "<aws.scheduler.execution-id>"
	ctxAttemptNumber = "<aws.scheduler.attempt-number>"
)

// SchedulePumpOptions tunes a SchedulePump. The zero value is ready to use.
type SchedulePumpOptions struct {
	// Interval is the polling period; zero means DefaultScheduleInterval.
	Interval time.Duration
	// Clock decides which fire times are due; nil means SystemClock.
	Clock Clock
	// MaxFiresPerPoll bounds one schedule's fires per poll; zero means
	// DefaultMaxFiresPerPoll.
	MaxFiresPerPoll int
	// Logger receives fires and errors; nil discards.
	Logger *slog.Logger
}

// SchedulePump plays EventBridge Scheduler for one schedule group: every
// Interval it lists the group's schedules and delivers the target input
// of each fire time that is due by the Clock. at() schedules fire once
// (and are deleted when their ActionAfterCompletion is DELETE); rate() and
// cron() schedules fire at every due time not yet fired. Fire times are
// exact (a FLEXIBLE time window fires at the window's start). Targets must
// be SQS queues.
//
// Which recurring fire times have been fired lives in memory: a recurring
// schedule counts from the time (by the Clock) the pump first sees it, or
// its StartDate if later, so a test should let the pump see a new schedule
// (Poll) before it advances a ManualClock.
type SchedulePump struct {
	sched SchedulerAPI
	sqs   SQSSendAPI
	group string
	opts  SchedulePumpOptions
	log   *slog.Logger

	// Owned by Poll.
	states    map[string]*scheduleState
	queueURLs map[string]string // by queue ARN

	rounds atomic.Uint64 // completed Run polls
}

// Rounds returns how many polls Run has completed: once it has grown by
// two, every schedule that existed before has been seen (and fired if due).
func (p *SchedulePump) Rounds() uint64 { return p.rounds.Load() }

// scheduleState is what the pump knows of one schedule.
type scheduleState struct {
	modified time.Time // LastModificationDate of detail
	detail   *scheduler.GetScheduleOutput
	expr     scheduleExpr
	exprErr  error     // why expr is nil
	cursor   time.Time // the last fire time delivered, or just before the first
	finished bool      // no fire time is left
}

// NewSchedulePump returns a pump for the schedules of group that delivers
// to SQS with sqsClient.
func NewSchedulePump(sched SchedulerAPI, sqsClient SQSSendAPI, group string, opts SchedulePumpOptions) *SchedulePump {
	opts.Interval = positiveOr(opts.Interval, DefaultScheduleInterval)
	opts.MaxFiresPerPoll = positiveOr(opts.MaxFiresPerPoll, DefaultMaxFiresPerPoll)
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	return &SchedulePump{
		sched:     sched,
		sqs:       sqsClient,
		group:     group,
		opts:      opts,
		log:       pumpLogger(opts.Logger, "pump", "schedule", "group", group),
		states:    map[string]*scheduleState{},
		queueURLs: map[string]string{},
	}
}

// Run polls every Interval until ctx is done and returns nil. Errors of
// single polls are logged; the failed fires are retried on the next poll.
func (p *SchedulePump) Run(ctx context.Context) error {
	ticker := time.NewTicker(p.opts.Interval)
	defer ticker.Stop()
	for {
		if err := p.Poll(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("schedule poll", "err", err)
		}
		p.rounds.Add(1)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Poll lists the group's schedules once and fires those due. It must not
// run concurrently with itself or Run.
func (p *SchedulePump) Poll(ctx context.Context) error {
	now := p.opts.Clock.Now()
	listed := map[string]bool{}
	var errs []error
	pages := scheduler.NewListSchedulesPaginator(p.sched, &scheduler.ListSchedulesInput{GroupName: aws.String(p.group)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list schedules of group %s: %w", p.group, err)
		}
		for _, sum := range page.Schedules {
			name := aws.ToString(sum.Name)
			listed[name] = true
			if err := p.visit(ctx, sum, now); err != nil {
				errs = append(errs, fmt.Errorf("schedule %s: %w", name, err))
			}
		}
	}
	for name := range p.states {
		if !listed[name] {
			delete(p.states, name)
		}
	}
	return errors.Join(errs...)
}

// visit brings one schedule's state up to date and fires its due times.
func (p *SchedulePump) visit(ctx context.Context, sum schedtypes.ScheduleSummary, now time.Time) error {
	name := aws.ToString(sum.Name)
	st := p.states[name]
	modified := aws.ToTime(sum.LastModificationDate)
	if st == nil || sum.LastModificationDate == nil || !modified.Equal(st.modified) || sum.State != st.detail.State {
		detail, err := p.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(p.group)})
		var gone *schedtypes.ResourceNotFoundException
		if errors.As(err, &gone) {
			delete(p.states, name) // deleted since it was listed
			return nil
		}
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		if st == nil || scheduleChanged(st.detail, detail) {
			st = newScheduleState(detail, now)
			p.states[name] = st
			if st.exprErr != nil {
				p.log.Error("schedule not supported; it will not fire", "schedule", name, "err", st.exprErr)
			}
		}
		st.detail, st.modified = detail, modified
	}
	if st.expr == nil || st.finished {
		return nil
	}
	if st.detail.State == schedtypes.ScheduleStateDisabled {
		if st.expr.recurring() && now.After(st.cursor) {
			st.cursor = now // a disabled schedule misses its fire times
		}
		return nil
	}
	d := st.detail
	for range p.opts.MaxFiresPerPoll {
		at, ok := st.expr.next(st.cursor)
		if ok && st.expr.recurring() && d.EndDate != nil && at.After(*d.EndDate) {
			ok = false
		}
		if !ok {
			st.finished = true
			break
		}
		if at.After(now) {
			break
		}
		if err := p.fire(ctx, d, at); err != nil {
			return fmt.Errorf("fire at %s: %w", at.UTC().Format(time.RFC3339), err)
		}
		st.cursor = at
	}
	if st.finished && d.ActionAfterCompletion == schedtypes.ActionAfterCompletionDelete {
		_, err := p.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: d.Name, GroupName: aws.String(p.group)})
		var gone *schedtypes.ResourceNotFoundException
		if err != nil && !errors.As(err, &gone) {
			return fmt.Errorf("delete after completion: %w", err)
		}
		delete(p.states, aws.ToString(d.Name))
		p.log.Debug("deleted completed schedule", "schedule", aws.ToString(d.Name))
	}
	return nil
}

// scheduleChanged reports whether an update changed when the schedule fires.
func scheduleChanged(old, cur *scheduler.GetScheduleOutput) bool {
	return aws.ToString(old.ScheduleExpression) != aws.ToString(cur.ScheduleExpression) ||
		aws.ToString(old.ScheduleExpressionTimezone) != aws.ToString(cur.ScheduleExpressionTimezone) ||
		!aws.ToTime(old.StartDate).Equal(aws.ToTime(cur.StartDate))
}

// newScheduleState parses a schedule first seen (or changed) at now.
func newScheduleState(d *scheduler.GetScheduleOutput, now time.Time) *scheduleState {
	start := now
	if d.StartDate != nil && d.StartDate.After(start) {
		start = *d.StartDate
	}
	expr, err := parseScheduleExpression(aws.ToString(d.ScheduleExpression), aws.ToString(d.ScheduleExpressionTimezone), start)
	st := &scheduleState{expr: expr, exprErr: err}
	if expr != nil && expr.recurring() {
		st.cursor = start.Add(-time.Nanosecond)
	}
	return st
}

// fire delivers the schedule's target input for fire time at.
func (p *SchedulePump) fire(ctx context.Context, d *scheduler.GetScheduleOutput, at time.Time) error {
	target := d.Target
	if target == nil {
		return errors.New("schedule has no target")
	}
	arn := aws.ToString(target.Arn)
	url, err := p.queueURL(ctx, arn)
	if err != nil {
		return err
	}
	name := aws.ToString(d.Name)
	scheduled := at.UTC().Format("2006-01-02T15:04:05Z")
	sum := sha256.Sum256([]byte(aws.ToString(d.Arn) + "@" + scheduled))
	body := strings.NewReplacer(
		ctxScheduleARN, aws.ToString(d.Arn),
		ctxScheduledTime, scheduled,
		ctxExecutionID, hex.EncodeToString(sum[:8]),
		ctxAttemptNumber, "1",
	).Replace(aws.ToString(target.Input))
	if body == "" {
		body = "{}"
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}
	if strings.HasSuffix(arn, ".fifo") {
		if target.SqsParameters == nil || aws.ToString(target.SqsParameters.MessageGroupId) == "" {
			return fmt.Errorf("target %s is a FIFO queue but the schedule sets no SqsParameters.MessageGroupId", arn)
		}
		in.MessageGroupId = target.SqsParameters.MessageGroupId
		in.MessageDeduplicationId = aws.String(name + "@" + at.UTC().Format("20060102T150405.000000000Z"))
	}
	if _, err := p.sqs.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("send to %s: %w", arn, err)
	}
	p.log.Debug("fired schedule", "schedule", name, "at", scheduled, "target", arn)
	return nil
}

// queueURL resolves an SQS queue ARN (arn:PARTITION:sqs:REGION:ACCOUNT:NAME).
func (p *SchedulePump) queueURL(ctx context.Context, arn string) (string, error) {
	if url, ok := p.queueURLs[arn]; ok {
		return url, nil
	}
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" {
		return "", fmt.Errorf("target %q is not an SQS queue ARN; only SQS targets are emulated", arn)
	}
	out, err := p.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		return "", fmt.Errorf("resolve queue %s: %w", arn, err)
	}
	url := aws.ToString(out.QueueUrl)
	p.queueURLs[arn] = url
	return url, nil
}
