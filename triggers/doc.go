// Package triggers holds the pure logic of time triggers on EventBridge
// Scheduler: it translates a workflow's CRON and PREDEFINED time triggers
// into Scheduler cron expressions that fire exactly when model's schedule
// does, names the schedules, builds and reads the input a schedule delivers
// on each firing, and derives the deterministic values a firing needs (the
// start request id that makes it start at most one instance, and the
// fuzzy_max_delay jitter). It imports nothing from AWS; the runtime that
// creates schedules and handles firings uses it.
//
// # Schedules
//
// SchedulerCron returns the Scheduler expressions of one trigger, usually
// one. Trigger index i of workflow w becomes the schedules named
// ScheduleName(w, i, part) for each part of SchedulerCron's result;
// SchedulePrefix(w) lists all of them and no other workflow's, so a
// reconciler can list a workflow's schedules and delete those it no longer
// wants. Each schedule's target input is FiringInput(w, i); Scheduler
// replaces its <aws.scheduler.scheduled-time> with the fire time, and
// ParseFiring reads it back.
//
// # Exactly once
//
// A firing may be delivered more than once, late, or (for a trigger split
// in two expressions) by two schedules at the same instant. All deliveries
// of one (workflow, trigger, scheduled time) carry the same FiringRequestID
// and the same Jitter, so the runtime's dedup on that key starts one
// instance.
//
// # Daylight saving time
//
// Expressions are evaluated by Scheduler in the trigger's time zone, by the
// wall clock. EventBridge Scheduler documents that a fire time that does not
// exist (the hour skipped when clocks go forward) is skipped, and that a fire
// time in the hour repeated when clocks go back runs only once.
package triggers
