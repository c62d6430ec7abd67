// Package cli is the maestro command's client of the API: push definitions,
// start runs and follow them, read their status, act on them. It talks to
// the local stack (`make run`) over plain HTTP, or to a deployed stack's API
// Gateway with SigV4-signed requests (credentials from the default chain).
package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1 // the request failed, or the run did not succeed
	ExitUsage  = 2
)

// EnvEndpoint names the API's base URL when --endpoint is not given.
const EnvEndpoint = "MAESTRO_ENDPOINT"

// DefaultEndpoint is the local stack's API.
const DefaultEndpoint = "http://127.0.0.1:8080"

// Usage lists the commands this package serves.
const Usage = `  push FILE...                 store workflow definitions (.json, .yaml, .yml)
  workflows                    the stored workflows: versions, instances, owner
  start WF [--version V] [--param k=v]... [--wait | --count N]
                               start a run; with --wait follow it and exit 0 only if it succeeds;
                               with --count start N runs, sent 100 to a request (start-batch)
  start-batch WF FILE|- [--version V]
                               start a run for each line of FILE (or standard input): one
                               start request object per line (run_params, request_id...), sent
                               100 to a request; exit 0 only if every one started
  status WF INSTANCE           the run's steps (status, attempt, duration) as a tree: loops' iterations, children
  instances WF [--status S]    a workflow's instances, newest first
  watch WF INSTANCE            follow a run until it ends (exit 0 only if it succeeds)
  timeline WF INSTANCE         the run's timeline
  stop|kill|unblock WF INSTANCE
  restart WF INSTANCE          a new run of an ended instance (RESTART_FROM_INCOMPLETE)
  step stop|kill|skip|bypass|resume|restart WF INSTANCE STEP
                               act on a step's current attempt
  breakpoint add|list|remove WF STEP
  permit set TAG N | permit get|delete TAG
  whoami                       the caller as the API sees it: principal, teams, admin
  access get WF                a workflow's grant (owners, operators, readers) and your role on it
  access set WF [--owners E,...] [--operators E,...] [--readers E,...]
                               replace the lists given (the others are read and kept; given all
                               three, nothing is read); entries: *, team:NAME, IAM principal
                               ARN patterns; '' empties a list
  teams [get NAME | set NAME --member ARN... | delete NAME]
                               the teams (admins change them)
  signal NAME [k=v]...         announce a signal
  diff WF A B                  what changed from version A to version B (each a number, active, latest
                               or default): steps, edges, params, workflow fields, properties
  backfill WF --from T --to T [--concurrency N] [--priority low|normal] [--dry-run]
                               start the time-trigger firings of [T, T) (RFC 3339) and follow them
                               with a progress bar (exit 0 only if every run succeeds); --dry-run
                               creates nothing and prints the instances, steps and expected duration
  backfill status|pause|resume|cancel WF BACKFILL
  ui [--listen ADDR]           serve the web UI on ADDR (default 127.0.0.1:8765), its API calls
                               forwarded to the endpoint (SigV4-signed for AWS), to the browser
                               that opens the one-time login URL it prints
  options: --endpoint URL (or $MAESTRO_ENDPOINT; default http://127.0.0.1:8080), --json
`

// Commands are the subcommands Run serves.
var Commands = []string{"push", "workflows", "ui", "start", "start-batch", "status", "instances", "watch", "timeline", "stop", "kill", "unblock", "restart",
	"step", "breakpoint", "permit", "signal", "whoami", "access", "teams", "diff", "backfill"}

// Client calls the API.
type Client struct {
	base   *url.URL
	http   *http.Client
	signer func(ctx context.Context, r *http.Request, body []byte) error
}

// NewClient returns a client of the API at endpoint. Requests to an AWS
// endpoint (a host under amazonaws.com) are SigV4-signed for execute-api
// with the default credential chain. Requests to any other endpoint (the
// local stack) are signed too when the environment holds static keys,
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (one of maestro local's
// -credential keys), for the region AWS_REGION, else AWS_DEFAULT_REGION,
// else us-east-1; otherwise they go unsigned.
func NewClient(ctx context.Context, endpoint string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want an http(s) URL", endpoint)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 60 * time.Second}}
	switch {
	case strings.HasSuffix(u.Hostname(), ".amazonaws.com"):
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS credentials for %s: %w", u.Host, err)
		}
		region := cfg.Region
		if parts := strings.Split(u.Hostname(), "."); len(parts) >= 5 && parts[1] == "execute-api" {
			region = parts[2]
		}
		c.signer = signWith(cfg.Credentials, region)
	case os.Getenv("AWS_ACCESS_KEY_ID") != "" && os.Getenv("AWS_SECRET_ACCESS_KEY") != "":
		region := os.Getenv("AWS_REGION")
		if region == "" {
			region = os.Getenv("AWS_DEFAULT_REGION")
		}
		if region == "" {
			region = "us-east-1"
		}
		creds := credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
		c.signer = signWith(creds, region)
	}
	return c, nil
}

