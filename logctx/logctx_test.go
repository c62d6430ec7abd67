package logctx

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestScopeAttrsReachLines(t *testing.T) {
	var buf bytes.Buffer
	log := Wrap(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if Wrap(log) != log {
		t.Error("Wrap wrapped twice")
	}
	ctx := Scope(context.Background())
	Add(ctx, "workflow_id", "wf", "instance_id", int64(3))
	inner := Scope(ctx)
	Add(inner, "step_id", "s1", slog.Int64("attempt", 2))
	Add(inner, "step_id", "s2") // replaced, not repeated
	log.With("handler", "worker").InfoContext(inner, "step done", "status", "SUCCEEDED")
	log.InfoContext(ctx, "outer")
	log.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines: %q", lines)
	}
	for _, want := range []string{"handler=worker", "status=SUCCEEDED", "workflow_id=wf", "instance_id=3", "step_id=s2", "attempt=2"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("line %q lacks %s", lines[0], want)
		}
	}
	if strings.Count(lines[0], "step_id") != 1 {
		t.Errorf("step_id twice: %q", lines[0])
	}
	if !strings.Contains(lines[1], "workflow_id=wf") || strings.Contains(lines[1], "step_id") {
		t.Errorf("outer line %q", lines[1])
	}
	if strings.Contains(lines[2], "workflow_id") {
		t.Errorf("line without context %q", lines[2])
	}
	Add(context.Background(), "x", 1) // no scope: nothing happens
}

func TestConcurrentAdds(t *testing.T) {
	ctx := Scope(context.Background())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { Add(ctx, "k", i); _ = Attrs(ctx) })
	}
	wg.Wait()
	if n := len(Attrs(ctx)); n != 1 {
		t.Errorf("%d attrs, want 1", n)
	}
}
