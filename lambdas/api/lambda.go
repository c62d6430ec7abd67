package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/principal"
)

// LambdaHandler adapts h to API Gateway REST API (v1) proxy integration
// events, for lambda.Start. Each event becomes an *http.Request:
//
//   - the method is httpMethod, and the path is the event's path (the
//     resource path as the client sent it, without the stage);
//   - the query comes from multiValueQueryStringParameters, or from
//     queryStringParameters when the former is empty; API Gateway hands
//     over decoded values, which are encoded again here;
//   - the headers come from multiValueHeaders plus any name only in
//     headers; the Host header (else requestContext.domainName) is the
//     request's Host, and requestContext.requestId becomes X-Request-Id
//     when the client sent none, to tie log lines to API Gateway's;
//   - a body with isBase64Encoded is decoded;
//   - the caller API Gateway authenticated (requestContext.identity: the
//     IAM userArn normalised by package principal, else caller, else
//     accountId) goes into the request's context (package caller), so what
//     the request writes records it (WithIdentity).
//
// h answers into memory. The response carries every header in
// multiValueHeaders and the first value of each in headers; a body that
// is not valid UTF-8 is base64-encoded with isBase64Encoded set. An event
// that cannot be turned into a request (an invalid method or base64 body)
// is answered with a JSON 400 (carrying requestContext.requestId as
// X-Request-Id). The returned error is always nil: every
// outcome is an HTTP answer. A panic in h is not recovered here (the
// handler of NewHandler recovers its own).
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		req, err := eventRequest(ctx, ev)
		if err != nil {
			buf := newResponseBuffer()
			if id := ev.RequestContext.RequestID; wellFormedRequestID(id) {
				buf.Header().Set(RequestIDHeader, id)
			}
			writeRaw(buf, http.StatusBadRequest,
				encodeError(http.StatusBadRequest, "invalid request: "+err.Error(), nil))
			return buf.response(http.MethodGet), nil
		}
		buf := newResponseBuffer()
		h.ServeHTTP(buf, req)
		return buf.response(req.Method), nil
	}
}

// eventRequest builds the *http.Request an API Gateway event stands for.
func eventRequest(ctx context.Context, ev events.APIGatewayProxyRequest) (*http.Request, error) {
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, fmt.Errorf("decode base64 body: %w", err)
		}
		body = decoded
	}
	method := ev.HTTPMethod
	if method == "" {
		method = ev.RequestContext.HTTPMethod
	}
	if method == "" {
		return nil, errors.New("event has no httpMethod")
	}
	ctx = WithIdentity(ctx, ev.RequestContext.Identity)
	req, err := http.NewRequestWithContext(ctx, method, "/", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}

	path := ev.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req.URL = &url.URL{Path: path, RawQuery: eventQuery(ev)}
	req.RequestURI = req.URL.RequestURI()

	req.Header = eventHeaders(ev)
	req.Host = req.Header.Get("Host")
	if req.Host == "" {
		req.Host = ev.RequestContext.DomainName
	}
	if req.Header.Get(RequestIDHeader) == "" && ev.RequestContext.RequestID != "" {
		req.Header.Set(RequestIDHeader, ev.RequestContext.RequestID)
	}
	req.RemoteAddr = ev.RequestContext.Identity.SourceIP
	return req, nil
}

// WithIdentity returns ctx naming as its caller (package caller) the
// principal of an identity API Gateway authenticated, so that what the
// request writes records it. The local stack passes the identity of a
// request whose signature it verified through here too.
func WithIdentity(ctx context.Context, id events.APIGatewayRequestIdentity) context.Context {
	if p := identityPrincipal(id); p != "" {
		return caller.With(ctx, p)
	}
	return ctx
}

// identityPrincipal names the caller of an IAM-authorized request: its user
// ARN normalised (package principal: an assumed role's session becomes the
// role), or as given when it is no principal ARN the normaliser knows; else
// the caller id, else the account. No credential (access key) is ever
// recorded.
func identityPrincipal(id events.APIGatewayRequestIdentity) string {
	switch {
	case id.UserArn != "":
		if p, err := principal.Normalize(id.UserArn); err == nil {
			return p
		}
		return id.UserArn
	case id.Caller != "":
		return id.Caller
	case id.AccountID != "":
		return "account:" + id.AccountID
	}
	return ""
}

// eventQuery encodes an event's query parameters.
func eventQuery(ev events.APIGatewayProxyRequest) string {
	q := url.Values{}
	if len(ev.MultiValueQueryStringParameters) > 0 {
		for k, vs := range ev.MultiValueQueryStringParameters {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
	} else {
		for k, v := range ev.QueryStringParameters {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// eventHeaders merges an event's multi-value and single-value headers.
func eventHeaders(ev events.APIGatewayProxyRequest) http.Header {
	h := make(http.Header, len(ev.MultiValueHeaders)+len(ev.Headers))
	for k, vs := range ev.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range ev.Headers {
		if _, ok := h[http.CanonicalHeaderKey(k)]; !ok {
			h.Set(k, v)
		}
	}
	return h
}

// responseBuffer is an in-memory http.ResponseWriter.
type responseBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newResponseBuffer() *responseBuffer {
	return &responseBuffer{header: http.Header{}}
}

// Header returns the response headers.
func (b *responseBuffer) Header() http.Header { return b.header }

// WriteHeader records the first final status; informational (1xx)
// statuses are not forwarded by API Gateway and are dropped.
func (b *responseBuffer) WriteHeader(code int) {
	if b.status != 0 || (code >= 100 && code < 200) {
		return
	}
	b.status = code
}

// Write appends to the body, answering 200 if no status was set.
func (b *responseBuffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.WriteHeader(http.StatusOK)
	}
	return b.body.Write(p)
}

// response renders the recorded answer as an API Gateway response. A
// HEAD request gets no body, as net/http's server would send none.
func (b *responseBuffer) response(method string) events.APIGatewayProxyResponse {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	body := b.body.Bytes()
	if method == http.MethodHead {
		body = nil
	}
	if len(body) > 0 && b.header.Get("Content-Type") == "" {
		b.header.Set("Content-Type", http.DetectContentType(body))
	}
	resp := events.APIGatewayProxyResponse{
		StatusCode:        status,
		Headers:           make(map[string]string, len(b.header)),
		MultiValueHeaders: make(map[string][]string, len(b.header)),
	}
	for k, vs := range b.header {
		if len(vs) == 0 {
			continue
		}
		resp.Headers[k] = vs[0]
		resp.MultiValueHeaders[k] = append([]string(nil), vs...)
	}
	if utf8.Valid(body) {
		resp.Body = string(body)
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(body)
		resp.IsBase64Encoded = true
	}
	return resp
}
