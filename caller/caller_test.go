package caller

import (
	"context"
	"testing"
)

func TestWithFrom(t *testing.T) {
	if got := From(context.Background()); got != "" {
		t.Fatalf("From(background) = %q, want empty", got)
	}
	arn := "arn:aws:sts::123456789012:assumed-role/Deployer/alice"
	if got := From(With(context.Background(), arn)); got != arn {
		t.Fatalf("From(With(%q)) = %q", arn, got)
	}
}
