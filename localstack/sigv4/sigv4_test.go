package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	region  = "us-east-1"
	service = "execute-api"
	secret  = "alice-secret"
)

var now = time.Date(2026, 11, 29, 4, 50, 0, 0, time.UTC)

// result is what the test server's verifier said about one request.
type result struct {
	cred Credential
	err  error
	body string
}

// serve starts a server whose handler verifies each request and hands back
// what Verify said, over the wire as a client's request arrives.
func serve(t *testing.T) (string, <-chan result) {
	t.Helper()
	v, err := NewVerifier([]Credential{
		{AccessKey: "AKALICE", Secret: secret, Principal: "arn:aws:iam::000000000000:role/alice"},
		{AccessKey: "AKBOB", Secret: "bob-secret", Principal: "arn:aws:iam::000000000000:role/bob"},
	}, region, service, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := v.Verify(r)
		b, _ := io.ReadAll(r.Body)
		got <- result{cred: c, err: err, body: string(b)}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

// sign signs r as the CLI does: the body's SHA-256 as payload hash, for
// execute-api in region, at when.
func sign(t *testing.T, r *http.Request, body []byte, key, sec, reg, svc string, when time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: sec}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), svc, reg, when); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyAcceptsTheSDKSigner(t *testing.T) {
	base, got := serve(t)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v3/workflows", ""},
		{"GET", "/api/v3/workflows?limit=5&cursor=a%2Fb&x=a+b&x=a-b&empty=", ""},
		{"POST", "/api/v3/workflows/wf-1/instances", `{"run_params":{}}`},
		{"PUT", "/api/v3/signals/a%2Fb%20c~x", `{}`},
		{"DELETE", "/api/v3/workflows/wf.1_x-y", ""},
	} {
		body := []byte(tc.body)
		req, _ := http.NewRequest(tc.method, base+tc.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Extra", "  two   spaces ")
		sign(t, req, body, "AKALICE", secret, region, service, now.Add(-4*time.Minute))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r := <-got
		if r.err != nil || r.cred.Principal != "arn:aws:iam::000000000000:role/alice" {
			t.Errorf("%s %s: Verify = %+v, %v; want alice", tc.method, tc.path, r.cred, r.err)
		}
		if r.body != tc.body {
			t.Errorf("%s %s: the next handler read body %q, want %q", tc.method, tc.path, r.body, tc.body)
		}
	}
}