// signWith signs requests for execute-api in region with creds.
func signWith(creds aws.CredentialsProvider, region string) func(ctx context.Context, r *http.Request, body []byte) error {
	signer := v4.NewSigner()
	return func(ctx context.Context, r *http.Request, body []byte) error {
		cr, err := creds.Retrieve(ctx)
		if err != nil {
			return fmt.Errorf("AWS credentials: %w", err)
		}
		sum := sha256.Sum256(body)
		return signer.SignHTTP(ctx, cr, r, hex.EncodeToString(sum[:]), "execute-api", region, time.Now())
	}
}

// APIError is an answer with a 4xx or 5xx status.
type APIError struct {
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Errors  []string `json:"errors"`
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	for _, d := range e.Errors {
		msg += "\n  " + d
	}
	return msg
}

// Do sends a request (path under the base URL, body JSON or nil) and
// decodes the JSON answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	return c.send(ctx, method, path, jsonType, body, out)
}

// Media types of request bodies: the API refuses a body declared as
// anything else (415).
const (
	jsonType = "application/json"
	yamlType = "application/yaml"
)

// send is Do with a body of the given media type; an empty body is sent
// without a Content-Type.
func (c *Client) send(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		u.Path, u.RawQuery = strings.TrimRight(c.base.Path, "/")+path[:i], path[i+1:]
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", contentType)
	}
	if c.signer != nil {
		if err := c.signer(ctx, req, body); err != nil {
			return err
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		e := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		e.Status = resp.StatusCode
		return e
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode the answer to %s %s: %w", method, path, err)
		}
	}
	return nil
}

// Options are what Run needs besides its arguments.
type Options struct {
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Poll is how often --wait looks at the run (default 500 ms).
	Poll time.Duration
}

// Run runs subcommand args[0] with its arguments and returns the exit code.
func Run(ctx context.Context, args []string, o Options) int {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if len(args) == 0 {
		fmt.Fprint(o.Stderr, Usage)
		return ExitUsage
	}
	cmd := args[0]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	endpoint := fs.String("endpoint", "", "API base URL (default $"+EnvEndpoint+", else "+DefaultEndpoint+")")
	asJSON := fs.Bool("json", false, "print the API's JSON answers")
	version := fs.String("version", "latest", "start: the workflow version (latest, active, default or a number)")
	wait := fs.Bool("wait", false, "start: follow the run until it ends; exit 0 only if it succeeds")
	count := fs.Int("count", 0, "start: start this many runs with the same params (sent in batches of 100)")
	status := fs.String("status", "", "instances: only those in this status")
	listen := fs.String("listen", DefaultUIAddr, "ui: the loopback address to serve the UI on")
	var bf backfillFlags
	fs.StringVar(&bf.from, "from", "", "backfill: the first time of the interval (RFC 3339, inclusive)")
	fs.StringVar(&bf.to, "to", "", "backfill: the end of the interval (RFC 3339, exclusive)")
	fs.IntVar(&bf.concurrency, "concurrency", 1, "backfill: how many of its runs may run at once (1-100)")
	fs.StringVar(&bf.priority, "priority", "normal", "backfill: normal, or low (admits only while no live run is in progress or queued)")
	fs.BoolVar(&bf.dryRun, "dry-run", false, "backfill: create nothing; print the instances, steps and expected duration")
	var af accessFlags
	fs.Var(&af.owners, "owners", "access set: the owners, comma-separated (repeatable; '' empties the list)")
	fs.Var(&af.operators, "operators", "access set: the operators, comma-separated (repeatable; '' empties the list)")
	fs.Var(&af.readers, "readers", "access set: the readers, comma-separated (repeatable; '' empties the list)")
	fs.Var(&af.members, "member", "teams set: a member, an IAM principal ARN pattern (repeatable, or comma-separated)")
	var params []string
	fs.Func("param", "start: a run param k=v (repeatable; v typed as JSON when it parses, else a string)", func(v string) error {
		params = append(params, v)
		return nil
	})
	if err := fs.Parse(reorder(args[1:])); err != nil {
		return ExitUsage
	}
	rest := fs.Args()
	if *endpoint == "" {
		*endpoint = o.Getenv(EnvEndpoint)
	}
	if *endpoint == "" {
		*endpoint = DefaultEndpoint
	}
	c, err := NewClient(ctx, *endpoint)
	if err != nil {
		fmt.Fprintf(o.Stderr, "maestro %s: %v\n", cmd, err)
		return ExitUsage
	}
	r := &runner{c: c, o: o, json: *asJSON}
	commands := r.commands(ctx, flags{version: *version, params: params, wait: *wait, status: *status, listen: *listen, count: *count, access: &af, backfill: bf})
	command, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(o.Stderr, "maestro: unknown command %q\n", cmd)
		return ExitUsage
	}
	if (af.owners.set || af.operators.set || af.readers.set) && cmd != "access" {
		fmt.Fprintf(o.Stderr, "maestro %s: --owners, --operators and --readers go with access set\n", cmd)
		return ExitUsage
	}
	if af.members.set && cmd != "teams" {
		fmt.Fprintf(o.Stderr, "maestro %s: --member goes with teams set\n", cmd)
		return ExitUsage
	}
	if len(rest) < command.args || (!command.more && len(rest) != command.args) {
		fmt.Fprintf(o.Stderr, "usage: maestro %s %s\n", cmd, command.usage)
		return ExitUsage
	}
	return command.run(rest)
}

