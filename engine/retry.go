package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Maestro's retry defaults (limits-constants.txt).
const (
	DefaultErrorRetryLimit    = 2
	DefaultPlatformRetryLimit = 10
	defaultBackoffSecs        = 60
	defaultExponent           = 2
	defaultErrorLimitSecs     = 600
	defaultPlatformLimitSecs  = 3600
)

// retryKind selects the retry budget and backoff fields of a failure.
type retryKind int

const (
	retryError retryKind = iota
	retryPlatform
	retryTimeout
)

// fail handles a failed attempt of step i: a user or platform error within
// its retry limit waits for a retry timer (the step keeps its failed status
// but is not settled); otherwise the step ends, and its failure mode decides
// what that means for the rest of the run.
func (d *decider) fail(i int, to model.StepStatus, msg string) {
	s := &d.st.Steps[i]
	kind, retryable := retryError, false
	switch to {
	case model.StepUserFailed:
		retryable = s.ErrorRetries < d.retryLimit(i, retryError)
	case model.StepPlatformFailed:
		kind = retryPlatform
		retryable = s.PlatformRetries < d.retryLimit(i, retryPlatform)
	case model.StepTimeoutFailed:
		kind = retryTimeout
		retryable = s.TimeoutRetries < d.retryLimit(i, retryTimeout)
	}
	if retryable {
		counter := &s.ErrorRetries
		switch kind {
		case retryPlatform:
			counter = &s.PlatformRetries
		case retryTimeout:
			counter = &s.TimeoutRetries
		}
		delay := d.retryDelay(i, kind, *counter)
		*counter++
		s.Message = msg
		s.RetryAt = d.now + delay.Milliseconds()
		d.setStepStatus(i, to, fmt.Sprintf("%s; retrying in %s", orDefault(msg, string(to)), delay))
		d.out.Commands = append(d.out.Commands, StartTimer{
			StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeRetry,
			FireAt: time.UnixMilli(s.RetryAt).UTC(),
		})
		return
	}
	final := to
	switch to {
	case model.StepUserFailed, model.StepPlatformFailed:
		final = model.StepFatallyFailed
		msg = fmt.Sprintf("%s (retries exhausted: %d error, %d platform)", orDefault(msg, string(to)), s.ErrorRetries, s.PlatformRetries)
	case model.StepTimeoutFailed:
		final = model.StepTimedOut
		msg = fmt.Sprintf("%s (timeout retries exhausted: %d)", orDefault(msg, string(to)), s.TimeoutRetries)
	}
	switch d.g.nodes[i].step.FailureMode {
	case model.IgnoreFailure:
		d.endStep(i, model.StepCompletedWithError, fmt.Sprintf("%s; failure ignored (IGNORE_FAILURE)", msg))
	case model.FailImmediately:
		d.endStep(i, final, msg)
		d.failImmediately(i)
	default:
		d.endStep(i, final, msg)
	}
}

// failImmediately ends the run now: every step still in flight or waiting
// to retry is STOPPED, steps not yet created never start, and the instance
// FAILS.
func (d *decider) failImmediately(i int) {
	failed := &d.st.Steps[i]
	msg := fmt.Sprintf("step %q ended %s with FAIL_IMMEDIATELY", failed.StepID, failed.Status)
	// Step i has ended, so the ending skips it. endRun cannot fail.
	_ = d.endRun(Ending{StepStatus: model.StepStopped, StepMessage: "stopped: " + msg, RunStatus: model.WorkflowFailed, Message: msg})
}

// retryDue starts the next attempt of a step whose retry timer fired.
func (d *decider) retryDue(e TimerFired) error {
	i, ok, err := d.attemptIf(e.StepID, e.Attempt, func(s *StepState) bool { return s.RetryAt != 0 })
	if err != nil || !ok {
		return err // a duplicate or late timer changes nothing
	}
	s := &d.st.Steps[i]
	d.startCounting()
	s.Attempt++
	s.RetryAt = 0
	s.Params, s.Outputs, s.Message, s.Offloaded = nil, nil, "", false
	s.Signals, s.External, s.Cost = nil, nil, nil
	s.CreateTime, s.StartTime, s.EndTime = 0, 0, 0
	d.start(i)
	return d.advance()
}

// retryLimit returns step i's retry limit for kind.
func (d *decider) retryLimit(i int, kind retryKind) int64 {
	rp := d.g.nodes[i].step.RetryPolicy
	if kind == retryTimeout {
		if rp == nil {
			return DefaultTimeoutRetryLimit
		}
		return d.parsable(i, rp.TimeoutRetryLimit, DefaultTimeoutRetryLimit)
	}
	if kind == retryPlatform {
		if rp == nil {
			return DefaultPlatformRetryLimit
		}
		return d.parsable(i, rp.PlatformRetryLimit, DefaultPlatformRetryLimit)
	}
	if rp == nil {
		return DefaultErrorRetryLimit
	}
	return d.parsable(i, rp.ErrorRetryLimit, DefaultErrorRetryLimit)
}

// retryDelay is the wait before retry n+1 (n retries already taken):
// FIXED_BACKOFF waits backoff seconds; EXPONENTIAL_BACKOFF (the default)
// waits min(backoff * exponent^n, limit) seconds.
func (d *decider) retryDelay(i int, kind retryKind, n int64) time.Duration {
	var b *model.Backoff
	if rp := d.g.nodes[i].step.RetryPolicy; rp != nil {
		b = rp.Backoff
	}
	if b == nil {
		b = &model.Backoff{}
	}
	base, exp, limit := b.ErrorRetryBackoffInSecs, b.ErrorRetryExponent, b.ErrorRetryLimitInSecs
	defLimit := int64(defaultErrorLimitSecs)
	switch kind {
	case retryPlatform:
		base, exp, limit = b.PlatformRetryBackoffInSecs, b.PlatformRetryExponent, b.PlatformRetryLimitInSecs
		defLimit = defaultPlatformLimitSecs
	case retryTimeout:
		base, exp, limit = b.TimeoutRetryBackoffInSecs, b.TimeoutRetryExponent, b.TimeoutRetryLimitInSecs
		defLimit = defaultPlatformLimitSecs
	}
	secs := d.parsable(i, base, defaultBackoffSecs)
	if b.Type != model.FixedBackoff {
		e := float64(d.parsable(i, exp, defaultExponent))
		lim := d.parsable(i, limit, defLimit)
		v := float64(secs) * math.Pow(e, float64(n))
		if v > float64(lim) || math.IsInf(v, 0) || math.IsNaN(v) {
			v = float64(lim)
		}
		secs = int64(v)
	}
	if secs < 0 {
		secs = 0
	}
	return time.Duration(secs) * time.Second
}

// parsable resolves a ParsableLong: its number, or a "$name" / "${name}"
// reference to one of step i's params or a workflow param. A value that does
// not resolve to a whole number falls back to def.
func (d *decider) parsable(i int, pl *model.ParsableLong, def int64) int64 {
	if pl == nil {
		return def
	}
	if pl.Expr == "" {
		return pl.Value
	}
	name := strings.TrimPrefix(strings.TrimSpace(pl.Expr), "$")
	name = strings.TrimSuffix(strings.TrimPrefix(name, "{"), "}")
	v, ok := d.st.Steps[i].Params[name]
	if !ok {
		v, ok = d.st.Params[name]
	}
	if !ok {
		return def
	}
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n
		}
	}
	return def
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
