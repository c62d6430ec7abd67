package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestEndBoardWaitsForEndsBeingWritten: wait returns at once for attempts
// not on the board, and for one on it once its done is called (done twice
// is harmless); a context that ends stops the wait.
func TestEndBoardWaitsForEndsBeingWritten(t *testing.T) {
	b := newEndBoard()
	a := store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1}
	other := a
	other.StepID = "b"
	if b.wait(context.Background(), []store.AttemptRef{other}) {
		t.Fatal("waited for an attempt not on the board")
	}
	done := b.begin(a)
	waited := make(chan bool)
	go func() { waited <- b.wait(context.Background(), []store.AttemptRef{other, a}) }()
	select {
	case <-waited:
		t.Fatal("the wait returned before the end was written")
	case <-time.After(20 * time.Millisecond):
	}
	done()
	done()
	if !<-waited {
		t.Error("wait reported no attempt on the board")
	}
	if b.wait(context.Background(), []store.AttemptRef{a}) {
		t.Error("an attempt stayed on the board after done")
	}
	b.begin(a)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if !b.wait(ctx, []store.AttemptRef{a}) {
		t.Error("a cancelled wait reported nothing on the board")
	}
}
