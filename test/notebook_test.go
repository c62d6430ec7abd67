package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// notebookRun is what a Notebook step's task was asked to run.
type notebookRun struct {
	task   ecstypes.Task
	script string   // the shell script (/bin/sh -c SCRIPT)
	args   []string // papermill's arguments
	params map[string]any
	env    map[string]string
}

// notebookTask waits for the next task and reads its papermill command.
func (e *jobsEnv) notebookTask(t *testing.T) notebookRun {
	t.Helper()
	task := e.nextTask(t)
	over := task.Overrides.ContainerOverrides[0]
	if len(over.Command) < 7 || over.Command[1] != "maestro-notebook" {
		t.Fatalf("command %q: want [SCRIPT maestro-notebook INPUT OUTPUT -y PARAMS --log-output ...]", over.Command)
	}
	run := notebookRun{task: task, script: over.Command[0], args: over.Command[2:], env: env(over.Environment)}
	if run.args[2] != "-y" {
		t.Fatalf("papermill args %q: want -y PARAMS third", run.args)
	}
	if err := json.Unmarshal([]byte(run.args[3]), &run.params); err != nil {
		t.Fatalf("papermill -y %q: %v", run.args[3], err)
	}
	return run
}

// finish prints the output the task's notebook prints and posts the
// task's stop (exit code 0) as ECS would.
func (e *jobsEnv) finish(t *testing.T, run notebookRun, logLines ...string) {
	t.Helper()
	if len(logLines) > 0 {
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(aws.ToString(run.task.TaskArn)), logLines...)
	}
	// AWS's event carries the task's overrides, as RunTask was given them.
	var envs []any
	for k, v := range run.env {
		envs = append(envs, map[string]any{"name": k, "value": v})
	}
	e.postEvent(t, "aws.ecs", "ECS Task State Change", map[string]any{
		"taskArn": aws.ToString(run.task.TaskArn), "clusterArn": e.st.ECS.ClusterARN, "lastStatus": "STOPPED", "desiredStatus": "STOPPED",
		"startedBy": e.st.ECS.Family, "stopCode": "EssentialContainerExited", "stoppedReason": "Essential container in task exited",
		"containers": []any{map[string]any{"name": "main", "lastStatus": "STOPPED", "exitCode": 0}},
		"overrides":  map[string]any{"containerOverrides": []any{map[string]any{"name": "main", "environment": envs}}},
	})
}

// notebookOutput is what the samples' script echoes: Maestro's output
// marker around params and the dynamic output artifact.
const notebookOutput = `MAESTRO_OUTPUT_START_TOKEN{"params":{"foo": {"value":"bar","type":"STRING","evaluated_result":"bar","evaluated_time":1625871404000}},` +
	`"artifacts":{"maestro_dynamic_output": {"signal_outputs":[{"value":{"name":{"value":"demo_table","type":"STRING"}},"type":"MAP","evaluated_result":{"name":"demo_table"},"evaluated_time": 1625871404000}],"type":"DYNAMIC_OUTPUT"}}}MAESTRO_OUTPUT_END_TOKEN`

