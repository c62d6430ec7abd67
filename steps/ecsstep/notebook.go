package ecsstep

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/httpstep"
	"github.com/maestro-serverless/maestro/steps/stepparam"
)

// A Notebook step (Maestro's NotebookStepRuntime) runs a Jupyter notebook
// with papermill in a task of the image its `kubernetes` param names (and
// its cpu, memory, disk, env, as a Kubernetes step's). Its `notebook` MAP
// param:
//
//	input_path          the notebook: s3://bucket/key, an https:// URL, or
//	                    with git_repo a path inside the repository
//	init_command        shell commands run first, ending with "&&"
//	                    (Maestro's: "pip install papermill &&")
//	git_repo            an https:// git URL to clone
//	git_branch, git_commit, git_submodules   what to clone
//	papermill_arguments more papermill arguments (STRING_ARRAY)
//
// The step's other params are the notebook's parameters (papermill -y, as
// JSON), with attempt_number. The executed notebook is written to
// s3://<NotebookBucket>/<NotebookPrefix><workflow>/<instance>/<run>/<step>/<attempt>/<step>.ipynb
// (output_path is the runner's: the task role may write only there); the
// step's Target names it. Outputs come from the output marker the
// notebook prints (papermill --log-output puts cell output in the log),
// as for Kubernetes steps.
//
// The task runs /bin/sh -c SCRIPT with papermill's arguments as the
// script's own arguments ("$@"): a param's value never becomes shell text.
// Only init_command, the user's own shell, is run as written.

// Notebook params and fields.
const (
	ParamNotebook = "notebook"

	notebookGitDir = "maestro_notebook_git_repo"
	// maxOverrides is ECS's limit on a RunTask's overrides (8192
	// characters of JSON).
	maxOverrides = 8192
	// startTimeout is Maestro's default papermill --start_timeout.
	startTimeout = "600"
)

// EnvNotebookOutput is the variable that gives a Notebook step's task the
// S3 URI of its executed notebook; the task's state-change event carries
// it back in its overrides.
const EnvNotebookOutput = "MAESTRO_NOTEBOOK_OUTPUT"

// DefaultNotebookPrefix is where, in the stack's bucket, the stacks put
// executed notebooks (the CDK app's task role may write only there).
const DefaultNotebookPrefix = "maestro-notebooks/"

// notebookEnv names the variables the script reads the git settings from.
const (
	envGitRepo   = "MAESTRO_NOTEBOOK_GIT_REPO"
	envGitBranch = "MAESTRO_NOTEBOOK_GIT_BRANCH"
	envGitCommit = "MAESTRO_NOTEBOOK_GIT_COMMIT"
	envGitDir    = "MAESTRO_NOTEBOOK_DIR"
)

// notebook is what a Notebook step's `notebook` param says.
type notebook struct {
	input, init                   string
	gitRepo, gitBranch, gitCommit string
	gitSubmodules                 bool
	extra                         []string
}

