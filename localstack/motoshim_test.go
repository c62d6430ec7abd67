package localstack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMotoShimRefusesAnotherMotoVersion: the launcher patches moto's
// internals, so Discover does not start it on a moto release it was not
// written for; the error names both versions and how to install the right
// one.
func TestMotoShimRefusesAnotherMotoVersion(t *testing.T) {
	dir := t.TempDir()
	fake := "#!/bin/sh\necho 9.9.9\n"
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	_, err := motoShim(context.Background(), t.TempDir())
	if !errors.Is(err, errMotoVersion) {
		t.Fatalf("motoShim with moto 9.9.9: %v, want errMotoVersion", err)
	}
	for _, want := range []string{"moto 9.9.9", "moto " + MotoVersion, "make py-tools"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
