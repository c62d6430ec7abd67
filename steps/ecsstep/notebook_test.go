package ecsstep

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func notebookWork(nb map[string]any, extra engine.Values) orchestrator.StepWork {
	p := engine.Values{"kubernetes": map[string]any{"image": "python:3"}, "notebook": nb}
	for k, v := range extra {
		p[k] = v
	}
	m := orchestrator.StepWork{StepType: model.StepNotebook, Params: p}
	m.WorkflowID, m.InstanceID, m.RunID, m.StepID, m.Attempt = "wf", 7, 1, "nb", 2
	return m
}

func TestNotebookCommand(t *testing.T) {
	r := &Runner{cfg: Config{NotebookBucket: "bucket", NotebookPrefix: "maestro-notebooks/", NotebookTaskRoleARN: "arn:aws:iam::1:role/nb"}}
	evil := `x'; curl http://169.254.169.254 | sh; echo '$(id)`
	m := notebookWork(map[string]any{"input_path": "s3://in/a b.ipynb", "init_command": "pip install papermill &&",
		"papermill_arguments": []string{"-k", "python3"}}, engine.Values{"script": evil, "empty": ""})
	task, out, err := r.parseNotebook(m)
	if err != nil {
		t.Fatal(err)
	}
	if out != "s3://bucket/maestro-notebooks/wf/7/1/nb/2/nb.ipynb" || task.env[EnvNotebookOutput] != out || task.role != "arn:aws:iam::1:role/nb" {
		t.Fatalf("output %q env %v role %q", out, task.env, task.role)
	}
	if !slices.Equal(task.entryPoint, []string{"/bin/sh", "-c"}) || task.command[0] != `pip install papermill && exec papermill "$@"` {
		t.Fatalf("entry point %q script %q", task.entryPoint, task.command[0])
	}
	args := task.command[2:]
	want := []string{"s3://in/a b.ipynb", out, "-y", args[3], "--log-output", "-k", "python3", "--start_timeout", "600"}
	if !slices.Equal(args, want) {
		t.Fatalf("papermill args %q, want %q", args, want)
	}
	// The param reaches papermill as one argument, never as shell text.
	var params map[string]any
	if err := json.Unmarshal([]byte(args[3]), &params); err != nil || params["script"] != evil || params["attempt_number"] != float64(1) {
		t.Fatalf("params %s: %v", args[3], err)
	}
	if _, ok := params["empty"]; ok || params["notebook"] != nil || params["kubernetes"] != nil {
		t.Fatalf("params %v: empty strings and the runner's own params are left out", params)
	}
	if strings.Contains(task.command[0], "curl") {
		t.Fatalf("a param reached the script: %q", task.command[0])
	}

	// git: the settings go through the environment.
	m = notebookWork(map[string]any{"input_path": "nbs/demo.ipynb", "git_repo": "https://github.com/o/r.git", "git_branch": "main; rm -rf /",
		"git_commit": "abc123", "git_submodules": true}, nil)
	if _, _, err := r.parseNotebook(m); err == nil || !strings.Contains(err.Error(), "git_branch: a ref name") {
		t.Fatalf("a branch with white space: %v", err)
	}
	m.Params["notebook"].(map[string]any)["git_branch"] = "release/1"
	task, _, err = r.parseNotebook(m)
	if err != nil {
		t.Fatal(err)
	}
	script := `git clone --recurse-submodules -b "$MAESTRO_NOTEBOOK_GIT_BRANCH" -- "$MAESTRO_NOTEBOOK_GIT_REPO" maestro_notebook_git_repo && ` +
		`cd -- "$MAESTRO_NOTEBOOK_DIR" && git checkout "$MAESTRO_NOTEBOOK_GIT_COMMIT" && exec papermill "$@"`
	if task.command[0] != script || task.command[2] != "demo.ipynb" || task.env["MAESTRO_NOTEBOOK_DIR"] != "maestro_notebook_git_repo/nbs" ||
		task.env["MAESTRO_NOTEBOOK_GIT_BRANCH"] != "release/1" || task.env["MAESTRO_NOTEBOOK_GIT_COMMIT"] != "abc123" {
		t.Fatalf("script %q args %q env %v", task.command[0], task.command[2:], task.env)
	}
}