// parseNotebook reads a Notebook step's params into t: the task that runs
// papermill, and the S3 URI of the executed notebook.
func (r *Runner) parseNotebook(m orchestrator.StepWork) (task, string, error) {
	t, err := parseTask(model.StepKubernetes, m.Params)
	if err != nil {
		return task{}, "", err
	}
	if t.entryPoint != nil || t.command != nil {
		return task{}, "", fmt.Errorf("param kubernetes.command and args: a Notebook step's command is papermill's (put setup in notebook.init_command)")
	}
	f, err := stepparam.Read(m.Params, ParamNotebook)
	if err != nil {
		return task{}, "", err
	}
	nb := notebook{
		input: f.Str("input_path"), init: f.Str("init_command"),
		gitRepo: f.Str("git_repo"), gitBranch: f.Str("git_branch"), gitCommit: f.Str("git_commit"),
		extra: f.Strs("papermill_arguments"),
	}
	if v, ok := m.Params[ParamNotebook].(map[string]any)["git_submodules"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			f.Fail("git_submodules: must be a BOOLEAN")
		}
		nb.gitSubmodules = b
	}
	f.Only("not a field of a Notebook step's notebook param", "input_path", "init_command", "git_repo", "git_branch", "git_commit",
		"git_submodules", "papermill_arguments", "run_id", "output_path")
	if _, ok := m.Params[ParamNotebook].(map[string]any)["output_path"]; ok {
		f.Fail("output_path: set by the runner (the executed notebook goes to the stack's bucket, the only place the task role may write)")
	}
	for _, p := range checkNotebook(nb) {
		f.Fail(p)
	}
	if err := f.Err(); err != nil {
		return task{}, "", err
	}
	if r.cfg.NotebookBucket == "" {
		return task{}, "", fmt.Errorf("Notebook steps need the stack's notebook bucket (%s)", NotebookSetting)
	}
	out := fmt.Sprintf("s3://%s/%s%s/%d/%d/%s/%d/%s.ipynb", r.cfg.NotebookBucket, r.cfg.NotebookPrefix,
		m.WorkflowID, m.InstanceID, m.RunID, m.StepID, m.Attempt, m.StepID)
	params, err := notebookParams(m)
	if err != nil {
		return task{}, "", err
	}
	t.entryPoint = []string{"/bin/sh", "-c"}
	t.role = r.cfg.NotebookTaskRoleARN
	t.command = append([]string{nb.script(), "maestro-notebook"}, nb.papermillArgs(out, params)...)
	if t.env == nil {
		t.env = map[string]string{}
	}
	t.env[EnvNotebookOutput] = out
	if nb.gitRepo != "" {
		t.env[envGitRepo] = nb.gitRepo
		t.env[envGitDir] = path.Join(notebookGitDir, path.Dir(nb.input))
		if nb.gitBranch != "" {
			t.env[envGitBranch] = nb.gitBranch
		}
		if nb.gitCommit != "" {
			t.env[envGitCommit] = nb.gitCommit
		}
	}
	size := 0
	for _, s := range t.command {
		size += len(s) + 3
	}
	for k, v := range t.env {
		size += len(k) + len(v) + 30
	}
	if size > maxOverrides-512 {
		return task{}, "", fmt.Errorf("the notebook's parameters and command are %d bytes: more than fit in an ECS task's overrides (%d); pass large values through S3", size, maxOverrides)
	}
	return t, out, nil
}

// NotebookSetting names, in messages, where the notebook bucket is set.
const NotebookSetting = "MAESTRO_NOTEBOOK_BUCKET; the CDK app sets it to the stack's bucket"

// script is the shell the task runs: init_command as written, then the
// clone (its settings read from the environment) and papermill with the
// script's arguments.
func (nb notebook) script() string {
	var b strings.Builder
	if nb.init != "" {
		b.WriteString(nb.init)
		b.WriteString(" ")
	}
	if nb.gitRepo != "" {
		b.WriteString("git clone ")
		if nb.gitSubmodules {
			b.WriteString("--recurse-submodules ")
		}
		if nb.gitBranch != "" {
			b.WriteString(`-b "$` + envGitBranch + `" `)
		}
		b.WriteString(`-- "$` + envGitRepo + `" ` + notebookGitDir + ` && cd -- "$` + envGitDir + `" && `)
		if nb.gitCommit != "" {
			b.WriteString(`git checkout "$` + envGitCommit + `" && `)
		}
	}
	b.WriteString(`exec papermill "$@"`)
	return b.String()
}

// papermillArgs are papermill's arguments: input, output, the parameters,
// --log-output, the user's arguments and --start_timeout unless given.
func (nb notebook) papermillArgs(output, params string) []string {
	input := nb.input
	if nb.gitRepo != "" {
		input = path.Base(nb.input)
	}
	args := []string{input, output, "-y", params, "--log-output"}
	args = append(args, nb.extra...)
	if !slices.Contains(nb.extra, "--start_timeout") && !slices.Contains(nb.extra, "--start-timeout") {
		args = append(args, "--start_timeout", startTimeout)
	}
	return args
}

