package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/cli"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/pricing"
)

// maestro runs the CLI against the system and returns its exit code,
// stdout and stderr.
func (s *system) maestro(args ...string) (int, string, string) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := cli.Run(ctx, args, cli.Options{Stdout: &out, Stderr: &errOut, Poll: 100 * time.Millisecond,
		Getenv: func(k string) string {
			if k == cli.EnvEndpoint {
				return s.st.URL
			}
			return ""
		}})
	return code, out.String(), errOut.String()
}

func TestCLI(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	code, out, errOut := s.maestro("push", "testdata/sample-dag-test-7.json")
	if code != cli.ExitOK || !strings.Contains(out, "workflow sample-dag-test-7 version 1") {
		t.Fatalf("push: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = s.maestro("start", "sample-dag-test-7", "--wait")
	if code != cli.ExitOK {
		t.Fatalf("start --wait: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "started sample-dag-test-7 instance 1") || !regexp.MustCompile(`^SUCCEEDED  (\d+) steps: (\d+) SUCCEEDED$`).MatchString(lines[len(lines)-1]) {
		t.Fatalf("start --wait printed:\n%s", out)
	}
	t.Logf("start --wait printed:\n%s", out)

	code, out, errOut = s.maestro("status", "sample-dag-test-7", "1")
	if code != cli.ExitOK || !strings.Contains(out, "sample-dag-test-7 instance 1 run 1: SUCCEEDED") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	// Its cost: no step of it is billed for compute the runtime records;
	// its orchestration is (a few millionths of a dollar).
	if line := strings.Split(out, "\n")[1]; !regexp.MustCompile(`^cost \$0\.0000\d\d \(covers fargate, lambda_steps, orchestration; prices of `+
		pricing.Date+`\): .*dynamodb_write_units \d+ \$`).MatchString(line) || strings.Contains(line, "fargate_") {
		t.Fatalf("status: cost line %q\n%s", line, out)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")[3:]
	for _, row := range rows {
		if f := strings.Fields(row); len(f) < 5 || f[3] != "SUCCEEDED" {
			t.Fatalf("status row %q: want every step SUCCEEDED\n%s", row, out)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("status listed %d steps:\n%s", len(rows), out)
	}

	// A run that fails exits 1 and says why on stderr.
	if code, out, errOut := s.maestro("push", "testdata/sample-dag-test-7.json"); code != cli.ExitOK {
		t.Fatalf("push again: %d %s%s", code, out, errOut)
	}
	failing := s.push([]byte(`{"properties":{"owner":"cli"},"workflow":{"id":"cli-fails","steps":[
	  {"step":{"id":"bad","type":"Sleep","params":{"sleep_seconds":{"value":"soon","type":"STRING"}}}}]}}`))
	code, out, errOut = s.maestro("start", failing, "--wait")
	if code != cli.ExitFailed || !strings.Contains(out, "FAILED") || !strings.Contains(errOut, "cli-fails instance 1 FAILED") {
		t.Fatalf("a failing run: exit %d\n%s%s", code, out, errOut)
	}

	// status draws a loop's iterations and a subworkflow's child under
	// their steps.
	s.push([]byte(`{"properties":{"owner":"cli"},"workflow":{"id":"cli-child","steps":[{"step":{"id":"leaf","type":"NoOp"}}]}}`))
	tree := s.push([]byte(`{"properties":{"owner":"cli"},"workflow":{"id":"cli-tree","steps":[
	  {"foreach":{"id":"each","params":{"loop_params":{"value":{"i":{"value":[1,2,3],"type":"LONG_ARRAY"}},"type":"MAP"}},
	    "steps":[{"step":{"id":"inner","type":"NoOp"}}],"transition":{"successors":{"sub":"true"}}}},
	  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"value":"cli-child","type":"STRING"},"subworkflow_version":{"value":"latest","type":"STRING"}}}}]}}`))
	if code, out, errOut := s.maestro("start", tree, "--wait"); code != cli.ExitOK {
		t.Fatalf("start cli-tree: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = s.maestro("status", tree, "1")
	if code != cli.ExitOK || !regexp.MustCompile(`(?m)^each\s+foreach\s+1\s+SUCCEEDED`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  iterations\s+3 of 3 started, 0 running: 3 SUCCEEDED; 3 leaf steps$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^sub\s+\S+\s+1\s+SUCCEEDED`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  child cli-child #1\s+1\s+SUCCEEDED`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^    leaf\s+\S+\s+1\s+SUCCEEDED`).MatchString(out) {
		t.Fatalf("status of cli-tree: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("status of cli-tree:\n%s", out)

	// Many runs in a request: start --count and start-batch.
	code, out, errOut = s.maestro("start", "cli-child", "--count", "3")
	if code != cli.ExitOK || !strings.HasSuffix(out, "3 started, 0 started before, 0 not started\n") {
		t.Fatalf("start --count 3: exit %d\n%s%s", code, out, errOut)
	}
	batch := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(batch, []byte(`{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}`+"\n\n"+`{"run_params":{"n":{"value":2,"type":"LONG"}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"line 1: started cli-child instance 5 (run 1)\nline 3: started cli-child instance 6 (run 1)\n",
		"line 1: cli-child instance 5 was started by this request_id before\nline 3: started cli-child instance 7 (run 1)\n"} {
		if code, out, errOut = s.maestro("start-batch", "cli-child", batch); code != cli.ExitOK || !strings.HasPrefix(out, want) {
			t.Fatalf("start-batch: exit %d\n%s%s\nwant it to begin\n%s", code, out, errOut, want)
		}
	}

	// workflows lists what is stored.
	code, out, errOut = s.maestro("workflows")
	if code != cli.ExitOK || !regexp.MustCompile(`(?m)^cli-fails\s+1\s+1\s+1\s`).MatchString(out) || !strings.Contains(out, "cli-tree") || !regexp.MustCompile(`(?m)^sample-dag-test-7\s+2\s+2\s+1\s+tester\s`).MatchString(out) {
		t.Fatalf("workflows: exit %d\n%s%s", code, out, errOut)
	}

	// Errors name the API's message; usage errors exit 2.
	if code, _, errOut := s.maestro("start", "no-such-workflow"); code != cli.ExitFailed || !strings.Contains(errOut, "HTTP 404") {
		t.Fatalf("an unknown workflow: exit %d %s", code, errOut)
	}
	if code, _, _ := s.maestro("status", "only-one-arg"); code != cli.ExitUsage {
		t.Fatalf("a usage error: exit %d", code)
	}
	if code, out, errOut := s.maestro("instances", "sample-dag-test-7", "--json"); code != cli.ExitOK || !strings.Contains(out, `"workflow_instances"`) {
		t.Fatalf("instances --json: exit %d\n%s%s", code, out, errOut)
	}

	// Step actions, watch, timeline, permits and breakpoints.
	slow := s.push([]byte(`{"properties":{"owner":"cli"},"workflow":{"id":"cli-slow","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":600,"type":"LONG"}}}}]}}`))
	if code, out, errOut := s.maestro("start", slow); code != cli.ExitOK {
		t.Fatalf("start: %d %s%s", code, out, errOut)
	}
	poll(t, 30*time.Second, "the step sleeps", func() (bool, string) {
		v := s.instance(slow, 1)
		return v.StepStatuses["nap"] == "RUNNING", fmt.Sprint(v.StepStatuses)
	})
	if code, out, errOut := s.maestro("step", "stop", slow, "1", "nap"); code != cli.ExitOK || !strings.Contains(out, "step nap STOPPED") {
		t.Fatalf("step stop: %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.maestro("watch", slow, "1")
	if code != cli.ExitFailed || !strings.Contains(errOut, "cli-slow instance 1") {
		t.Fatalf("watch of a stopped run: %d %s%s", code, out, errOut)
	}
	if code, out, _ := s.maestro("timeline", slow, "1"); code != cli.ExitOK || !strings.Contains(out, "IN_PROGRESS") {
		t.Fatalf("timeline: %d %s", code, out)
	}
	for _, args := range [][]string{
		{"permit", "set", "cli-db", "2"}, {"permit", "get", "cli-db"}, {"permit", "delete", "cli-db"},
		{"breakpoint", "add", slow, "nap"}, {"breakpoint", "list", slow, "nap"}, {"breakpoint", "remove", slow, "nap"},
	} {
		if code, out, errOut := s.maestro(args...); code != cli.ExitOK || len(strings.TrimSpace(out)) == 0 {
			t.Fatalf("%v: %d %s%s", args, code, out, errOut)
		}
	}
}