// flags are the values of the flags some commands read.
type flags struct {
	version, status, listen string
	params                  []string
	wait                    bool
	count                   int
	access                  *accessFlags
	backfill                backfillFlags
}

// command is a subcommand: it takes args positional arguments (with more,
// at least args), as usage says, and run runs it with them.
type command struct {
	args  int
	more  bool
	usage string
	run   func(rest []string) int
}

// commands are the subcommands by name.
func (r *runner) commands(ctx context.Context, f flags) map[string]command {
	cmds := map[string]command{
		"push":      {1, true, "FILE...", func(rest []string) int { return r.push(ctx, rest) }},
		"workflows": {0, false, "", func([]string) int { return r.workflows(ctx) }},
		"ui":        {0, false, "[--listen ADDR]", func([]string) int { return r.serveUI(ctx, f.listen) }},
		"start": {1, false, "WF [--version V] [--param k=v]... [--wait | --count N]", func(rest []string) int {
			switch {
			case f.count > 0 && f.wait:
				fmt.Fprintln(r.o.Stderr, "maestro start: --count and --wait do not go together")
				return ExitUsage
			case f.count > 0:
				return r.startCount(ctx, rest[0], f.version, f.params, f.count)
			case f.count < 0:
				fmt.Fprintln(r.o.Stderr, "maestro start: --count must be a positive number")
				return ExitUsage
			}
			return r.start(ctx, rest[0], f.version, f.params, f.wait)
		}},
		"start-batch": {2, false, "WF FILE|- [--version V]", func(rest []string) int {
			return r.startBatch(ctx, rest[0], f.version, rest[1])
		}},
		"status":    {2, false, "WF INSTANCE", func(rest []string) int { return r.status(ctx, rest[0], rest[1]) }},
		"instances": {1, false, "WF [--status S]", func(rest []string) int { return r.instances(ctx, rest[0], f.status) }},
		"restart":   {2, false, "WF INSTANCE", func(rest []string) int { return r.restart(ctx, rest[0], rest[1]) }},
		"watch":     {2, false, "WF INSTANCE", func(rest []string) int { return r.watch(ctx, rest[0], rest[1]) }},
		"timeline":  {2, false, "WF INSTANCE", func(rest []string) int { return r.timeline(ctx, rest[0], rest[1]) }},
		"step": {4, false, "stop|kill|skip|bypass|resume|restart WF INSTANCE STEP", func(rest []string) int {
			return r.stepAction(ctx, rest[0], rest[1], rest[2], rest[3])
		}},
		"breakpoint": {3, false, "add|list|remove WF STEP", func(rest []string) int { return r.breakpoint(ctx, rest[0], rest[1], rest[2]) }},
		"permit":     {2, true, "set TAG N | permit get|delete TAG", func(rest []string) int { return r.permit(ctx, rest[0], rest[1:]) }},
		"signal":     {1, true, "NAME [k=v]...", func(rest []string) int { return r.signal(ctx, rest[0], rest[1:]) }},
		"whoami":     {0, false, "", func([]string) int { return r.whoami(ctx) }},
		"access": {2, false, "get|set WF [--owners E,...] [--operators E,...] [--readers E,...]", func(rest []string) int {
			return r.access(ctx, rest[0], rest[1], f.access)
		}},
		"teams":    {0, true, teamsUsage, func(rest []string) int { return r.teams(ctx, rest, f.access) }},
		"diff":     {3, false, "WF A B", func(rest []string) int { return r.diffVersions(ctx, rest[0], rest[1], rest[2]) }},
		"backfill": {1, true, backfillUsage, func(rest []string) int { return r.backfill(ctx, rest, f.backfill) }},
	}
	for _, action := range []string{"stop", "kill", "unblock"} {
		cmds[action] = command{2, false, "WF INSTANCE", func(rest []string) int { return r.act(ctx, rest[0], rest[1], action) }}
	}
	return cmds
}

// watch follows an instance's latest run (maestro watch WF INSTANCE).
func (r *runner) watch(ctx context.Context, wf, instance string) int {
	inst, err := strconv.ParseInt(instance, 10, 64)
	if err != nil || inst <= 0 {
		fmt.Fprintln(r.o.Stderr, "maestro watch: INSTANCE must be a positive integer")
		return ExitUsage
	}
	return r.follow(ctx, wf, inst)
}

