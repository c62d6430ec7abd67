package cli

import (
	"encoding/json"
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
