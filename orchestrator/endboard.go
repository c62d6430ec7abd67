package orchestrator

import (
	"context"
	"sync"

	"github.com/maestro-serverless/maestro/store"
)

// endBoard holds the step ends a worker process is about to write: from
// the moment a step's run returns until its worker wrote its end (or
// handed the outcome on). The steps a worker runs side by side (a join's
// inputs its round picked) end together; the last to end, not finding a
// partner's end yet, waits here for that partner's write instead of
// leaving the join to the decider (see inlineSource.join). A worker waits
// only after its own end is written, and an entry is closed once its end
// is, so two workers never wait for each other.
type endBoard struct {
	mu     sync.Mutex
	ending map[store.AttemptRef]chan struct{}
}

func newEndBoard() *endBoard { return &endBoard{ending: map[store.AttemptRef]chan struct{}{}} }

// begin puts attempt ref on the board; done takes it off (once; later
// calls do nothing) and wakes those waiting for it.
func (b *endBoard) begin(ref store.AttemptRef) (done func()) {
	ch := make(chan struct{})
	b.mu.Lock()
	b.ending[ref] = ch
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.ending[ref] == ch {
				delete(b.ending, ref)
			}
			b.mu.Unlock()
			close(ch)
		})
	}
}

// wait waits until none of refs is on the board, or ctx ends; it reports
// whether one of them was.
func (b *endBoard) wait(ctx context.Context, refs []store.AttemptRef) bool {
	var chs []chan struct{}
	b.mu.Lock()
	for _, r := range refs {
		if ch, ok := b.ending[r]; ok {
			chs = append(chs, ch)
		}
	}
	b.mu.Unlock()
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			return len(chs) > 0
		}
	}
	return len(chs) > 0
}