// reorder moves flags before positional arguments, so that
// "start WF --wait" parses as "start --wait WF".
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue(name) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func takesValue(name string) bool {
	switch name {
	case "endpoint", "version", "status", "param", "listen", "count", "owners", "operators", "readers", "member",
		"from", "to", "concurrency", "priority":
		return true
	}
	return false
}

type runner struct {
	c    *Client
	o    Options
	json bool
}

func (r *runner) fail(cmd string, err error) int {
	fmt.Fprintf(r.o.Stderr, "maestro %s: %v\n", cmd, err)
	return ExitFailed
}

func (r *runner) printJSON(v any) {
	enc := json.NewEncoder(r.o.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (r *runner) push(ctx context.Context, files []string) int {
	code := ExitOK
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			code = r.fail("push", err)
			continue
		}
		path, contentType := definitionPath("/api/v3/workflows", f)
		var out struct {
			Definition struct {
				Metadata struct {
					WorkflowID string `json:"workflow_id"`
					VersionID  int64  `json:"workflow_version_id"`
				} `json:"metadata"`
			} `json:"workflow_definition"`
		}
		var raw json.RawMessage
		if err := r.c.send(ctx, http.MethodPost, path, contentType, data, &raw); err != nil {
			code = r.fail("push", fmt.Errorf("%s: %w", f, err))
			continue
		}
		if r.json {
			fmt.Fprintln(r.o.Stdout, string(raw))
			continue
		}
		_ = json.Unmarshal(raw, &out)
		fmt.Fprintf(r.o.Stdout, "%s: workflow %s version %d\n", f, out.Definition.Metadata.WorkflowID, out.Definition.Metadata.VersionID)
	}
	return code
}

// definitionPath is the API path a definition file goes to, the JSON or
// the YAML endpoint under base, and the media type to send it as.
func definitionPath(base, file string) (path, contentType string) {
	if ext := strings.ToLower(filepath.Ext(file)); ext == ".yaml" || ext == ".yml" {
		return base + "/yaml", yamlType
	}
	return base, jsonType
}

// workflows lists the stored workflows, every page.
func (r *runner) workflows(ctx context.Context) int {
	type summary struct {
		ID         string         `json:"workflow_id"`
		Latest     int64          `json:"latest_version_id"`
		Active     int64          `json:"active_version_id"`
		Instances  int64          `json:"instance_count"`
		Properties map[string]any `json:"properties_snapshot"`
		Modified   int64          `json:"modify_time"`
	}
	var all []summary
	var raws []json.RawMessage
	for cursor := ""; ; {
		path := "/api/v3/workflows?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Workflows []json.RawMessage `json:"workflows"`
			Next      string            `json:"next_cursor"`
		}
		if err := r.c.Do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return r.fail("workflows", err)
		}
		for _, w := range page.Workflows {
			var s summary
			if err := json.Unmarshal(w, &s); err != nil {
				return r.fail("workflows", err)
			}
			all, raws = append(all, s), append(raws, w)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if r.json {
		out, _ := json.Marshal(map[string]any{"workflows": raws})
		fmt.Fprintln(r.o.Stdout, string(out))
		return ExitOK
	}
	tw := tabwriter.NewWriter(r.o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tACTIVE\tLATEST\tINSTANCES\tOWNER\tCHANGED")
	for _, w := range all {
		active := "-"
		if w.Active > 0 {
			active = strconv.FormatInt(w.Active, 10)
		}
		owner, _ := w.Properties["owner"].(string)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", w.ID, active, w.Latest, w.Instances, owner, time.UnixMilli(w.Modified).UTC().Format(time.RFC3339))
	}
	tw.Flush()
	return ExitOK
}

// runParam turns k=v into a run param: v typed as JSON when it parses
// (LONG, DOUBLE, BOOLEAN, STRING_ARRAY, MAP...), else a STRING.
func runParam(kv string) (string, map[string]any, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return "", nil, fmt.Errorf("param %q: want k=v", kv)
	}
	var val any = v
	typ := "STRING"
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		switch x := j.(type) {
		case float64:
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				val, typ = json.Number(v), "LONG"
			} else {
				val, typ = x, "DOUBLE"
			}
		case bool:
			val, typ = x, "BOOLEAN"
		case map[string]any:
			val, typ = x, "MAP"
		case []any:
			val, typ = x, "STRING_ARRAY"
		}
	}
	return k, map[string]any{"value": val, "type": typ}, nil
}

// instanceView is the part of an instance the CLI reads.
type instanceView struct {
	WorkflowID   string            `json:"workflow_id"`
	InstanceID   int64             `json:"workflow_instance_id"`
	RunID        int64             `json:"workflow_run_id"`
	Status       string            `json:"status"`
	StepStatuses map[string]string `json:"step_statuses"`
	Rollup       *engine.Rollup    `json:"rollup_overview"`
	Cost         *pricing.Cost     `json:"cost"`
	Timeline     []struct {
		Message string `json:"message"`
	} `json:"timeline"`
}

