package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
)

// SweepBody is the body of the work message that runs a sweep.
const SweepBody = `{"kind":"sweep"}`

// Bounds of one sweep: the runs it looks at and how many at once. What is
// left waits for the next sweep, a minute later.
const (
	maxSweepRuns  = 1000
	sweepDeciders = 8
	sweepPerShard = maxSweepRuns / store.SweepShards
)

// SweepReport says what one sweep found and did.
type SweepReport struct {
	// Due counts the sweep index entries found due.
	Due int `json:"due"`
	// Runs counts the runs they belong to; Redriven the runs given a
	// Redrive (a run item due: work it awaits never answered), Decided the
	// runs decided (a pending event, or the redrive); Moved the runs
	// that had committed since the index was read and were left alone.
	Runs     int `json:"runs"`
	Redriven int `json:"redriven"`
	Decided  int `json:"decided"`
	Moved    int `json:"moved"`
	// Signals counts the signal instances delivered again.
	Signals int `json:"signals"`
	// Failed counts runs and signals whose re-drive failed; the next sweep
	// finds them again.
	Failed int `json:"failed"`
}

// Sweep is the recovery sweeper: it finds, through the sweep index (see
// package store), the runs that should have moved and have not, and moves
// them. An inbox event left unapplied (its wake was lost) is applied by
// deciding the run here. A run item past its due time awaits work that never
// answered (a work message or a timer lost, or the outbox that carried them
// never forwarded): it gets an engine.Redrive, which sends that work again,
// and is decided here too. Both are safe to repeat, as every handler is
// idempotent and a step attempt runs at most once per claim.
func (o *Sweeper) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	runs, signalsDue, err := o.dueItems(ctx, &rep)
	if err != nil {
		return rep, err
	}
	rep.Runs = len(runs)
	var mu sync.Mutex
	sem := make(chan struct{}, sweepDeciders)
	var wg sync.WaitGroup
	for _, r := range runs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(r *runDue) {
			defer func() { <-sem; wg.Done() }()
			var one SweepReport
			o.sweepRun(ctx, r, &one)
			mu.Lock()
			rep.add(one)
			mu.Unlock()
		}(r)
	}
	wg.Wait()
	o.deliverSignals(ctx, signalsDue, &rep)
	if rep.Due > 0 {
		o.log.InfoContext(ctx, "sweep done", "due", rep.Due, "runs", rep.Runs, "redriven", rep.Redriven,
			"decided", rep.Decided, "moved", rep.Moved, "signals", rep.Signals, "failed", rep.Failed)
	}
	return rep, nil
}

// add adds the counts of a run's sweep.
func (r *SweepReport) add(one SweepReport) {
	r.Redriven += one.Redriven
	r.Decided += one.Decided
	r.Moved += one.Moved
	r.Failed += one.Failed
}

// runDue is a run the sweep index has due.
type runDue struct {
	wake store.Wake
	run  *store.Due // the run item's entry, if due
	// events is set when inbox events are due.
	events bool
}

// dueItems reads every shard of the sweep index up to now: the runs due,
// in key order, and the signal instances due.
func (o *Sweeper) dueItems(ctx context.Context, rep *SweepReport) ([]*runDue, []store.Due, error) {
	now := o.now()
	byRun := map[store.RunKey]*runDue{}
	var signalsDue []store.Due
	for shard := 0; shard < store.SweepShards; shard++ {
		items, err := o.store.Sweeps.DueItems(ctx, shard, now, sweepPerShard)
		if err != nil {
			return nil, nil, err
		}
		rep.Due += len(items)
		for i := range items {
			d := items[i]
			if d.Signal != "" {
				signalsDue = append(signalsDue, d)
				continue
			}
			k := store.RunKey{WorkflowID: d.WorkflowID, InstanceID: d.InstanceID, RunID: d.RunID}
			r := byRun[k]
			if r == nil {
				r = &runDue{wake: store.Wake{WorkflowID: d.WorkflowID, InstanceID: d.InstanceID, RunID: d.RunID}}
				byRun[k] = r
			}
			if d.Run {
				r.run = &d
			} else {
				r.events = true
			}
		}
	}
	runs := make([]*runDue, 0, len(byRun))
	for _, r := range byRun {
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i].wake, runs[j].wake
		if a.WorkflowID != b.WorkflowID {
			return a.WorkflowID < b.WorkflowID
		}
		if a.InstanceID != b.InstanceID {
			return a.InstanceID < b.InstanceID
		}
		return a.RunID < b.RunID
	})
	return runs, signalsDue, nil
}

// sweepRun moves one due run: its waiting inbox events applied, then, when
// its run item is due, a Redrive put in its inbox and decided.
func (o *Sweeper) sweepRun(ctx context.Context, r *runDue, rep *SweepReport) {
	log := o.log.With("workflow_id", r.wake.WorkflowID, "instance_id", r.wake.InstanceID, "run_id", r.wake.RunID)
	if r.events {
		// Applying the waiting events may be all the run needs: it then
		// moves, and its run item is no longer due.
		log.Warn("sweep: applying inbox events whose wake was lost")
		if !o.decide(ctx, r.wake, log, rep) {
			return
		}
	}
	if r.run == nil {
		return
	}
	ev := store.Event{
		ID:   redriveEventID(r.run.At),
		Body: mustJSON(engine.Redrive{Reason: "the run had not heard back from its work by its due time"}),
	}
	switch err := o.store.Sweeps.Redrive(ctx, *r.run, ev); {
	case errors.Is(err, store.ErrConflict):
		rep.Moved++
		return
	case err != nil:
		log.Error("sweep: cannot re-drive run", "error", err)
		rep.Failed++
		return
	}
	log.Warn("sweep: re-driving a run that did not move by its due time")
	rep.Redriven++
	o.decide(ctx, r.wake, log, rep)
}

// decide decides a swept run, counting the outcome; ok is false when it
// failed.
func (o *Sweeper) decide(ctx context.Context, w store.Wake, log *slog.Logger, rep *SweepReport) (ok bool) {
	if _, err := o.rounds.Process(ctx, w); err != nil && !errors.Is(err, store.ErrNotFound) {
		log.Error("sweep: cannot decide run", "error", err)
		rep.Failed++
		return false
	}
	rep.Decided++
	return true
}

// deliverSignals delivers again the signal instances whose delivery was
// lost. Delivering again is safe: the events it puts are keyed by the
// signal, and trigger starts dedupe on a request id derived from it.
func (o *Sweeper) deliverSignals(ctx context.Context, due []store.Due, rep *SweepReport) {
	for _, d := range due {
		if err := o.signals.handleSignal(ctx, d.Signal, d.SignalSeq); err != nil {
			o.log.ErrorContext(ctx, "sweep: cannot deliver signal", "signal", d.Signal, "seq", d.SignalSeq, "error", err)
			rep.Failed++
			continue
		}
		o.log.WarnContext(ctx, "sweep: delivered a signal whose delivery was lost", "signal", d.Signal, "seq", d.SignalSeq)
		rep.Signals++
	}
}
