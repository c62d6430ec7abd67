package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
	c, err := NewClient(t.Context(), "http://127.0.0.1:8080/")
	if err != nil || c.signer != nil {
		t.Fatalf("a local endpoint is not signed: %v", err)
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
		{[]string{"start"}, "usage: maestro start WF [--version V] [--param k=v]... [--wait]\n"},
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