func terminal(status string) bool {
	switch status {
	case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
		return true
	}
	return false
}

// startBody is the start request of run params params (k=v, see
// runParam); the code is ExitUsage, having said why, when one is not k=v.
func (r *runner) startBody(cmd string, params []string) (map[string]json.RawMessage, int) {
	body := map[string]json.RawMessage{}
	if len(params) > 0 {
		rp := map[string]any{}
		for _, kv := range params {
			k, p, err := runParam(kv)
			if err != nil {
				fmt.Fprintf(r.o.Stderr, "maestro %s: %v\n", cmd, err)
				return nil, ExitUsage
			}
			rp[k] = p
		}
		body["run_params"], _ = json.Marshal(rp)
	}
	return body, ExitOK
}

func (r *runner) start(ctx context.Context, wf, version string, params []string, wait bool) int {
	body, code := r.startBody("start", params)
	if code != ExitOK {
		return code
	}
	data, _ := json.Marshal(body)
	var out struct {
		InstanceID int64  `json:"workflow_instance_id"`
		RunID      int64  `json:"workflow_run_id"`
		Version    int64  `json:"workflow_version_id"`
		Status     string `json:"status"`
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodPost, "/api/v3/workflows/"+url.PathEscape(wf)+"/versions/"+url.PathEscape(version)+"/actions/start", data, &raw); err != nil {
		return r.fail("start", err)
	}
	_ = json.Unmarshal(raw, &out)
	if r.json && !wait {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	if !r.json {
		fmt.Fprintf(r.o.Stdout, "started %s instance %d (version %d, run %d)\n", wf, out.InstanceID, out.Version, out.RunID)
	}
	if !wait {
		return ExitOK
	}
	return r.follow(ctx, wf, out.InstanceID)
}

// follow polls an instance until it ends, printing a progress line when
// it changes; the exit code says whether it succeeded.
func (r *runner) follow(ctx context.Context, wf string, inst int64) int {
	last := ""
	ticker := time.NewTicker(r.o.Poll)
	defer ticker.Stop()
	for {
		var v instanceView
		if err := r.c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v3/workflows/%s/instances/%d", url.PathEscape(wf), inst), nil, &v); err != nil {
			return r.fail("start", err)
		}
		line := progress(v)
		if line != last && !r.json {
			fmt.Fprintln(r.o.Stdout, line)
			last = line
		}
		if terminal(v.Status) {
			if r.json {
				r.printJSON(v)
			}
			if v.Status == "SUCCEEDED" {
				return ExitOK
			}
			if !r.json && len(v.Timeline) > 0 {
				fmt.Fprintf(r.o.Stderr, "maestro: %s instance %d %s: %s\n", wf, inst, v.Status, v.Timeline[len(v.Timeline)-1].Message)
			}
			return ExitFailed
		}
		select {
		case <-ctx.Done():
			return r.fail("start", ctx.Err())
		case <-ticker.C:
		}
	}
}

// progress is one line about a run: its status, its steps by status and,
// with loops or subworkflows, the leaf steps of its tree.
func progress(v instanceView) string {
	counts := map[string]int{}
	for _, s := range v.StepStatuses {
		counts[s]++
	}
	line := fmt.Sprintf("%s  %d steps: %s", v.Status, len(v.StepStatuses), countList(counts))
	if v.Rollup != nil && v.Rollup.TotalLeafCount > int64(len(v.StepStatuses)) {
		leaf := map[string]int{}
		for k, n := range v.Rollup.Overview {
			leaf[string(k)] = int(n)
		}
		line += fmt.Sprintf("  (%d leaf steps: %s)", v.Rollup.TotalLeafCount, countList(leaf))
	}
	return line
}

func countList(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}

// stepView is the part of a step attempt the CLI reads.
type stepView struct {
	StepID  string `json:"step_id"`
	Attempt int64  `json:"step_attempt_id"`
	Type    string `json:"step_type"`
	Runtime struct {
		Status    string `json:"status"`
		StartTime int64  `json:"start_time"`
		EndTime   int64  `json:"end_time"`
	} `json:"runtime_state"`
	Foreach     *engine.LoopSummary `json:"foreach_overview"`
	While       *engine.LoopSummary `json:"while_overview"`
	Subworkflow *engine.ChildRef    `json:"subworkflow_overview"`
}

// statusDepth is how deep status descends into iterations and children;
// statusIterations is how many running or failed iterations of a loop it
// shows.
const (
	statusDepth      = 3
	statusIterations = 10
)

