package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/localstack/sigv4"
)

func TestReorder(t *testing.T) {
	got := reorder([]string{"WF", "--wait", "--param", "a=1", "--version=3", "--json", "--", "--odd"})
	want := []string{"--wait", "--param", "a=1", "--version=3", "--json", "WF", "--odd"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func TestRunParam(t *testing.T) {
	for kv, want := range map[string]string{
		"n=42":          `{"type":"LONG","value":42}`,
		"x=1.5":         `{"type":"DOUBLE","value":1.5}`,
		"b=true":        `{"type":"BOOLEAN","value":true}`,
		"s=hello":       `{"type":"STRING","value":"hello"}`,
		`l=["a","b"]`:   `{"type":"STRING_ARRAY","value":["a","b"]}`,
		`m={"k":"v"}`:   `{"type":"MAP","value":{"k":"v"}}`,
		"date=20261126": `{"type":"LONG","value":20261126}`,
	} {
		_, p, err := runParam(kv)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(p)
		if string(got) != want {
			t.Errorf("%s: %s, want %s", kv, got, want)
		}
	}
	if _, _, err := runParam("novalue"); err == nil || !strings.Contains(err.Error(), "want k=v") {
		t.Fatalf("%v", err)
	}
}

func TestEndpoints(t *testing.T) {
	if _, err := NewClient(t.Context(), "ftp://x"); err == nil {
		t.Fatal("an ftp endpoint accepted")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	c, err := NewClient(t.Context(), "http://127.0.0.1:8080/")
	if err != nil || c.signer != nil {
		t.Fatalf("a local endpoint is not signed without keys in the environment: %v", err)
	}
}

// TestLocalEndpointSigned: with static keys in the environment, requests
// to a local endpoint are signed so that the local stack's verifier
// accepts them (and refuses them when the secret is not the key's).
func TestLocalEndpointSigned(t *testing.T) {
	v, err := sigv4.NewVerifier([]sigv4.Credential{{AccessKey: "alice", Secret: "S3CRET", Principal: "arn:aws:iam::000000000000:role/alice"}},
		"eu-west-1", "execute-api", nil)
	if err != nil {
		t.Fatal(err)
	}
	var verr error
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, verr = v.Verify(r)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer api.Close()
	t.Setenv("AWS_REGION", "eu-west-1")
	for _, tc := range []struct {
		secret string
		ok     bool
	}{{"S3CRET", true}, {"WRONG", false}} {
		t.Setenv("AWS_ACCESS_KEY_ID", "alice")
		t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
		c, err := NewClient(t.Context(), api.URL)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Do(t.Context(), http.MethodPost, "/api/v3/signals?x=a%20b", []byte(`{"name":"s"}`), nil); err != nil {
			t.Fatal(err)
		}
		if (verr == nil) != tc.ok {
			t.Errorf("secret %s: verifier said %v, want accepted %v", tc.secret, verr, tc.ok)
		}
	}
}

// TestRequestContentTypes: the CLI declares every body it sends as what it
// is — a .yaml definition as application/yaml, JSON as application/json —
// since the API refuses a body of another type (415), and sends a request
// without a body without a Content-Type.
func TestRequestContentTypes(t *testing.T) {
	type seen struct{ method, path, contentType string }
	var got []seen
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type")})
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"workflow_definition":{"metadata":{"workflow_id":"w","workflow_version_id":1}}}`)
	}))
	defer api.Close()
	dir := t.TempDir()
	yamlFile, jsonFile := filepath.Join(dir, "w.yaml"), filepath.Join(dir, "w.json")
	if err := os.WriteFile(yamlFile, []byte("workflow: {id: w, steps: []}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonFile, []byte(`{"workflow":{"id":"w","steps":[]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		var stderr bytes.Buffer
		if code := Run(t.Context(), append(args, "--endpoint", api.URL), Options{Stdout: io.Discard, Stderr: &stderr}); code != ExitOK {
			t.Fatalf("maestro %v: exit %d: %s", args, code, stderr.String())
		}
	}
	run("push", yamlFile, jsonFile)
	run("stop", "w", "1")
	want := []seen{
		{"POST", "/api/v3/workflows/yaml", "application/yaml"},
		{"POST", "/api/v3/workflows", "application/json"},
		{"PUT", "/api/v3/workflows/w/instances/1/actions/stop", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests\n%+v\nwant\n%+v", got, want)
	}
}

// TestUsage: a command given the wrong number of arguments, or an unknown
// command, prints its usage and exits 2 without calling the API.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"push"}, "usage: maestro push FILE...\n"},
		{[]string{"workflows", "x"}, "usage: maestro workflows \n"},
		{[]string{"ui", "x"}, "usage: maestro ui [--listen ADDR]\n"},
		{[]string{"start"}, "usage: maestro start WF [--version V] [--param k=v]... [--wait | --count N]\n"},
		{[]string{"start-batch", "wf"}, "usage: maestro start-batch WF FILE|- [--version V]\n"},
		{[]string{"start", "wf", "--count", "2", "--wait"}, "maestro start: --count and --wait do not go together\n"},
		{[]string{"status", "wf"}, "usage: maestro status WF INSTANCE\n"},
		{[]string{"instances"}, "usage: maestro instances WF [--status S]\n"},
		{[]string{"kill", "wf"}, "usage: maestro kill WF INSTANCE\n"},
		{[]string{"restart", "wf", "1", "2"}, "usage: maestro restart WF INSTANCE\n"},
		{[]string{"watch", "wf"}, "usage: maestro watch WF INSTANCE\n"},
		{[]string{"watch", "wf", "0"}, "maestro watch: INSTANCE must be a positive integer\n"},
		{[]string{"timeline", "wf"}, "usage: maestro timeline WF INSTANCE\n"},
		{[]string{"step", "stop", "wf", "1"}, "usage: maestro step stop|kill|skip|bypass|resume|restart WF INSTANCE STEP\n"},
		{[]string{"breakpoint", "add", "wf"}, "usage: maestro breakpoint add|list|remove WF STEP\n"},
		{[]string{"permit", "get"}, "usage: maestro permit set TAG N | permit get|delete TAG\n"},
		{[]string{"signal"}, "usage: maestro signal NAME [k=v]...\n"},
		{[]string{"nope"}, "maestro: unknown command \"nope\"\n"},
	} {
		var stderr bytes.Buffer
		code := Run(t.Context(), append(tc.args, "--endpoint", "http://127.0.0.1:1"), Options{Stdout: io.Discard, Stderr: &stderr})
		if code != ExitUsage || stderr.String() != tc.want {
			t.Errorf("maestro %v: exit %d, %q; want %d, %q", tc.args, code, stderr.String(), ExitUsage, tc.want)
		}
	}
}

// TestStartBatch: start-batch sends a file's start requests 100 to a
// request, gives each request without a request_id one and keeps it when
// a throttled batch, or the failed starts of one, are sent again; it
// names a refused request by its line and exits 0 only when every request
// started.
func TestStartBatch(t *testing.T) {
	type batch struct {
		Requests []map[string]json.RawMessage `json:"requests"`
	}
	var sent []batch
	started := map[string]int64{} // request_id -> instance
	throttle, failOnce := 1, map[string]bool{}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v3/workflows/wf/versions/3/actions/start-batch" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		var b batch
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, b)
		if throttle > 0 {
			throttle--
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"message":"Too Many Requests"}`)
			return
		}
		for i, req := range b.Requests {
			if string(req["run_params"]) == `"bad"` {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"status":400,"message":"invalid batch start","errors":["requests[%d].run_params: must be an object"]}`, i)
				return
			}
		}
		var results []string
		for _, req := range b.Requests {
			var id string
			_ = json.Unmarshal(req["request_id"], &id)
			if id == "" {
				t.Fatalf("a request without a request_id: %v", req)
			}
			if string(req["run_params"]) == `"flaky"` && !failOnce[id] {
				failOnce[id] = true
				results = append(results, `{"error":{"status":500,"message":"internal error"}}`)
				continue
			}
			inst, before := started[id]
			if !before {
				inst = int64(len(started) + 1)
				started[id] = inst
			}
			results = append(results, fmt.Sprintf(`{"workflow_id":"wf","workflow_instance_id":%d,"workflow_run_id":1,"created":%t}`, inst, !before))
		}
		fmt.Fprintf(w, `{"results":[%s]}`, strings.Join(results, ","))
	}))
	defer api.Close()
	dir := t.TempDir()
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var lines []string
	for i := range 250 {
		switch i {
		case 7:
			lines = append(lines, `{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}`, "")
		case 120:
			lines = append(lines, `{"run_params":"flaky"}`)
		default:
			lines = append(lines, fmt.Sprintf(`{"run_params":{"n":{"value":%d,"type":"LONG"}}}`, i))
		}
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(t.Context(), append(args, "--endpoint", api.URL), Options{Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("start-batch", "wf", write("runs.jsonl", lines), "--version", "3")
	if code != ExitOK || !strings.HasSuffix(out, "250 started, 0 started before, 0 not started\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// A throttled first batch sent again; the flaky request sent again
	// alone; then the last two batches.
	sizes := []int{}
	for _, b := range sent {
		sizes = append(sizes, len(b.Requests))
	}
	if !reflect.DeepEqual(sizes, []int{100, 100, 100, 1, 50}) {
		t.Fatalf("batches of %v", sizes)
	}
	if !reflect.DeepEqual(sent[0], sent[1]) || string(sent[0].Requests[7]["request_id"]) != `"97a57978-803f-403e-9f9b-376d34689723"` {
		t.Fatalf("the throttled batch was not sent again as it was")
	}
	if !reflect.DeepEqual(sent[3].Requests[0], sent[2].Requests[20]) {
		t.Fatalf("the failed start was sent again as %v, want %v", sent[3].Requests[0], sent[2].Requests[20])
	}
	if !strings.Contains(out, "line 10: started wf instance 9 (run 1)\n") {
		t.Fatalf("the line after a blank line is not named by its line:\n%s", out)
	}

	code, out, errOut = run("start-batch", "wf", write("bad.jsonl", []string{`{}`, `{}`, `{"run_params":"bad"}`}), "--version", "3")
	if code != ExitFailed || !strings.Contains(errOut, "line 3.run_params: must be an object") {
		t.Fatalf("a refused batch: exit %d\n%s%s", code, out, errOut)
	}
	for _, bad := range []string{"[1]", `{"a":`, "x"} {
		code, out, errOut = run("start-batch", "wf", write("malformed.jsonl", []string{`{}`, bad}))
		if code != ExitUsage || !strings.Contains(errOut, "line 2: want a start request, a JSON object on one line") {
			t.Fatalf("a malformed line %q: exit %d\n%s%s", bad, code, out, errOut)
		}
	}
	n := len(sent)
	code, out, errOut = run("start", "wf", "--count", "3", "--version", "3", "--param", "day=20261128", "--json")
	var ans struct {
		Started int `json:"started"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &ans) != nil || ans.Started != 3 || len(sent) != n+1 ||
		string(sent[n].Requests[2]["run_params"]) != `{"day":{"type":"LONG","value":20261128}}` {
		t.Fatalf("start --count 3: exit %d\n%s%s", code, out, errOut)
	}
}
