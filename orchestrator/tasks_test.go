package orchestrator

import (
	"encoding/base64"
	"testing"
)

func TestTaskTokensAreLongAndDistinct(t *testing.T) {
	if got := base64.RawURLEncoding.EncodedLen(taskTokenBytes); got != TaskTokenLength {
		t.Fatalf("TaskTokenLength %d, encoded length %d", TaskTokenLength, got)
	}
	seen := map[string]bool{}
	for range 1000 {
		tok, err := newTaskToken()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw)*8 < 128 || len(tok) != TaskTokenLength {
			t.Fatalf("token %q: %d bits, %v", tok, len(raw)*8, err)
		}
		if seen[tok] {
			t.Fatalf("token %q drawn twice", tok)
		}
		seen[tok] = true
	}
}