// status prints a run's steps as a tree: a loop step's iterations (counts,
// then the running and failed ones with their own steps) and a subworkflow
// step's child run under it.
func (r *runner) status(ctx context.Context, wf, inst string) int {
	base := fmt.Sprintf("/api/v3/workflows/%s/instances/%s", url.PathEscape(wf), url.PathEscape(inst))
	var v instanceView
	if err := r.c.Do(ctx, http.MethodGet, base, nil, &v); err != nil {
		return r.fail("status", err)
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodGet, base+"/steps", nil, &raw); err != nil {
		return r.fail("status", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var steps []stepView
	if err := json.Unmarshal(raw, &steps); err != nil {
		return r.fail("status", err)
	}
	fmt.Fprintf(r.o.Stdout, "%s instance %d run %d: %s\n", v.WorkflowID, v.InstanceID, v.RunID, v.Status)
	if v.Cost != nil {
		fmt.Fprintln(r.o.Stdout, costLine(v.Cost))
	}
	tw := tabwriter.NewWriter(r.o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tTYPE\tATTEMPT\tSTATUS\tDURATION")
	if err := r.stepRows(ctx, tw, steps, "", 0); err != nil {
		_ = tw.Flush()
		return r.fail("status", err)
	}
	_ = tw.Flush()
	return ExitOK
}

// costLine says what a run cost, what the sum covers, and its parts.
func costLine(c *pricing.Cost) string {
	line := fmt.Sprintf("cost $%.6f (covers %s; prices of %s)", c.TotalUSD, strings.Join(c.Covers, ", "), c.PricesOf)
	names := slices.Sorted(maps.Keys(c.Parts))
	for i, name := range names {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		p := c.Parts[name]
		// Counts of shares (a message's part of an invocation) to 4 places.
		count := strconv.FormatFloat(math.Round(p.Count*1e4)/1e4, 'f', -1, 64)
		line += fmt.Sprintf("%s%s %s $%.6f", sep, name, count, p.USD)
	}
	return line
}

// stepRows writes one row per step, and the tree under loop and
// subworkflow steps, indented by indent.
func (r *runner) stepRows(ctx context.Context, tw io.Writer, steps []stepView, indent string, depth int) error {
	for _, s := range steps {
		fmt.Fprintf(tw, "%s%s\t%s\t%d\t%s\t%s\n", indent, s.StepID, orDash(s.Type), s.Attempt, s.Runtime.Status, spanOf(s.Runtime.StartTime, s.Runtime.EndTime))
		loop := s.Foreach
		if loop == nil {
			loop = s.While
		}
		switch {
		case loop != nil:
			if err := r.loopRows(ctx, tw, loop, indent+"  ", depth); err != nil {
				return err
			}
		case s.Subworkflow != nil && s.Subworkflow.InstanceID > 0:
			c := s.Subworkflow
			if err := r.runRows(ctx, tw, "child ", c.WorkflowID, c.InstanceID, indent+"  ", depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// loopRows writes a loop's counts, then its running and failed iterations.
func (r *runner) loopRows(ctx context.Context, tw io.Writer, l *engine.LoopSummary, indent string, depth int) error {
	inline := l.WorkflowID
	if inline == "" {
		inline = l.WhileID
	}
	counts := make([]string, 0, len(l.Counts))
	for st, n := range l.Counts {
		counts = append(counts, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(counts)
	total := "?"
	if l.Total > 0 {
		total = strconv.FormatInt(l.Total, 10)
	}
	summary := fmt.Sprintf("%d of %s started, %d running", l.Launched, total, l.Running)
	if len(counts) > 0 {
		summary += ": " + strings.Join(counts, ", ")
	}
	if l.Rollup != nil {
		summary += fmt.Sprintf("; %d leaf steps", l.Rollup.TotalLeafCount)
	}
	// The summary trails the last tab: text there is no cell, so its
	// length does not widen the columns, and the row keeps every column.
	fmt.Fprintf(tw, "%siterations\t\t\t\t%s\n", indent, summary)
	if depth+1 >= statusDepth || inline == "" {
		return nil
	}
	shown := 0
	for _, it := range l.RunningIterations {
		if shown == statusIterations {
			return nil
		}
		if err := r.runRows(ctx, tw, "iteration ", inline, it, indent, depth); err != nil {
			return err
		}
		shown++
	}
	if l.Counts[model.WorkflowFailed] == 0 {
		return nil
	}
	var failed struct {
		Instances []struct {
			ID int64 `json:"workflow_instance_id"`
		} `json:"workflow_instances"`
	}
	path := fmt.Sprintf("/api/v3/workflows/%s/instances?status=FAILED&limit=%d", url.PathEscape(inline), statusIterations)
	if err := r.c.Do(ctx, http.MethodGet, path, nil, &failed); err != nil {
		return err
	}
	for _, i := range failed.Instances {
		if shown == statusIterations {
			break
		}
		if err := r.runRows(ctx, tw, "iteration ", inline, i.ID, indent, depth); err != nil {
			return err
		}
		shown++
	}
	return nil
}

// runRows writes an iteration's or a child's row and, within the depth,
// its steps.
func (r *runner) runRows(ctx context.Context, tw io.Writer, label, wf string, inst int64, indent string, depth int) error {
	base := fmt.Sprintf("/api/v3/workflows/%s/instances/%d", url.PathEscape(wf), inst)
	var v struct {
		instanceView
		StartTime int64 `json:"start_time"`
		EndTime   int64 `json:"end_time"`
	}
	if err := r.c.Do(ctx, http.MethodGet, base, nil, &v); err != nil {
		return err
	}
	name := fmt.Sprintf("%s#%d", label, inst)
	if label == "child " {
		name = fmt.Sprintf("child %s #%d", wf, inst)
	}
	fmt.Fprintf(tw, "%s%s\t\t%d\t%s\t%s\n", indent, name, v.RunID, v.Status, spanOf(v.StartTime, v.EndTime))
	if depth+1 >= statusDepth {
		return nil
	}
	var steps []stepView
	if err := r.c.Do(ctx, http.MethodGet, base+"/steps", nil, &steps); err != nil {
		return err
	}
	return r.stepRows(ctx, tw, steps, indent+"  ", depth+1)
}

// spanOf formats the time from start to end (or now), "-" before a start.
func spanOf(start, end int64) string {
	if start <= 0 {
		return "-"
	}
	if end == 0 {
		end = time.Now().UnixMilli()
	}
	return (time.Duration(end-start) * time.Millisecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (r *runner) instances(ctx context.Context, wf, status string) int {
	path := "/api/v3/workflows/" + url.PathEscape(wf) + "/instances"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return r.fail("instances", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var list struct {
		Instances []struct {
			ID        int64  `json:"workflow_instance_id"`
			Run       int64  `json:"workflow_run_id"`
			Status    string `json:"status"`
			StartTime int64  `json:"start_time"`
			EndTime   int64  `json:"end_time"`
		} `json:"workflow_instances"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return r.fail("instances", err)
	}
	tw := tabwriter.NewWriter(r.o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tRUN\tSTATUS\tSTARTED")
	for _, i := range list.Instances {
		started := "-"
		if i.StartTime > 0 {
			started = time.UnixMilli(i.StartTime).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", i.ID, i.Run, i.Status, started)
	}
	_ = tw.Flush()
	return ExitOK
}

func (r *runner) act(ctx context.Context, wf, inst, action string) int {
	var v instanceView
	var raw json.RawMessage
	path := fmt.Sprintf("/api/v3/workflows/%s/instances/%s/actions/%s", url.PathEscape(wf), url.PathEscape(inst), action)
	if err := r.c.Do(ctx, http.MethodPut, path, nil, &raw); err != nil {
		return r.fail(action, err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	_ = json.Unmarshal(raw, &v)
	fmt.Fprintf(r.o.Stdout, "%s instance %d: %s\n", wf, v.InstanceID, v.Status)
	return ExitOK
}

func (r *runner) restart(ctx context.Context, wf, inst string) int {
	var v instanceView
	var raw json.RawMessage
	path := fmt.Sprintf("/api/v3/workflows/%s/instances/%s/actions/restart", url.PathEscape(wf), url.PathEscape(inst))
	if err := r.c.Do(ctx, http.MethodPost, path, []byte(`{}`), &raw); err != nil {
		return r.fail("restart", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	_ = json.Unmarshal(raw, &v)
	fmt.Fprintf(r.o.Stdout, "%s instance %d: run %d %s\n", wf, v.InstanceID, v.RunID, v.Status)
	return ExitOK
}

func (r *runner) signal(ctx context.Context, name string, kvs []string) int {
	params := map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(r.o.Stderr, "maestro signal: param %q: want k=v\n", kv)
			return ExitUsage
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			params[k] = n
		} else {
			params[k] = v
		}
	}
	data, _ := json.Marshal(map[string]any{"name": name, "params": params})
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodPost, "/api/v3/signals", data, &raw); err != nil {
		return r.fail("signal", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var out struct {
		Seq     int64 `json:"seq_id"`
		Created bool  `json:"created"`
	}
	_ = json.Unmarshal(raw, &out)
	fmt.Fprintf(r.o.Stdout, "signal %s instance %d\n", name, out.Seq)
	return ExitOK
}

func (r *runner) timeline(ctx context.Context, wf, inst string) int {
	var v struct {
		Status   string `json:"status"`
		Timeline []struct {
			Time    int64  `json:"timestamp"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"timeline"`
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v3/workflows/%s/instances/%s", url.PathEscape(wf), url.PathEscape(inst)), nil, &raw); err != nil {
		return r.fail("timeline", err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return r.fail("timeline", err)
	}
	if r.json {
		r.printJSON(v.Timeline)
		return ExitOK
	}
	for _, e := range v.Timeline {
		fmt.Fprintf(r.o.Stdout, "%s  %-10s %s\n", time.UnixMilli(e.Time).UTC().Format("2006-01-02T15:04:05.000Z"), e.Status, e.Message)
	}
	return ExitOK
}

// stepActions are the actions "maestro step" takes.
var stepActions = []string{"stop", "kill", "skip", "bypass", "resume", "restart"}

func (r *runner) stepAction(ctx context.Context, action, wf, inst, step string) int {
	base := fmt.Sprintf("/api/v3/workflows/%s/instances/%s/steps/%s/actions/", url.PathEscape(wf), url.PathEscape(inst), url.PathEscape(step))
	var err error
	var raw json.RawMessage
	switch action {
	case "restart":
		err = r.c.Do(ctx, http.MethodPost, base+"restart", []byte(`{}`), &raw)
	case "stop", "kill", "skip", "bypass":
		err = r.c.Do(ctx, http.MethodPut, base+action, nil, &raw)
	case "resume":
		// A paused attempt resumes through its breakpoint: the latest run's
		// current attempt of the step.
		var steps []stepView
		var v instanceView
		ibase := fmt.Sprintf("/api/v3/workflows/%s/instances/%s", url.PathEscape(wf), url.PathEscape(inst))
		if err = r.c.Do(ctx, http.MethodGet, ibase, nil, &v); err == nil {
			err = r.c.Do(ctx, http.MethodGet, ibase+"/steps", nil, &steps)
		}
		if err != nil {
			return r.fail("step resume", err)
		}
		attempt := int64(0)
		for _, sv := range steps {
			if sv.StepID == step {
				attempt = sv.Attempt
			}
		}
		if attempt == 0 {
			return r.fail("step resume", fmt.Errorf("instance %s of %s has no step %s", inst, wf, step))
		}
		err = r.c.Do(ctx, http.MethodPut, fmt.Sprintf("/api/v3/workflows/steps/breakpoints/%s/instances/%s/runs/%d/steps/%s/attempts/%d/actions/resume",
			url.PathEscape(wf), url.PathEscape(inst), v.RunID, url.PathEscape(step), attempt), nil, &raw)
	default:
		fmt.Fprintf(r.o.Stderr, "maestro step: unknown action %q (want %s)\n", action, strings.Join(stepActions, ", "))
		return ExitUsage
	}
	if err != nil {
		return r.fail("step "+action, err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var v instanceView
	_ = json.Unmarshal(raw, &v)
	fmt.Fprintf(r.o.Stdout, "%s instance %d: step %s %s; the run is %s\n", wf, v.InstanceID, step, v.StepStatuses[step], v.Status)
	return ExitOK
}

func (r *runner) breakpoint(ctx context.Context, action, wf, step string) int {
	q := "?workflowId=" + url.QueryEscape(wf) + "&stepId=" + url.QueryEscape(step)
	var raw json.RawMessage
	var err error
	switch action {
	case "add":
		body, _ := json.Marshal(map[string]string{"workflow_id": wf, "step_id": step})
		err = r.c.Do(ctx, http.MethodPost, "/api/v3/workflows/steps/breakpoints", body, &raw)
	case "list":
		err = r.c.Do(ctx, http.MethodGet, "/api/v3/workflows/steps/breakpoints"+q, nil, &raw)
	case "remove":
		err = r.c.Do(ctx, http.MethodDelete, "/api/v3/workflows/steps/breakpoints"+q, nil, &raw)
	default:
		fmt.Fprintf(r.o.Stderr, "maestro breakpoint: unknown action %q (want add, list or remove)\n", action)
		return ExitUsage
	}
	if err != nil {
		return r.fail("breakpoint "+action, err)
	}
	fmt.Fprintln(r.o.Stdout, string(raw))
	return ExitOK
}

func (r *runner) permit(ctx context.Context, action string, args []string) int {
	var raw json.RawMessage
	var err error
	switch {
	case action == "set" && len(args) == 2:
		n, perr := strconv.ParseInt(args[1], 10, 64)
		if perr != nil || n < 0 {
			fmt.Fprintln(r.o.Stderr, "maestro permit set: N must be a non-negative integer")
			return ExitUsage
		}
		body, _ := json.Marshal(map[string]any{"tag": args[0], "max_allowed": n})
		err = r.c.Do(ctx, http.MethodPost, "/api/v3/tag-permits", body, &raw)
	case (action == "get" || action == "delete") && len(args) == 1:
		method := http.MethodGet
		if action == "delete" {
			method = http.MethodDelete
		}
		err = r.c.Do(ctx, method, "/api/v3/tag-permits/"+url.PathEscape(args[0]), nil, &raw)
	default:
		fmt.Fprintln(r.o.Stderr, "usage: maestro permit set TAG N | permit get|delete TAG")
		return ExitUsage
	}
	if err != nil {
		return r.fail("permit "+action, err)
	}
	fmt.Fprintln(r.o.Stdout, string(raw))
	return ExitOK
}
