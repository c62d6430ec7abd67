package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestWebUI drives the web UI at /ui/ in headless Chromium with
// playwright-core (ui/web/e2e/ui.e2e.mjs): it pushes sample-dag-test-7
// through the definition preview, starts it from its workflow page, waits
// until the instance page's SVG DAG shows every step SUCCEEDED, then starts
// a long-running workflow and clicks Stop on its instance page until the
// page shows STOPPED; last it opens a foreach step's iteration and a
// subworkflow step's child from a run's step details and finds their DAGs
// SUCCEEDED. The API confirms the first two ends afterwards.
//
// It needs Node.js, ui/web/node_modules (make ui-deps) and Chromium
// (/usr/bin/chromium, or $CHROMIUM; make chromium installs Debian's), and
// fails, naming what is missing, without them. MAESTRO_UI_SCREENSHOTS=dir
// keeps its screenshots there (make ui-screenshots writes docs/images).
func TestWebUI(t *testing.T) {
	t.Parallel()
	node, browser, script := browserScript(t, "ui.e2e.mjs")
	sample, err := filepath.Abs("testdata/sample-dag-test-7.json")
	if err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("MAESTRO_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if shots, err = filepath.Abs(shots); err != nil {
		t.Fatal(err)
	}

	// A loop of more than one iteration shows its estimate.
	s := startSystem(t, stack.Options{ForeachEstimateOver: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "MAESTRO_UI_URL="+s.st.URL, "MAESTRO_SAMPLE="+sample, "MAESTRO_SCREENSHOTS="+shots, "CHROMIUM="+browser)
	out, err := cmd.CombinedOutput()
	t.Logf("ui.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the UI test failed (%v); screenshots in %s", err, shots)
	}

	// The API agrees with what the page showed.
	v := s.instance("sample-dag-test-7", 1)
	if v.Status != "SUCCEEDED" {
		t.Errorf("sample-dag-test-7/1 is %s", v.Status)
	}
	var stopped string
	for _, line := range strings.Split(string(out), "\n") {
		if i := strings.Index(line, `"stopped_workflow":"`); i >= 0 {
			stopped = strings.TrimSuffix(line[i+len(`"stopped_workflow":"`):], `"}`)
		}
	}
	if stopped == "" {
		t.Fatal("the script did not name the workflow it stopped")
	}
	if v := s.instance(stopped, 1); v.Status != "STOPPED" {
		t.Errorf("%s/1 is %s, want STOPPED", stopped, v.Status)
	}
}

// browserScript finds what a UI test in headless Chromium needs: node, the
// Chromium binary ($CHROMIUM, else /usr/bin/chromium) and the e2e script
// ui/web/e2e/name with playwright-core installed beside it; it fails the
// test naming what is missing.
func browserScript(t *testing.T, name string) (node, browser, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: the UI test runs playwright-core on Node.js")
	}
	browser = os.Getenv("CHROMIUM")
	if browser == "" {
		browser = "/usr/bin/chromium"
	}
	if _, err := os.Stat(browser); err != nil {
		t.Fatalf("no Chromium at %s (make chromium installs Debian's chromium): %v", browser, err)
	}
	script, err = filepath.Abs(filepath.Join("..", "ui", "web", "e2e", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "..", "node_modules", "playwright-core")); err != nil {
		t.Fatalf("playwright-core is not installed in ui/web (make ui-deps): %v", err)
	}
	return node, browser, script
}
