// Package schedules keeps the recurring EventBridge Scheduler schedules of
// time triggers: it implements orchestrator.TriggerSchedules over the AWS
// SDK, reconciling the schedules of one workflow (one name prefix) with the
// wanted set.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// Client is the subset of the EventBridge Scheduler client Syncer uses.
type Client interface {
	ListSchedules(ctx context.Context, in *scheduler.ListSchedulesInput, opts ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error)
	GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	UpdateSchedule(ctx context.Context, in *scheduler.UpdateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// Syncer reconciles time-trigger schedules in one schedule group. Every
// schedule targets the work queue through the role Scheduler assumes.
type Syncer struct {
	client    Client
	group     string
	roleARN   string
	targetARN string
}

var _ orchestrator.TriggerSchedules = (*Syncer)(nil)

// New returns a Syncer over group whose schedules send to targetARN (the
// work queue) as roleARN.
func New(client Client, group, roleARN, targetARN string) *Syncer {
	return &Syncer{client: client, group: group, roleARN: roleARN, targetARN: targetARN}
}

// Sync implements orchestrator.TriggerSchedules: it creates the wanted
// schedules that are missing, updates those whose expression, time zone,
// input, target, role, window or state differ, and deletes the schedules
// with the prefix that are not wanted. It is idempotent; a concurrent sync
// of the same workflow ends in the same set.
func (s *Syncer) Sync(ctx context.Context, prefix string, want []orchestrator.ScheduleSpec) error {
	have := map[string]bool{}
	pages := scheduler.NewListSchedulesPaginator(s.client, &scheduler.ListSchedulesInput{
		GroupName: aws.String(s.group), NamePrefix: aws.String(prefix),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("schedules: list %s*: %w", prefix, err)
		}
		for _, sc := range page.Schedules {
			// Emulators may ignore NamePrefix; the prefix check keeps
			// other workflows' schedules out either way.
			if name := aws.ToString(sc.Name); strings.HasPrefix(name, prefix) {
				have[name] = true
			}
		}
	}
	wanted := map[string]bool{}
	for _, w := range want {
		if !strings.HasPrefix(w.Name, prefix) {
			return fmt.Errorf("schedules: %s does not start with %s", w.Name, prefix)
		}
		wanted[w.Name] = true
		if have[w.Name] {
			if err := s.update(ctx, w); err != nil {
				return err
			}
			continue
		}
		if err := s.create(ctx, w); err != nil {
			return err
		}
	}
	stale := make([]string, 0, len(have))
	for name := range have {
		if !wanted[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		_, err := s.client.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(s.group)})
		var gone *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &gone) {
			return fmt.Errorf("schedules: delete %s: %w", name, err)
		}
	}
	return nil
}

// schedule is the request that sets w's schedule: CreateSchedule's, and,
// converted, UpdateSchedule's (the two requests have the same fields).
func (s *Syncer) schedule(w orchestrator.ScheduleSpec) *scheduler.CreateScheduleInput {
	return &scheduler.CreateScheduleInput{
		Name:                       aws.String(w.Name),
		GroupName:                  aws.String(s.group),
		ScheduleExpression:         aws.String(w.Expression),
		ScheduleExpressionTimezone: aws.String(w.Timezone),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		State:                      types.ScheduleStateEnabled,
		Target:                     &types.Target{Arn: aws.String(s.targetARN), RoleArn: aws.String(s.roleARN), Input: aws.String(w.Input)},
	}
}

func (s *Syncer) create(ctx context.Context, w orchestrator.ScheduleSpec) error {
	_, err := s.client.CreateSchedule(ctx, s.schedule(w))
	var conflict *types.ConflictException
	if errors.As(err, &conflict) {
		return s.update(ctx, w) // created by a concurrent sync
	}
	if err != nil {
		return fmt.Errorf("schedules: create %s: %w", w.Name, err)
	}
	return nil
}

// update rewrites a schedule when it differs from what create would have
// made of w: another role (a redeployed stack's), another target, a
// flexible window or a disabled state are repaired too.
func (s *Syncer) update(ctx context.Context, w orchestrator.ScheduleSpec) error {
	cur, err := s.client.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(w.Name), GroupName: aws.String(s.group)})
	var gone *types.ResourceNotFoundException
	if errors.As(err, &gone) {
		return s.create(ctx, w)
	}
	if err != nil {
		return fmt.Errorf("schedules: get %s: %w", w.Name, err)
	}
	if aws.ToString(cur.ScheduleExpression) == w.Expression && aws.ToString(cur.ScheduleExpressionTimezone) == w.Timezone &&
		cur.Target != nil && aws.ToString(cur.Target.Input) == w.Input && aws.ToString(cur.Target.Arn) == s.targetARN &&
		aws.ToString(cur.Target.RoleArn) == s.roleARN &&
		cur.FlexibleTimeWindow != nil && cur.FlexibleTimeWindow.Mode == types.FlexibleTimeWindowModeOff &&
		cur.State == types.ScheduleStateEnabled {
		return nil
	}
	_, err = s.client.UpdateSchedule(ctx, (*scheduler.UpdateScheduleInput)(s.schedule(w)))
	if err != nil {
		return fmt.Errorf("schedules: update %s: %w", w.Name, err)
	}
	return nil
}