func TestNotebookRefusals(t *testing.T) {
	r := &Runner{cfg: Config{NotebookBucket: "bucket"}}
	for _, c := range []struct {
		name string
		nb   map[string]any
		want string
	}{
		{"no input", map[string]any{}, "notebook.input_path: required"},
		{"metadata address", map[string]any{"input_path": "https://169.254.169.254/latest/"}, "is a cloud metadata address"},
		{"link-local", map[string]any{"input_path": "https://169.254.1.1/n.ipynb"}, "is a link-local address"},
		{"private", map[string]any{"input_path": "https://10.0.0.5/n.ipynb"}, "is a private address"},
		{"loopback v6", map[string]any{"input_path": "https://[::1]/n.ipynb"}, "is a loopback address"},
		{"mapped v6", map[string]any{"input_path": "https://[::ffff:127.0.0.1]/n.ipynb"}, "is a loopback address"},
		{"localhost", map[string]any{"input_path": "https://localhost/n.ipynb"}, "is loopback"},
		{"decimal IP", map[string]any{"input_path": "https://2130706433/n.ipynb"}, "is a number"},
		{"short name", map[string]any{"input_path": "https://metadata/n.ipynb"}, "not a fully qualified name"},
		{"http", map[string]any{"input_path": "http://example.com/n.ipynb"}, "must be s3://bucket/key or an https:// URL"},
		{"file", map[string]any{"input_path": "/etc/passwd"}, "must be s3://bucket/key or an https:// URL"},
		{"credentials", map[string]any{"input_path": "https://u:p@example.com/n.ipynb"}, "must not carry credentials"},
		{"git over ssh", map[string]any{"input_path": "n.ipynb", "git_repo": "git@github.com:o/r.git"}, "git_repo: must be an https:// URL"},
		{"git path escapes", map[string]any{"input_path": "../../etc/n.ipynb", "git_repo": "https://github.com/o/r.git"}, "input_path: with git_repo, a relative path"},
		{"commit as an option", map[string]any{"input_path": "n.ipynb", "git_repo": "https://github.com/o/r.git", "git_commit": "--upload-pack=sh"}, "git_commit: a ref name"},
		{"output_path", map[string]any{"input_path": "s3://b/k", "output_path": "s3://elsewhere/x"}, "output_path: set by the runner"},
		{"cwd", map[string]any{"input_path": "s3://b/k", "papermill_arguments": []string{"--cwd", "/"}}, "--cwd is not allowed"},
		{"unknown field", map[string]any{"input_path": "s3://b/k", "kernel": "x"}, "kernel: not a field"},
	} {
		_, _, err := r.parseNotebook(notebookWork(c.nb, nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	m := notebookWork(map[string]any{"input_path": "s3://b/k"}, engine.Values{"big": strings.Repeat("x", 9000)})
	if _, _, err := r.parseNotebook(m); err == nil || !strings.Contains(err.Error(), "more than fit in an ECS task's overrides (8192)") {
		t.Errorf("large params: %v", err)
	}
	m = notebookWork(map[string]any{"input_path": "s3://b/k"}, nil)
	m.Params["kubernetes"] = map[string]any{"image": "python:3", "command": []string{"sh"}}
	if _, _, err := r.parseNotebook(m); err == nil || !strings.Contains(err.Error(), "a Notebook step's command is papermill's") {
		t.Errorf("a command: %v", err)
	}
	if _, _, err := (&Runner{}).parseNotebook(notebookWork(map[string]any{"input_path": "s3://b/k"}, nil)); err == nil || !strings.Contains(err.Error(), NotebookSetting) {
		t.Errorf("no bucket: %v", err)
	}
}
