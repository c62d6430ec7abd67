package stack

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/lambdas/api"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/principal"
)

// signingService is the service name API Gateway's IAM authorization wants
// signatures made for.
const signingService = "execute-api"

// checkPrincipals validates the principals of creds and the admins, and
// normalises them (package principal).
func checkPrincipals(creds []sigv4.Credential, admins []string) ([]sigv4.Credential, []string, error) {
	out := make([]sigv4.Credential, len(creds))
	for i, c := range creds {
		p, err := principal.Normalize(c.Principal)
		if err != nil {
			return nil, nil, fmt.Errorf("credential %q: %w", c.AccessKey, err)
		}
		c.Principal = p
		out[i] = c
	}
	norm := make([]string, len(admins))
	for i, a := range admins {
		p, err := principal.Normalize(a)
		if err != nil {
			return nil, nil, fmt.Errorf("admin: %w", err)
		}
		norm[i] = p
	}
	return out, norm, nil
}

// signedCaller lets through only requests signed with one of v's
// credentials (GET and HEAD /health stay open), and hands the handler the
// verified principal as API Gateway hands over the caller it authenticated
// (api.WithIdentity). A refusal is a 403 JSON body naming why.
func signedCaller(v *sigv4.Verifier, log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		cred, err := v.Verify(r)
		if err != nil {
			log.Warn("request refused", "method", r.Method, "path", r.URL.Path, "error", err)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, "{\"status\":403,\"message\":%q,\"errors\":[]}\n", jsonSafe(err.Error()))
			return
		}
		id := events.APIGatewayRequestIdentity{UserArn: sessionARN(cred), AccessKey: cred.AccessKey, SourceIP: r.RemoteAddr}
		if a, err := principal.ParseARN(cred.Principal); err == nil {
			id.AccountID = a.Account
		}
		h.ServeHTTP(w, r.WithContext(api.WithIdentity(r.Context(), id)))
	})
}

// sessionARN is the userArn API Gateway would report for a caller holding
// cred: for a role, a session of it named after the access key (a caller
// of a role always holds a session's credentials); else the principal.
func sessionARN(cred sigv4.Credential) string {
	a, err := principal.ParseARN(cred.Principal)
	if err != nil || !strings.HasPrefix(a.Resource, "role/") {
		return cred.Principal
	}
	name := a.Resource[strings.LastIndex(a.Resource, "/")+1:]
	return principal.ARN{Partition: a.Partition, Service: "sts", Account: a.Account,
		Resource: "assumed-role/" + name + "/" + cred.AccessKey}.String()
}

// jsonSafe keeps s printable ASCII so that %q renders a valid JSON string.
func jsonSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// newVerifier is the stack's verifier of its credentials, nil when it has
// none (the API stays open).
func newVerifier(creds []sigv4.Credential, region string) (*sigv4.Verifier, error) {
	if len(creds) == 0 {
		return nil, nil
	}
	return sigv4.NewVerifier(creds, region, signingService, time.Now)
}
