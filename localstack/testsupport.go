package localstack

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/resources"
)

// TB is what the integration tests' helpers below need of a *testing.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// TestConfig returns an SDK configuration for e, failing t without one.
func (e *Emulator) TestConfig(t TB) aws.Config {
	t.Helper()
	cfg, err := e.AWSConfig(context.Background())
	if err != nil {
		t.Fatalf("AWSConfig: %v", err)
	}
	return cfg
}

// RandomStage returns a stage name of prefix and eight random hex digits,
// so that tests sharing an emulator each use stages of their own.
func RandomStage(t TB, prefix string) string {
	t.Helper()
	s, err := resources.ParseStage(fmt.Sprintf("%s%08x", prefix, rand.Uint32()))
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	return s
}

// Eventually checks cond every 50 ms until it holds, failing t when it
// does not within timeout.
func Eventually(t TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SyncBuffer is a bytes.Buffer a stack may write (its logs, its metrics)
// while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