func TestNotebookStepsAndJobTemplates(t *testing.T) {
	t.Parallel()
	e := startJobsEnv(t)
	outPrefix := "s3://" + e.st.Resources.Bucket.Name + "/" + stack.NotebookPrefix

	t.Run("the job template registry", func(t *testing.T) {
		var got map[string]any
		if code := e.do("POST", "/api/v3/job-templates", readFile(t, "sample-job-template-1.json"), &got); code != http.StatusOK {
			t.Fatalf("POST sample-job-template-1: HTTP %d %v", code, got)
		}
		if code := e.do("GET", "/api/v3/job-templates/shell?version=v1", nil, &got); code != http.StatusOK {
			t.Fatalf("GET shell@v1: HTTP %d %v", code, got)
		}
		def, _ := got["definition"].(map[string]any)
		meta, _ := got["metadata"].(map[string]any)
		if def["job_type"] != "shell" || def["step_type"] != "Notebook" || meta["owner"] != "tester" || meta["foo"] != float64(10) || meta["create_time"] == nil {
			t.Fatalf("shell@v1: %v", got)
		}
		if code := e.do("GET", "/api/v3/job-templates/shell", nil, &got); code != http.StatusNotFound {
			t.Fatalf("GET shell (version default): HTTP %d %v, want 404", code, got)
		}
		var list []map[string]any
		if code := e.do("GET", "/api/v3/job-templates?version=v1", nil, &list); code != http.StatusOK || len(list) != 1 {
			t.Fatalf("GET job-templates v1: HTTP %d %v", code, list)
		}
		// The same request in YAML, another version.
		yaml := "owner: tester\nstatus: beta\nsupport: team\ndefinition:\n  job_type: shell\n  step_type: notebook\n  version: v2\n" +
			"  params:\n    script:\n      type: STRING\n      internal_mode: required\n"
		if code, body := e.send(t, "POST", "/api/v3/job-templates/yaml", "application/yaml", yaml); code != http.StatusOK {
			t.Fatalf("POST yaml: HTTP %d %s", code, body)
		}
		if code := e.do("GET", "/api/v3/job-templates/shell?version=v2", nil, &got); code != http.StatusOK || got["definition"].(map[string]any)["step_type"] != "Notebook" {
			t.Fatalf("GET shell@v2: HTTP %d %v", code, got)
		}
		var del map[string]any
		if code := e.do("DELETE", "/api/v3/job-templates/shell?version=v2", nil, &del); code != http.StatusOK || del["removed"] != float64(1) {
			t.Fatalf("DELETE shell@v2: HTTP %d %v", code, del)
		}
	})

	t.Run("job templates that are refused store nothing", func(t *testing.T) {
		base := string(readFile(t, "sample-job-template-1.json"))
		for _, c := range []struct{ name, body, want string }{
			{"bad internal_mode", strings.Replace(base, `"internal_mode": "REQUIRED"`, `"internal_mode": "MANDATORY"`, 1), `definition.params.script.internal_mode: unknown internal mode \"MANDATORY\"`},
			{"unknown step type", strings.Replace(base, `"step_type": "Notebook"`, `"step_type": "Spark"`, 1), `definition.step_type: unknown step type \"Spark\"`},
			{"an expression", strings.Replace(base, `"value": "echo hello world",`, `"expression": "'echo'",`, 1), `definition.params.script.expression: a job template's params are literals`},
			{"no owner", strings.Replace(base, `"owner": "tester",`, ``, 1), `owner: required`},
		} {
			body := strings.Replace(c.body, `"job_type": "shell"`, `"job_type": "refused"`, 1)
			code, out := e.send(t, "POST", "/api/v3/job-templates", "application/json", body)
			if code != http.StatusBadRequest || !strings.Contains(out, c.want) {
				t.Errorf("%s: HTTP %d %s, want 400 with %q", c.name, code, out, c.want)
			}
		}
		big := strings.Replace(base, `"foo": 10,`, `"foo": "`+strings.Repeat("x", 300<<10)+`",`, 1)
		if code, out := e.send(t, "POST", "/api/v3/job-templates", "application/json", strings.Replace(big, `"job_type": "shell"`, `"job_type": "refused"`, 1)); code != http.StatusRequestEntityTooLarge {
			t.Errorf("a 300 KiB template: HTTP %d %s, want 413", code, out)
		}
		// The API's 256 KiB body limit comes first; past it, the service
		// itself refuses a template DynamoDB could not hold (400 KB).
		huge := strings.Replace(base, `"foo": 10,`, `"foo": "`+strings.Repeat("x", 420<<10)+`",`, 1)
		_, err := e.st.Deps.Orchestrator.Definitions.PutJobTemplate(context.Background(), []byte(strings.Replace(huge, `"job_type": "shell"`, `"job_type": "refused"`, 1)), orchestrator.FormatJSON)
		var oe *orchestrator.Error
		if !errors.As(err, &oe) || oe.Status != http.StatusBadRequest || !strings.Contains(strings.Join(oe.Errors, " "), "more than DynamoDB's item size limit of 409600 bytes") {
			t.Errorf("a 420 KiB template: %v %+v, want a 400 naming DynamoDB's item limit", err, oe)
		}
		for _, v := range []string{"v1", "default"} {
			if code := e.do("GET", "/api/v3/job-templates/refused?version="+v, nil, nil); code != http.StatusNotFound {
				t.Errorf("refused@%s: HTTP %d, want 404 (nothing stored)", v, code)
			}
		}
	})

	t.Run("sample-shell-wf runs its template's notebook in a Fargate task", func(t *testing.T) {
		wf := e.push(readFile(t, "sample-shell-wf.json"))
		r := e.start(wf, "")
		run := e.notebookTask(t)
		// From the template (shell@v1, chosen by job_template_version): the
		// image, init_command and notebook; from the step: script, foo.
		if !strings.HasPrefix(run.script, "python3 -m pip --no-cache-dir install notebook papermill && ") || !strings.HasSuffix(run.script, `exec papermill "$@"`) {
			t.Errorf("script %q", run.script)
		}
		out := fmt.Sprintf("%s%s/%d/1/job.2/1/job.2.ipynb", outPrefix, wf, r.WorkflowInstanceID)
		if run.args[0] != "https://raw.githubusercontent.com/oss-maestro/maestro-notebook-templates/d51d251cbbb5660d343bc2bb0765881ebbfed6a0/examples/demo01.ipynb" ||
			run.args[1] != out || run.args[4] != "--log-output" {
			t.Errorf("papermill args %q", run.args)
		}
		if s, _ := run.params["script"].(string); !strings.Contains(s, "echo $MAESTRO_OUTPUT_START'{") || run.params["foo"] != "default" || run.params["attempt_number"] != float64(0) {
			t.Errorf("notebook params %v", run.params)
		}
		e.finish(t, run, "hello world", notebookOutput)
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job.2", 1)
		if a.Outputs["foo"] != "bar" || !strings.Contains(timelineText(a), "executed notebook: "+out) {
			t.Fatalf("job.2 outputs %v, timeline %q: want foo=bar and the executed notebook's link", a.Outputs, timelineText(a))
		}
	})

	t.Run("sample-notebook-wf and sample-notebook-git-wf", func(t *testing.T) {
		wf := e.push(readFile(t, "sample-notebook-wf.json"))
		r := e.start(wf, "")
		run := e.notebookTask(t)
		if !strings.HasPrefix(run.args[0], "https://raw.githubusercontent.com/") || run.params["foo"] != "default" {
			t.Errorf("args %q params %v", run.args, run.params)
		}
		e.finish(t, run, notebookOutput)
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" || e.steps(wf, r.WorkflowInstanceID)["job.2"].Outputs["foo"] != "bar" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}

		wf = e.push(readFile(t, "sample-notebook-git-wf.json"))
		r = e.start(wf, "")
		run = e.notebookTask(t)
		if run.args[0] != "demo01.ipynb" || run.env["MAESTRO_NOTEBOOK_GIT_REPO"] != "https://github.com/oss-maestro/maestro-notebook-templates.git" ||
			run.env["MAESTRO_NOTEBOOK_DIR"] != "maestro_notebook_git_repo/examples" ||
			!strings.Contains(run.script, `git clone -- "$MAESTRO_NOTEBOOK_GIT_REPO" maestro_notebook_git_repo && cd -- "$MAESTRO_NOTEBOOK_DIR" && exec papermill "$@"`) {
			t.Errorf("git notebook: script %q args %q env %v", run.script, run.args, run.env)
		}
		e.finish(t, run, notebookOutput)
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
	})

	t.Run("a notebook from a link-local address is refused", func(t *testing.T) {
		def := strings.Replace(string(readFile(t, "sample-notebook-wf.json")), "https://raw.githubusercontent.com/oss-maestro/maestro-notebook-templates/d51d251cbbb5660d343bc2bb0765881ebbfed6a0/examples/demo01.ipynb",
			"https://169.254.169.254/latest/meta-data/iam/security-credentials/", 1)
		def = strings.Replace(def, `"id": "sample-notebook-wf"`, `"id": "notebook-metadata"`, 1)
		wf := e.push([]byte(def))
		r := e.start(wf, "")
		v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job.2", 1)
		if v.Status != "FAILED" || !strings.Contains(timelineText(a), "input_path: host 169.254.169.254 is a cloud metadata address") {
			t.Fatalf("instance %s, timeline %q", v.Status, timelineText(a))
		}
	})

	t.Run("RESERVED template params and a deleted template", func(t *testing.T) {
		reserved := strings.Replace(string(readFile(t, "sample-job-template-1.json")), `"internal_mode": "REQUIRED"`, `"internal_mode": "RESERVED"`, 1)
		reserved = strings.Replace(reserved, `"version": "v1"`, `"version": "v9"`, 1)
		if code, out := e.send(t, "POST", "/api/v3/job-templates", "application/json", reserved); code != http.StatusOK {
			t.Fatalf("POST shell@v9: HTTP %d %s", code, out)
		}
		def := strings.Replace(string(readFile(t, "sample-shell-wf.json")), `"value": "v1"`, `"value": "v9"`, 1)
		def = strings.Replace(def, `"id": "sample-shell-wf"`, `"id": "shell-reserved"`, 1)
		wf := e.push([]byte(def))
		r := e.start(wf, "")
		e.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job.2", 1)
		if !strings.Contains(timelineText(a), "step job.2: job template shell@v9: script: RESERVED by the job template: the step may not set it") {
			t.Errorf("a step setting a RESERVED param: timeline %q", timelineText(a))
		}
		// A REQUIRED param without a value that the step does not set.
		needs := `{"owner":"tester","status":"s","support":"s","definition":{"job_type":"needs","step_type":"Notebook","params":{
		  "kubernetes":{"type":"MAP","value":{"image":{"type":"STRING","value":"python:3"}}},
		  "notebook":{"type":"MAP","value":{"input_path":{"type":"STRING","value":"s3://in/n.ipynb"}}},
		  "table":{"type":"STRING","internal_mode":"REQUIRED"}}}}`
		if code, out := e.send(t, "POST", "/api/v3/job-templates", "application/json", needs); code != http.StatusOK {
			t.Fatalf("POST needs: HTTP %d %s", code, out)
		}
		wf = e.push([]byte(`{"properties":{"owner":"tester"},"workflow":{"id":"needs-table","steps":[{"step":{"id":"nb","type":"notebook","sub_type":"needs"}}]}}`))
		r = e.start(wf, "")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("instance %s", v.Status)
		}
		a = attempt(t, e.system, wf, r.WorkflowInstanceID, "nb", 1)
		if !strings.Contains(timelineText(a), "step nb: job template needs@default: table: a required parameter (job template: REQUIRED) has no value") {
			t.Errorf("a REQUIRED param missing: timeline %q", timelineText(a))
		}
		// Deleting every version of the template while a step that uses it
		// runs: the running step keeps the params it started with; the next
		// run's step starts without it, and the notebook it needs is missing.
		wf = e.push(readFile(t, "sample-shell-wf.json"))
		running := e.start(wf, "")
		run := e.notebookTask(t)
		var del map[string]any
		if code := e.do("DELETE", "/api/v3/job-templates/shell", nil, &del); code != http.StatusOK || del["removed"] != float64(2) {
			t.Fatalf("DELETE shell: HTTP %d %v, want 2 versions (v1, v9) removed", code, del)
		}
		e.finish(t, run, notebookOutput)
		if v := e.wait(wf, running.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("the run whose step started before the delete: %s %v", v.Status, v.StepStatuses)
		}
		r = e.start(wf, "")
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("instance %s", v.Status)
		}
		a = attempt(t, e.system, wf, r.WorkflowInstanceID, "job.2", 1)
		if !strings.Contains(timelineText(a), `param "kubernetes" is missing`) {
			t.Errorf("a Notebook step without its template: timeline %q", timelineText(a))
		}
	})
}

// send sends body with a Content-Type and returns the status and body.
func (s *system) send(t *testing.T, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.st.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