// checkNotebook returns the problems of a notebook's settings: where it
// comes from (s3://, https://, or a path in a git repository, never a
// loopback, private, link-local or metadata address), refs that git would
// read as options.
func checkNotebook(nb notebook) []string {
	var out []string
	switch {
	case nb.input == "":
		out = append(out, "input_path: required")
	case nb.gitRepo != "":
		if p := checkURL(nb.gitRepo, false); p != "" {
			out = append(out, "git_repo: "+p)
		}
		clean := path.Clean(nb.input)
		if path.IsAbs(nb.input) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(nb.input, "://") {
			out = append(out, "input_path: with git_repo, a relative path inside the repository")
		}
	default:
		if p := checkURL(nb.input, true); p != "" {
			out = append(out, "input_path: "+p)
		}
	}
	for name, v := range map[string]string{"git_branch": nb.gitBranch, "git_commit": nb.gitCommit} {
		if v != "" && (strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\n\x00")) {
			out = append(out, name+": a ref name (no leading '-', no white space)")
		}
	}
	for i, a := range nb.extra {
		if a == "--cwd" || strings.HasPrefix(a, "--cwd=") || a == "--kernel-cwd" {
			out = append(out, "papermill_arguments["+strconv.Itoa(i)+"]: "+a+" is not allowed (the runner sets where the notebook runs)")
		}
	}
	slices.Sort(out)
	return out
}

// checkURL returns what is wrong with a URL the task will fetch: its
// scheme (https, or s3 when s3 is true) or its host (a loopback, private,
// link-local, metadata or otherwise non-public address, or a name that is
// one: localhost, a number).
func checkURL(raw string, s3 bool) string {
	u, err := url.Parse(raw)
	if err != nil && s3 {
		return "must be s3://bucket/key or an https:// URL"
	} else if err != nil {
		return "must be an https:// URL"
	}
	switch {
	case s3 && u.Scheme == "s3":
		if u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return "an S3 URI needs a bucket and a key (s3://bucket/key)"
		}
		return ""
	case u.Scheme != "https":
		if s3 {
			return fmt.Sprintf("%q: must be s3://bucket/key or an https:// URL", u.Scheme+"://")
		}
		return "must be an https:// URL"
	case u.User != nil:
		return "must not carry credentials (use the task role or a credential helper)"
	}
	host := u.Hostname()
	if host == "" {
		return "has no host"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if kind := httpstep.SpecialPurpose(ip); kind != "" {
			return fmt.Sprintf("host %s is a %s address: a notebook's task fetches only public addresses", host, kind)
		}
		return ""
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	last := lower[strings.LastIndex(lower, ".")+1:]
	switch {
	case lower == "localhost" || strings.HasSuffix(lower, ".localhost"):
		return "host " + host + " is loopback: a notebook's task fetches only public addresses"
	case strings.Trim(last, "0123456789") == "":
		return "host " + host + " is a number (an IP address in another form): write a public host name"
	case !strings.Contains(lower, "."):
		return "host " + host + " is not a fully qualified name: a notebook's task fetches only public addresses"
	}
	return ""
}

// notebookParams are the notebook's parameters as JSON: the step's params
// but the runner's own (kubernetes, notebook), with attempt_number (the
// attempt's, from 0, as Maestro's).
func notebookParams(m orchestrator.StepWork) (string, error) {
	p := make(map[string]any, len(m.Params)+1)
	for _, k := range slices.Sorted(maps.Keys(m.Params)) {
		if k == ParamKubernetes || k == ParamNotebook {
			continue
		}
		v := m.Params[k]
		if s, ok := v.(string); ok && s == "" {
			continue // Maestro leaves empty strings out
		}
		p[k] = v
	}
	p["attempt_number"] = m.Attempt - 1
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("notebook parameters: %w", err)
	}
	return string(b), nil
}
