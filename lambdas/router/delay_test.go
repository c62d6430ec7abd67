package router

import (
	"testing"
	"time"
)

// TestDelayCountsFromNow: a timer's SQS delay is what remains until it is
// due when the router forwards it, not the delay computed at commit time.
func TestDelayCountsFromNow(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	for _, tc := range []struct {
		at   time.Duration
		want int32
	}{
		{-time.Second, 0}, {0, 0}, {time.Millisecond, 1}, {11 * time.Second, 11},
		{11*time.Second + time.Millisecond, 12}, {15 * time.Minute, 900}, {time.Hour, 900},
	} {
		if got := delayUntil(now.Add(tc.at), now); got != tc.want {
			t.Errorf("due in %s: delay %d, want %d", tc.at, got, tc.want)
		}
	}
}

// TestMarkBackstop: a JSON object gains "backstop": true, keeping its
// fields; anything else is left alone.
func TestMarkBackstop(t *testing.T) {
	for in, want := range map[string]string{
		`{"kind":"run_step","step_id":"a"}`: `{"backstop":true,"kind":"run_step","step_id":"a"}`,
		`{}`:                                `{"backstop":true}`,
		`not json`:                          `not json`,
		`[1,2]`:                             `[1,2]`,
	} {
		if got := markBackstop(in); got != want {
			t.Errorf("markBackstop(%s) = %s, want %s", in, got, want)
		}
	}
}
