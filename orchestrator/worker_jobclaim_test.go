package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
)

// launchingJobs is a rig job runner whose every hand-over launches a job
// of its own name (an ECS task ARN differs per launch); before answering
// its first launch it runs hook.
type launchingJobs struct {
	*rigJobRunner
	mu       sync.Mutex
	launches int
	hook     func()
}

func (j *launchingJobs) Dispatch(ctx context.Context, m StepWork, token string) (Handover, *engine.StepFinished, error) {
	h, res, err := j.rigJobRunner.Dispatch(ctx, m, token)
	j.mu.Lock()
	j.launches++
	n, hook := j.launches, j.hook
	j.mu.Unlock()
	h.Job = fmt.Sprintf("%s#%d", h.Job, n)
	if n == 1 && hook != nil {
		hook()
	}
	return h, res, err
}

// TestWorkerCancelsTheJobItCouldNotRecord: a worker whose claim was lost
// while it launched the step's job (its lease ran out and the next
// delivery launched the step again) cannot record the job as the
// attempt's; it cancels the job it launched instead of leaving it to run
// unwatched.
func TestWorkerCancelsTheJobItCouldNotRecord(t *testing.T) {
	r := newRoleRig(t)
	m := rigOne(t, r, "orphan", "")
	jobs := &launchingJobs{rigJobRunner: &rigJobRunner{rigCallback: &rigCallback{jobs: true}}}
	runners := rigRunners(jobs)
	jobs.hook = func() {
		r.clock.Advance(DefaultClaimLease + time.Second)
		if _, err := r.work(m, runners); err != nil {
			t.Errorf("the second worker: %v", err)
		}
	}
	if _, err := r.work(m, runners); err != nil {
		t.Fatal(err)
	}
	if jobs.launches != 2 {
		t.Fatalf("%d launches, want 2", jobs.launches)
	}
	jobs.rigJobRunner.mu.Lock()
	cancelled := jobs.rigJobRunner.cancelled
	jobs.rigJobRunner.mu.Unlock()
	if len(cancelled) != 1 || !strings.HasPrefix(cancelled[0], rigJobName("orphan", 1, "t0", 1)+"#1: ") {
		t.Fatalf("cancelled %q, want the first launch's job only", cancelled)
	}
}
