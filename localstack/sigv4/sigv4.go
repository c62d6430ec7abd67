// Package sigv4 verifies AWS Signature Version 4 signatures of HTTP requests
// the way API Gateway's IAM authorization does, for the local stack: the
// Authorization header form only (presigned, query-string requests are
// refused), with keys the local stack was given instead of IAM's.
//
// What is checked: the Authorization header's algorithm
// (AWS4-HMAC-SHA256), credential (a known access key, and a scope whose
// date is the request's X-Amz-Date day, whose region and service are the
// verifier's, ending in aws4_request), signed headers (host and x-amz-date
// at least, every one present), X-Amz-Date within MaxSkew of now, the
// payload (its SHA-256, which X-Amz-Content-Sha256 must equal when sent),
// and the signature over the canonical request built as AWS's signers
// build it, compared in constant time.
package sigv4

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	algorithm = "AWS4-HMAC-SHA256"
	// MaxSkew is how far a request's X-Amz-Date may be from the verifier's
	// clock, as AWS allows.
	MaxSkew = 5 * time.Minute
	// MaxBody is the largest body verified (API Gateway's payload limit).
	MaxBody       = 10 << 20
	amzDateLayout = "20060102T150405Z"
)

// Credential is an access key, its secret and the principal ARN it
// authenticates.
type Credential struct {
	AccessKey, Secret, Principal string
}

// Verifier checks requests' signatures against its credentials.
type Verifier struct {
	creds   map[string]Credential
	region  string
	service string
	now     func() time.Time
}

// NewVerifier returns a verifier of signatures made for service in region
// with one of creds; now is its clock (time.Now when nil). Access keys must
// be distinct and non-empty, secrets non-empty.
func NewVerifier(creds []Credential, region, service string, now func() time.Time) (*Verifier, error) {
	if now == nil {
		now = time.Now
	}
	v := &Verifier{creds: make(map[string]Credential, len(creds)), region: region, service: service, now: now}
	for _, c := range creds {
		if c.AccessKey == "" || c.Secret == "" {
			return nil, errors.New("a credential needs an access key and a secret")
		}
		if _, dup := v.creds[c.AccessKey]; dup {
			return nil, fmt.Errorf("access key %q given twice", c.AccessKey)
		}
		v.creds[c.AccessKey] = c
	}
	return v, nil
}

// Error is a refusal: Reason says why, never naming a secret.
type Error struct{ Reason string }

func (e *Error) Error() string { return "signature refused: " + e.Reason }

