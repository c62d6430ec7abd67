package orchestrator

import (
	"context"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// wakeSender sends a worker process's wakes for step ends (wakeDecider)
// to the decision queue, batched without a timer: the first end's wake
// goes out at once, and the ends that come while a send is in flight go
// together in the next one, those of one run as one wake naming them all
// (the decider reads the attempts a wake names). The steps a decision
// starts together (a DAG's next layer) are received together, end
// together, and so reach their decider as one message — sent, received
// and deleted once — and are decided in one round.
//
// The sends are made by one goroutine while there are ends to send, not
// by a caller, whose invocation would otherwise go on sending others'
// wakes as long as they came; each is bounded by wakeSendTimeout, after
// which its callers fall back to the stream.
type wakeSender struct {
	dispatch Dispatcher
	timeout  time.Duration // of one send: wakeSendTimeout

	mu      sync.Mutex
	sending bool       // the goroutine is at work
	next    *wakeBatch // ends waiting for the next send
}

// wakeBatch is the ends one send carries, and what became of it.
type wakeBatch struct {
	refs []store.AttemptRef
	// ops is what the callers' ledgers held when they handed their ends
	// on (their tails: store.MessageOps), by run.
	ops  map[runKey]pricing.Usage
	done chan struct{}
	err  error
}

// wakeSendTimeout bounds one send of wakes: an SQS that does not answer
// must not hold the step ends waiting for it (they go to the stream).
const wakeSendTimeout = 5 * time.Second

// wakeSenderOf returns a wakeSender sending with d, nil when d is.
func wakeSenderOf(d Dispatcher) *wakeSender {
	if d == nil {
		return nil
	}
	return &wakeSender{dispatch: d, timeout: wakeSendTimeout}
}

// send sends a wake naming refs and returns once the send that carried
// them returned, with its error, or ctx ended.
func (s *wakeSender) send(ctx context.Context, refs []store.AttemptRef) error {
	s.mu.Lock()
	if s.next == nil {
		s.next = &wakeBatch{done: make(chan struct{}), ops: map[runKey]pricing.Usage{}}
	}
	b := s.next
	b.refs = append(b.refs, refs...)
	// The caller writes nothing more for the run: what its ledger holds
	// goes to the run with the wake.
	if u := metering.From(ctx).Take(); u != nil && len(refs) > 0 {
		k := runKeyOf(refs[0])
		b.ops[k] = metering.Sum(b.ops[k], u)
	}
	if !s.sending {
		s.sending = true
		// The sends outlive the first caller's cancellation (they carry
		// others' ends), not its values.
		// Each wake carries its share of the send (store.MessageOps), not
		// the first caller's ledger.
		go s.loop(metering.Unmetered(context.WithoutCancel(ctx)))
	}
	s.mu.Unlock()
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop sends the waiting ends, a batch at a time, until none wait.
func (s *wakeSender) loop(ctx context.Context) {
	s.mu.Lock()
	for s.next != nil {
		batch := s.next
		s.next = nil
		s.mu.Unlock()
		sctx, cancel := context.WithTimeout(ctx, s.timeout)
		batch.err = s.dispatch.Dispatch(sctx, wakesOf(batch.refs, batch.ops))
		cancel()
		close(batch.done)
		s.mu.Lock()
	}
	s.sending = false
	s.mu.Unlock()
}

func runKeyOf(r store.AttemptRef) runKey { return runKey{r.WorkflowID, r.InstanceID, r.RunID} }

// wakesOf returns the wakes of refs: one per run, naming its attempts in
// order, with the usage ops holds for it.
func wakesOf(refs []store.AttemptRef, ops map[runKey]pricing.Usage) []store.Message {
	var order []runKey
	byRun := map[runKey]*store.Wake{}
	for _, r := range refs {
		k := runKeyOf(r)
		w := byRun[k]
		if w == nil {
			w = &store.Wake{WorkflowID: r.WorkflowID, InstanceID: r.InstanceID, RunID: r.RunID, Ops: ops[k]}
			byRun[k] = w
			order = append(order, k)
		}
		w.Finished = append(w.Finished, store.FinishedStep{StepID: r.StepID, Attempt: r.Attempt})
	}
	msgs := make([]store.Message, len(order))
	for i, k := range order {
		msgs[i] = store.WakeMessageOf(*byRun[k])
	}
	return msgs
}
