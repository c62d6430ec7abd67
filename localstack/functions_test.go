package localstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
)

// TestFunctionServerSpeaksLambdasInvokeAPI drives the local functions with
// the AWS SDK's Lambda client, as the Lambda step does.
func TestFunctionServerSpeaksLambdasInvokeAPI(t *testing.T) {
	done := make(chan []byte, 1)
	fs, err := StartFunctionServer(map[string]LocalFunction{
		"echo": CommandFunction{Argv: []string{"cat"}},
		"fail": CommandFunction{Argv: []string{"sh", "-c", "echo starting >&2; echo 'disk full' >&2; exit 3"}},
		"text": CommandFunction{Argv: []string{"sh", "-c", "echo hello"}},
		"async": FunctionFunc(func(_ context.Context, p []byte) ([]byte, error) {
			done <- p
			return nil, nil
		}),
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	cfg, err := emulator.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	WithServiceEndpoint(&cfg, "Lambda", fs.URL)
	client := lambda.NewFromConfig(cfg)

	out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("arn:aws:lambda:us-east-1:000000000000:function:echo:live"), Payload: []byte(`{"n":1}`)})
	if err != nil || out.FunctionError != nil || string(out.Payload) != `{"n":1}` || out.StatusCode != 200 {
		t.Fatalf("echo: %+v %v", out, err)
	}
	out, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("fail"), Payload: []byte(`{}`)})
	if err != nil || aws.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(string(out.Payload), `"errorMessage":"disk full"`) {
		t.Fatalf("fail: %+v %q %v", out, out.Payload, err)
	}
	out, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("text")})
	if err != nil || string(out.Payload) != `"hello\n"` {
		t.Fatalf("text: %q %v", out.Payload, err)
	}
	_, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("missing")})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		var api smithy.APIError
		errors.As(err, &api)
		t.Fatalf("missing function: %v (%T)", err, api)
	}
	out, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("async"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{"a":1}`)})
	if err != nil || out.StatusCode != 202 {
		t.Fatalf("async: %+v %v", out, err)
	}
	select {
	case p := <-done:
		if string(p) != `{"a":1}` {
			t.Fatalf("async payload %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the asynchronous invocation did not run")
	}
	calls := fs.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s/%s", c.Function, c.InvocationType))
	}
	if strings.Join(got, " ") != "echo/RequestResponse fail/RequestResponse text/RequestResponse async/Event" {
		t.Fatalf("calls %v", got)
	}
}

// TestFunctionServerRefusesWebPages: a page of another site open in the
// developer's browser cannot invoke a local function — not with a simple
// cross-site request (it carries an Origin) and not through a DNS name
// rebound to loopback (a foreign Host) — while a Lambda client on the
// machine, addressing the server by its address or localhost, can.
func TestFunctionServerRefusesWebPages(t *testing.T) {
	var ran atomic.Int64
	fs, err := StartFunctionServer(map[string]LocalFunction{
		"run": FunctionFunc(func(context.Context, []byte) ([]byte, error) {
			ran.Add(1)
			return []byte(`{}`), nil
		}),
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	u, _ := url.Parse(fs.URL)
	invoke := func(host, origin string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", fs.URL+"/2015-03-31/functions/run/invocations", strings.NewReader(`{}`))
		req.Host = host
		req.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct{ name, host, origin string }{
		{"cross-site", u.Host, "https://evil.example"},
		{"opaque origin", u.Host, "null"},
		{"rebound name", "evil.example:" + u.Port(), ""},
		{"rebound name with its origin", "evil.example:" + u.Port(), "http://evil.example:" + u.Port()},
		{"other port", "127.0.0.1:1", ""},
	} {
		if code := invoke(tc.host, tc.origin); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, code)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("refused invocations ran the function %d times", n)
	}
	for _, host := range []string{u.Host, "localhost:" + u.Port()} {
		if code := invoke(host, ""); code != http.StatusOK {
			t.Errorf("a local client at %s: %d", host, code)
		}
	}
	if n := ran.Load(); n != 2 {
		t.Fatalf("the local clients' invocations ran the function %d times, want 2", n)
	}
}

func TestParseFunctionSpec(t *testing.T) {
	name, f, err := ParseFunctionSpec("train=python3 train.py --fast")
	if err != nil || name != "train" || strings.Join(f.Argv, "|") != "python3|train.py|--fast" {
		t.Fatalf("%q %v %v", name, f, err)
	}
	for _, bad := range []string{"train", "=cmd", "train= "} {
		if _, _, err := ParseFunctionSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