func TestVerifyRefusesTamperings(t *testing.T) {
	base, got := serve(t)
	body := []byte(`{"run_params":{"a":1}}`)
	for _, tc := range []struct {
		name   string
		build  func(t *testing.T) *http.Request
		reason string
	}{
		{"unsigned", func(t *testing.T) *http.Request {
			r, _ := http.NewRequest("POST", base+"/api/v3/x", bytes.NewReader(body))
			return r
		}, "not signed"},
		{"wrong secret", signed(base, body, func(r *http.Request) {}, "AKALICE", "not-the-secret", region, service, now), "does not match"},
		{"another's key with alice's secret", signed(base, body, func(r *http.Request) {}, "AKBOB", secret, region, service, now), "does not match"},
		{"unknown key", signed(base, body, func(r *http.Request) {}, "AKMALLORY", secret, region, service, now), "unknown access key"},
		{"other region", signed(base, body, func(r *http.Request) {}, "AKALICE", secret, "eu-west-1", service, now), "credential scope"},
		{"other service", signed(base, body, func(r *http.Request) {}, "AKALICE", secret, region, "s3", now), "credential scope"},
		{"too old", signed(base, body, func(r *http.Request) {}, "AKALICE", secret, region, service, now.Add(-MaxSkew-time.Second)), "more than"},
		{"from the future", signed(base, body, func(r *http.Request) {}, "AKALICE", secret, region, service, now.Add(MaxSkew+time.Second)), "more than"},
		{"method changed", signed(base, body, func(r *http.Request) { r.Method = "PUT" }, "AKALICE", secret, region, service, now), "does not match"},
		{"path changed", signed(base, body, func(r *http.Request) { r.URL.Path = "/api/v3/y" }, "AKALICE", secret, region, service, now), "does not match"},
		{"query changed", signed(base, body, func(r *http.Request) { r.URL.RawQuery = "limit=6" }, "AKALICE", secret, region, service, now), "does not match"},
		{"body changed", signed(base, body, func(r *http.Request) {
			b := []byte(`{"run_params":{"a":2}}`)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}, "AKALICE", secret, region, service, now), "does not match"},
		{"signed header changed", signed(base, body, func(r *http.Request) { r.Header.Set("X-Extra", "other") }, "AKALICE", secret, region, service, now), "does not match"},
		{"signed header removed", signed(base, body, func(r *http.Request) { r.Header.Del("X-Extra") }, "AKALICE", secret, region, service, now), "not in the request"},
		{"date changed", signed(base, body, func(r *http.Request) { r.Header.Set("X-Amz-Date", now.Add(time.Second).Format(amzDateLayout)) }, "AKALICE", secret, region, service, now), "does not match"},
		{"date of another day", signed(base, body, func(r *http.Request) { r.Header.Set("X-Amz-Date", "20261128T235959Z") }, "AKALICE", secret, region, service, now), "scope date"},
		{"content hash not the body's", signed(base, body, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64)) }, "AKALICE", secret, region, service, now), "X-Amz-Content-Sha256"},
		{"unsigned payload", signed(base, body, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD") }, "AKALICE", secret, region, service, now), "X-Amz-Content-Sha256"},
		{"signature altered", signed(base, body, func(r *http.Request) {
			a := r.Header.Get("Authorization")
			last := "0"
			if a[len(a)-1] == '0' {
				last = "1"
			}
			r.Header.Set("Authorization", a[:len(a)-1]+last)
		}, "AKALICE", secret, region, service, now), "does not match"},
		{"host not signed", signed(base, body, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=content-length;content-type;host;", "SignedHeaders=content-length;content-type;", 1))
		}, "AKALICE", secret, region, service, now), "host and x-amz-date must be signed"},
		{"other algorithm", signed(base, body, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1", 1))
		}, "AKALICE", secret, region, service, now), "algorithm"},
		{"garbled header", signed(base, body, func(r *http.Request) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 nonsense") }, "AKALICE", secret, region, service, now), "NAME=VALUE"},
		{"presigned", func(t *testing.T) *http.Request {
			r, _ := http.NewRequest("GET", base+"/api/v3/x", nil)
			u, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKALICE", SecretAccessKey: secret}, r, hex.EncodeToString(sha256.New().Sum(nil)), service, region, now)
			if err != nil {
				t.Fatal(err)
			}
			r, _ = http.NewRequest("GET", u, nil)
			return r
		}, "presigned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tc.build(t))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			r := <-got
			var refusal *Error
			if !errors.As(r.err, &refusal) || !strings.Contains(refusal.Reason, tc.reason) {
				t.Fatalf("Verify = %+v, %v; want a refusal naming %q", r.cred, r.err, tc.reason)
			}
			if r.cred != (Credential{}) {
				t.Errorf("a refusal returned credential %+v", r.cred)
			}
			for _, s := range []string{secret, "bob-secret"} {
				if strings.Contains(r.err.Error(), s) {
					t.Errorf("refusal %q names a secret", r.err)
				}
			}
		})
	}
}

// signed builds a POST signed with key/sec for reg/svc at when, then
// applies tamper to it.
func signed(base string, body []byte, tamper func(*http.Request), key, sec, reg, svc string, when time.Time) func(t *testing.T) *http.Request {
	return func(t *testing.T) *http.Request {
		r, _ := http.NewRequest("POST", base+"/api/v3/x?limit=5", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-Extra", "v")
		sign(t, r, body, key, sec, reg, svc, when)
		tamper(r)
		return r
	}
}

func TestNewVerifierRefusesBadCredentials(t *testing.T) {
	for _, creds := range [][]Credential{
		{{AccessKey: "", Secret: "s"}},
		{{AccessKey: "k", Secret: ""}},
		{{AccessKey: "k", Secret: "s"}, {AccessKey: "k", Secret: "t"}},
	} {
		if _, err := NewVerifier(creds, region, service, nil); err == nil {
			t.Errorf("NewVerifier(%+v) accepted", creds)
		}
	}
}