func refuse(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// Verify checks r's signature and returns the credential that made it. It
// reads r's body (up to MaxBody) and puts it back for the next handler.
// A refusal is an *Error.
func (v *Verifier) Verify(r *http.Request) (Credential, error) {
	if q := r.URL.Query(); q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") {
		return Credential{}, refuse("presigned (query-string) requests are not supported; sign the Authorization header")
	}
	auths := r.Header.Values("Authorization")
	if len(auths) == 0 {
		return Credential{}, refuse("the request is not signed (no Authorization header); sign it with SigV4 for %s", v.service)
	}
	if len(auths) > 1 {
		return Credential{}, refuse("more than one Authorization header")
	}
	a, err := parseAuthorization(auths[0])
	if err != nil {
		return Credential{}, err
	}
	cred, ok := v.creds[a.accessKey]
	if !ok {
		return Credential{}, refuse("unknown access key %q", a.accessKey)
	}
	if a.region != v.region || a.service != v.service || a.terminal != "aws4_request" {
		return Credential{}, refuse("credential scope %s/%s/%s/%s: want DATE/%s/%s/aws4_request", a.date, a.region, a.service, a.terminal, v.region, v.service)
	}
	if !slices.Contains(a.signedHeaders, "host") || !slices.Contains(a.signedHeaders, "x-amz-date") {
		return Credential{}, refuse("signed headers %s: host and x-amz-date must be signed", strings.Join(a.signedHeaders, ";"))
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse(amzDateLayout, amzDate)
	if err != nil {
		return Credential{}, refuse("X-Amz-Date %q: want YYYYMMDDTHHMMSSZ", amzDate)
	}
	if at.Format("20060102") != a.date {
		return Credential{}, refuse("credential scope date %s is not the X-Amz-Date day %s", a.date, at.Format("20060102"))
	}
	if skew := v.now().Sub(at); skew > MaxSkew || skew < -MaxSkew {
		return Credential{}, refuse("X-Amz-Date %s is more than %s from the server's time %s", amzDate, MaxSkew, v.now().UTC().Format(amzDateLayout))
	}
	body, err := readBody(r)
	if err != nil {
		return Credential{}, err
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payloadHash {
		return Credential{}, refuse("X-Amz-Content-Sha256 is not the SHA-256 of the body (unsigned payloads are not accepted)")
	}
	canonical, err := canonicalRequest(r, a.signedHeaders, payloadHash)
	if err != nil {
		return Credential{}, err
	}
	crSum := sha256.Sum256([]byte(canonical))
	scope := a.date + "/" + a.region + "/" + a.service + "/aws4_request"
	toSign := algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(crSum[:])
	key := hmacSHA256([]byte("AWS4"+cred.Secret), a.date)
	for _, part := range []string{a.region, a.service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if subtle.ConstantTimeCompare([]byte(want), []byte(a.signature)) != 1 {
		return Credential{}, refuse("the signature does not match the request (check the secret, and that nothing changed the request after signing)")
	}
	return cred, nil
}

// authorization is a parsed Authorization header.
type authorization struct {
	accessKey, date, region, service, terminal string
	signedHeaders                              []string
	signature                                  string
}

func parseAuthorization(h string) (authorization, error) {
	alg, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if alg != algorithm {
		return authorization{}, refuse("Authorization algorithm %q: want %s", alg, algorithm)
	}
	var a authorization
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return authorization{}, refuse("Authorization field %q: want NAME=VALUE", f)
		}
		if _, dup := fields[k]; dup {
			return authorization{}, refuse("Authorization field %s given twice", k)
		}
		fields[k] = val
	}
	cred, sh, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if cred == "" || sh == "" || sig == "" || len(fields) != 3 {
		return authorization{}, refuse("Authorization header: want exactly Credential, SignedHeaders and Signature")
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 {
		return authorization{}, refuse("Authorization Credential: want ACCESS_KEY/DATE/REGION/SERVICE/aws4_request")
	}
	a.accessKey, a.date, a.region, a.service, a.terminal = parts[0], parts[1], parts[2], parts[3], parts[4]
	a.signedHeaders = strings.Split(sh, ";")
	if !slices.IsSorted(a.signedHeaders) || slices.Contains(a.signedHeaders, "") {
		return authorization{}, refuse("SignedHeaders %q: want lower-case names, sorted, separated by ;", sh)
	}
	for _, name := range a.signedHeaders {
		if name != strings.ToLower(name) {
			return authorization{}, refuse("SignedHeaders %q: want lower-case names, sorted, separated by ;", sh)
		}
	}
	a.signature = sig
	return a, nil
}

// readBody reads r's body, at most MaxBody bytes, and puts it back.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, refuse("read the body: %v", err)
	}
	if len(body) > MaxBody {
		return nil, refuse("the body is over %d bytes", MaxBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// canonicalRequest builds the canonical request of r over signedHeaders, as
// AWS's signers do for services other than S3: the path URI-encoded once
// more, the query's encoded pairs sorted, each signed header's values
// trimmed, inner runs of spaces made one, and joined with commas.
func canonicalRequest(r *http.Request, signedHeaders []string, payloadHash string) (string, error) {
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(escapePath(path))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.Query()))
	b.WriteByte('\n')
	for _, name := range signedHeaders {
		var values []string
		switch name {
		case "host":
			values = []string{hostHeader(r)}
		case "content-length":
			values = r.Header.Values("Content-Length")
			if len(values) == 0 && r.ContentLength > 0 {
				values = []string{strconv.FormatInt(r.ContentLength, 10)}
			}
		default:
			values = r.Header.Values(name)
		}
		if len(values) == 0 {
			return "", refuse("signed header %s is not in the request", name)
		}
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(stripExcessSpaces(v)))
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String(), nil
}

// hostHeader is r's Host without a default port (80 for http, 443 for
// https), as signers sign it.
func hostHeader(r *http.Request) string {
	host := r.Host
	if h, port, ok := strings.Cut(host, ":"); ok && !strings.Contains(port, "]") && !strings.Contains(port, ":") {
		if (r.TLS == nil && port == "80") || (r.TLS != nil && port == "443") {
			return h
		}
	}
	return host
}

// escapePath percent-encodes every byte of p but the unreserved ones and /.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if unreserved(c) || c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// canonicalQuery encodes each name and value (space as %20), then sorts
// the pairs by name and value.
func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		ek := encodeQuery(k)
		for _, v := range vs {
			pairs = append(pairs, ek+"="+encodeQuery(v))
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		ki, vi, _ := strings.Cut(pairs[i], "=")
		kj, vj, _ := strings.Cut(pairs[j], "=")
		if ki != kj {
			return ki < kj
		}
		return vi < vj
	})
	return strings.Join(pairs, "&")
}

func encodeQuery(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

// stripExcessSpaces trims spaces at both ends and makes inner runs of
// spaces one space.
func stripExcessSpaces(s string) string {
	s = strings.Trim(s, " ")
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	prevSpace := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if prevSpace {
				continue
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
