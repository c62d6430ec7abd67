package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runArgs runs the command line args and returns its exit code and output.
func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestRun: the commands' exit codes (0 done, 2 usage) and where their
// words go (usage asked for on stdout, usage errors on stderr).
func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{name: "no command", args: nil, wantCode: exitUsage, wantStderr: []string{"usage: maestro <command>"}},
		{name: "help", args: []string{"help"}, wantCode: exitOK, wantStdout: []string{"usage: maestro <command>", "validate FILE..."}},
		{name: "-h", args: []string{"-h"}, wantCode: exitOK, wantStdout: []string{"usage: maestro <command>"}},
		{name: "--help", args: []string{"--help"}, wantCode: exitOK, wantStdout: []string{"usage: maestro <command>"}},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: exitUsage,
			wantStderr: []string{`maestro: unknown command "frobnicate"`, "usage: maestro <command>"}},
		{name: "completion bash", args: []string{"completion", "bash"}, wantCode: exitOK,
			wantStdout: []string{"complete -F _maestro maestro", `compgen -W "validate local bench completion push workflows`}},
		{name: "completion without a shell", args: []string{"completion"}, wantCode: exitUsage, wantStderr: []string{"usage: maestro completion bash"}},
		{name: "completion of another shell", args: []string{"completion", "zsh"}, wantCode: exitUsage, wantStderr: []string{"usage: maestro completion bash"}},
		// The API commands go to package cli; its usage errors are 2 too,
		// before any request.
		{name: "an API command's usage error", args: []string{"status", "--endpoint", "http://127.0.0.1:1"}, wantCode: exitUsage,
			wantStderr: []string{"usage: maestro status"}},
		{name: "an API command's unknown flag", args: []string{"workflows", "-bogus"}, wantCode: exitUsage,
			wantStderr: []string{"flag provided but not defined: -bogus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if len(tt.wantStdout) == 0 && stdout != "" {
				t.Errorf("unexpected stdout:\n%s", stdout)
			}
		})
	}
}

const (
	validJSON = `{"workflow":{"id":"good","steps":[{"step":{"id":"s","type":"NoOp"}}]}}`
	validYAML = "workflow:\n  id: good-yaml\n  steps:\n    - step:\n        id: s\n        type: NoOp\n"
	cycleJSON = `{"workflow":{"id":"cyclic","steps":[
	  {"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":"true"}}}},
	  {"step":{"id":"b","type":"NoOp","transition":{"successors":{"a":"true"}}}}]}}`
	// Two errors at once: a step without an id, and an unknown type.
	twoErrorsJSON = `{"workflow":{"id":"broken","steps":[{"step":{"type":"NoOp"}},{"step":{"id":"x","type":"Teleport"}}]}}`
)

// TestValidate: maestro validate prints a verdict per file and every error
// of an invalid one under it, and exits 0 when all are valid, 1 when any is
// invalid, 2 on a usage error (no file, an unknown flag, a file it cannot
// read).
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", validJSON)
	goodYAML := write("good.yaml", validYAML)
	cycle := write("cycle.json", cycleJSON)
	broken := write("broken.json", twoErrorsJSON)
	// A YAML file is read as YAML by its extension only.
	yamlAsJSON := write("yaml.json", validYAML)
	missing := filepath.Join(dir, "missing.json")
	tpl, err := os.ReadFile("../../test/testdata/sample-job-template-1.json")
	if err != nil {
		t.Fatal(err)
	}
	template := write("template.json", string(tpl))

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // in this order
		notStdout  []string
		wantStderr string
	}{
		{name: "no file", args: nil, wantCode: exitUsage, wantStderr: "usage: maestro validate [-q] FILE..."},
		{name: "unknown flag", args: []string{"-x", good}, wantCode: exitUsage, wantStderr: "flag provided but not defined: -x"},
		{name: "unreadable file", args: []string{missing}, wantCode: exitUsage, wantStderr: "missing.json"},
		{name: "valid JSON", args: []string{good}, wantCode: exitOK, wantStdout: []string{good + ": valid\n"}},
		{name: "valid YAML", args: []string{goodYAML}, wantCode: exitOK, wantStdout: []string{goodYAML + ": valid\n"}},
		{name: "YAML in a .json file", args: []string{yamlAsJSON}, wantCode: exitInvalid, wantStdout: []string{yamlAsJSON + ": invalid\n"}},
		{name: "a cycle", args: []string{cycle}, wantCode: exitInvalid,
			wantStdout: []string{cycle + ": invalid\n", "  workflow.steps: cycle: a -> b -> a\n"}},
		{name: "every error of a file", args: []string{broken}, wantCode: exitInvalid,
			wantStdout: []string{broken + ": invalid\n", "  workflow.steps[0].step.id", "  workflow.steps[1].step.type"}},
		{name: "valid and invalid", args: []string{good, cycle, goodYAML}, wantCode: exitInvalid,
			wantStdout: []string{good + ": valid\n", cycle + ": invalid\n", goodYAML + ": valid\n"}},
		{name: "-q prints only the invalid", args: []string{"-q", good, cycle}, wantCode: exitInvalid,
			wantStdout: []string{cycle + ": invalid\n"}, notStdout: []string{": valid"}},
		{name: "-q and all valid", args: []string{"-q", good, goodYAML}, wantCode: exitOK, notStdout: []string{good, goodYAML}},
		{name: "a job template is not a workflow", args: []string{template}, wantCode: exitInvalid,
			wantStdout: []string{template + ": invalid\n", "  workflow: required\n", "  (a valid job template: store it with POST /api/v3/job-templates)\n"}},
		{name: "an unreadable file after a valid one", args: []string{good, missing}, wantCode: exitUsage, wantStderr: "missing.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, append([]string{"validate"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			rest := stdout
			for _, w := range tt.wantStdout {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("stdout lacks %q (in this order):\n%s", w, stdout)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.notStdout {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}

// TestBenchUsage: maestro bench refuses bad flags with exit 2 and its
// usage line, before it starts anything.
func TestBenchUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"-bogus"}},
		{"an argument", []string{"extra"}},
		{"no runs", []string{"-runs", "0"}},
		{"no steps", []string{"-steps", "0"}},
		{"negative http steps", []string{"-http-steps", "-1"}},
		{"negative http chain", []string{"-http-chain", "-1"}},
		{"negative http chains", []string{"-http-chains", "-1"}},
		{"negative http fan", []string{"-http-fan", "-1"}},
		{"negative foreach", []string{"-foreach", "-1"}},
		{"negative foreach-http", []string{"-foreach-http", "-1"}},
		{"negative foreach-items", []string{"-foreach-items", "-1"}},
		{"no foreach concurrency", []string{"-foreach-concurrency", "0"}},
		{"foreach concurrency over 500", []string{"-foreach-concurrency", "501"}},
		{"negative work pollers", []string{"-work-pollers", "-1"}},
		{"negative join layers", []string{"-http-joins", "-1"}},
		{"no join width", []string{"-join-width", "0"}},
		{"no stream interval", []string{"-stream-interval", "0s"}},
		{"no timeout", []string{"-timeout", "0s"}},
		{"not a duration", []string{"-timeout", "soon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, append([]string{"bench"}, tt.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, "usage: maestro bench") && !strings.Contains(stderr, "Usage of bench") {
				t.Errorf("stderr has no usage:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
}
