package stack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
)

// TestSignedCaller: only GET and HEAD /health pass unsigned; a signed
// request reaches the handler with the key's normalised principal as its
// caller; a refusal is a 403 JSON body that reaches no handler.
func TestSignedCaller(t *testing.T) {
	creds, _, err := checkPrincipals([]sigv4.Credential{
		{AccessKey: "AKALICE", Secret: "s1", Principal: "arn:aws:iam::000000000000:role/teams/alice"},
		{AccessKey: "AKBOB", Secret: "s2", Principal: "arn:aws:iam::000000000000:user/bob"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newVerifier(creds, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	var reached []string
	h := signedCaller(v, slog.New(slog.NewTextHandler(io.Discard, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Method+" "+r.URL.Path+" by "+caller.From(r.Context()))
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	send := func(method, path, key, secret string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(nil))
		if key != "" {
			sum := sha256.Sum256(nil)
			if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}, req,
				hex.EncodeToString(sum[:]), "execute-api", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		method, path, key, secret string
		status                    int
		reached                   string
	}{
		{"GET", "/health", "", "", 200, "GET /health by "},
		{"HEAD", "/health", "", "", 200, "HEAD /health by "},
		{"POST", "/health", "", "", 403, ""},
		{"GET", "/health/x", "", "", 403, ""},
		{"GET", "/api/v3/workflows", "", "", 403, ""},
		{"GET", "/api/v3/workflows", "AKALICE", "s2", 403, ""},
		{"GET", "/api/v3/workflows", "AKALICE", "s1", 200, "GET /api/v3/workflows by arn:aws:iam::000000000000:role/alice"},
		{"GET", "/api/v3/workflows", "AKBOB", "s2", 200, "GET /api/v3/workflows by arn:aws:iam::000000000000:user/bob"},
	} {
		reached = nil
		code, body := send(tc.method, tc.path, tc.key, tc.secret)
		if code != tc.status {
			t.Errorf("%s %s by %q: HTTP %d %s, want %d", tc.method, tc.path, tc.key, code, body, tc.status)
		}
		if tc.status == 403 {
			var e struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Status != 403 || !strings.HasPrefix(e.Message, "signature refused: ") {
				t.Errorf("%s %s by %q: refusal %q, want a JSON body naming why", tc.method, tc.path, tc.key, body)
			}
			if len(reached) != 0 {
				t.Errorf("%s %s by %q: a refused request reached the handler: %v", tc.method, tc.path, tc.key, reached)
			}
			continue
		}
		if len(reached) != 1 || reached[0] != tc.reached {
			t.Errorf("%s %s by %q: the handler saw %v, want %q", tc.method, tc.path, tc.key, reached, tc.reached)
		}
	}
}

func TestCheckPrincipalsRefuses(t *testing.T) {
	if _, _, err := checkPrincipals([]sigv4.Credential{{AccessKey: "k", Secret: "s", Principal: "alice"}}, nil); err == nil || !strings.Contains(err.Error(), `credential "k"`) {
		t.Errorf("a credential of no principal: %v", err)
	}
	if _, _, err := checkPrincipals(nil, []string{"arn:aws:iam::000000000000:group/admins"}); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Errorf("an admin that is a group: %v", err)
	}
	_, admins, err := checkPrincipals(nil, []string{"arn:aws:sts::000000000000:assumed-role/admin/s"})
	if err != nil || len(admins) != 1 || admins[0] != "arn:aws:iam::000000000000:role/admin" {
		t.Errorf("admins %v, %v; want the role normalised", admins, err)
	}
}
