package localstack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
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

// TestMakefilePinsTheLauncherMotoVersion: make py-tools installs the moto
// release the launcher is written for.
func TestMakefilePinsTheLauncherMotoVersion(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MOTO_VERSION\s*\?=\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile sets no MOTO_VERSION")
	}
	if got := string(m[1]); got != MotoVersion {
		t.Errorf("the Makefile pins moto %s; the launcher is written for %s (localstack.MotoVersion)", got, MotoVersion)
	}
}
