package localstack

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Lambda functions in the local stack.
//
// No emulator here runs Lambda functions (moto would need Docker). The
// local stack stands in for what AWS Lambda itself does: it serves
// Lambda's Invoke API (POST /2015-03-31/functions/{name}/invocations) on a
// loopback port and runs each function's code as a LocalFunction. The
// Lambda step's runner calls it through the unchanged AWS SDK client, with
// the local stack's Lambda endpoint (AWS_ENDPOINT_URL_LAMBDA, when set,
// still wins).

// A LocalFunction is a Lambda function's code: it takes the invocation's
// payload and returns the function's result; an error is a function error
// (Lambda's "Unhandled").
type LocalFunction interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// FunctionFunc adapts a Go function to LocalFunction.
type FunctionFunc func(ctx context.Context, payload []byte) ([]byte, error)

// Invoke calls f.
func (f FunctionFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return f(ctx, payload)
}

// CommandFunction runs a command per invocation: the payload on its
// standard input, its standard output the result. A non-zero exit is a
// function error whose message is the end of its standard error.
type CommandFunction struct {
	// Argv is the program and its arguments.
	Argv []string
	// Timeout bounds one invocation (default 15 minutes, Lambda's limit).
	Timeout time.Duration
}

// maxFunctionOutput caps what a command may print: Lambda's 6 MB response
// limit.
const maxFunctionOutput = 6 << 20

// Invoke runs the command.
func (c CommandFunction) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("no command")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = maxFunctionOutput, 64<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, errors.New(msg)
	}
	if stdout.over {
		return nil, fmt.Errorf("the function's result is larger than %d bytes", maxFunctionOutput)
	}
	return stdout.Bytes(), nil
}

type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// ParseFunctionSpec reads a "name=command args..." flag value into a
// function name and a CommandFunction (the command split on spaces).
func ParseFunctionSpec(spec string) (string, CommandFunction, error) {
	name, command, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	argv := strings.Fields(command)
	if !ok || name == "" || len(argv) == 0 {
		return "", CommandFunction{}, fmt.Errorf("function %q: want name=command [args...]", spec)
	}
	return name, CommandFunction{Argv: argv}, nil
}

// FunctionServer serves Lambda's Invoke API for local functions.
type FunctionServer struct {
	// URL is the server's base URL, the Lambda endpoint.
	URL string

	funcs  map[string]LocalFunction
	log    *slog.Logger
	server *http.Server
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	calls []FunctionCall
}

// FunctionCall records one invocation (tests read them).
type FunctionCall struct {
	Function       string
	InvocationType string
	Payload        []byte
}

// StartFunctionServer serves funcs (by function name) on a loopback port.
func StartFunctionServer(funcs map[string]LocalFunction, log *slog.Logger) (*FunctionServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("local functions: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &FunctionServer{URL: "http://" + ln.Addr().String(), funcs: funcs, log: log, ctx: ctx, cancel: cancel}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", s.invoke)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.server = &http.Server{Handler: onlyLocalClients(mux, ln.Addr().String(), "localhost:"+port), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.server.Serve(ln) }()
	return s, nil
}

// onlyLocalClients refuses, with Lambda's 403 AccessDeniedException, a
// request that does not come from a Lambda client on this machine: one
// whose Host is not one of hosts (the server's address) — a DNS name a web
// page rebound to loopback — or that carries an Origin header, which
// browsers send and SDKs do not. The functions run the developer's
// commands, and a page of any site open in their browser could otherwise
// find the port and invoke them.
func onlyLocalClients(next http.Handler, hosts ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(hosts, strings.ToLower(r.Host)) {
			lambdaError(w, http.StatusForbidden, "AccessDeniedException", "Host: must be "+strings.Join(hosts, " or "))
			return
		}
		if _, ok := r.Header["Origin"]; ok {
			lambdaError(w, http.StatusForbidden, "AccessDeniedException", "Origin: requests from web pages are refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Calls returns the invocations so far.
func (s *FunctionServer) Calls() []FunctionCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FunctionCall(nil), s.calls...)
}

// Close stops the server and waits for asynchronous invocations.
func (s *FunctionServer) Close() error {
	s.cancel()
	err := s.server.Close()
	s.wg.Wait()
	return err
}

// functionName reads a FunctionName path value: a name, a partial ARN
// (account:function:name) or a full ARN, with an optional qualifier.
func functionName(v string) string {
	parts := strings.Split(v, ":")
	switch {
	case len(parts) >= 7 && parts[0] == "arn":
		return parts[6]
	case len(parts) >= 3 && parts[1] == "function":
		return parts[2]
	}
	return parts[0]
}

// maxPayload is Lambda's request payload limit for synchronous invocation.
const maxPayload = 6 << 20

func (s *FunctionServer) invoke(w http.ResponseWriter, r *http.Request) {
	name := functionName(r.PathValue("name"))
	f, ok := s.funcs[name]
	if !ok {
		lambdaError(w, http.StatusNotFound, "ResourceNotFoundException",
			fmt.Sprintf("Function not found: arn:aws:lambda:%s:%s:function:%s", DefaultRegion, "000000000000", name))
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil || len(payload) > maxPayload {
		lambdaError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
		return
	}
	if len(payload) > 0 && !json.Valid(payload) {
		lambdaError(w, http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json")
		return
	}
	kind := r.Header.Get("X-Amz-Invocation-Type")
	if kind == "" {
		kind = "RequestResponse"
	}
	s.mu.Lock()
	s.calls = append(s.calls, FunctionCall{Function: name, InvocationType: kind, Payload: payload})
	s.mu.Unlock()
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	switch kind {
	case "Event":
		// Lambda queues the event and runs it later; its result goes
		// nowhere (a failure is only logged: Lambda's own retries of
		// asynchronous invocations are not emulated).
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if _, err := f.Invoke(s.ctx, payload); err != nil {
				s.log.Warn("local function failed (asynchronous invocation)", "function", name, "error", err)
			}
		}()
		w.WriteHeader(http.StatusAccepted)
	case "RequestResponse":
		began := time.Now()
		out, err := f.Invoke(r.Context(), payload)
		if r.Header.Get("X-Amz-Log-Type") == "Tail" {
			w.Header().Set("X-Amz-Log-Result", tailReport(time.Since(began)))
		}
		if err != nil {
			body, _ := json.Marshal(map[string]string{"errorType": "Error", "errorMessage": err.Error()})
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body)
			return
		}
		if len(bytes.TrimSpace(out)) > 0 && !json.Valid(out) {
			// Lambda returns what the runtime serialised; a command that
			// prints text is wrapped as a JSON string.
			out, _ = json.Marshal(string(out))
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
	default:
		lambdaError(w, http.StatusBadRequest, "InvalidParameterValueException", "Unsupported invocation type "+kind)
	}
}

// LocalFunctionMemoryMB is the memory a local function reports it ran
// with: Lambda's default.
const LocalFunctionMemoryMB = 128

// tailReport is the log tail Lambda returns with a synchronous invocation
// that asks for it (LogType Tail): base64 of the log's end, here only the
// REPORT line Lambda writes, with the invocation's duration billed as
// Lambda bills it (rounded up to the millisecond).
func tailReport(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	line := fmt.Sprintf("REPORT RequestId: local\tDuration: %.2f ms\tBilled Duration: %d ms\tMemory Size: %d MB\tMax Memory Used: %d MB\t\n",
		ms, int64(math.Ceil(ms)), LocalFunctionMemoryMB, LocalFunctionMemoryMB)
	return base64.StdEncoding.EncodeToString([]byte(line))
}

func lambdaError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Amzn-ErrorType", code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]string{"Type": "User", "message": msg})
	_, _ = w.Write(body)
}

// WithServiceEndpoint makes clients built from cfg for service sdkID (e.g.
// "Lambda") use url, unless an earlier configuration source (such as
// AWS_ENDPOINT_URL_<SERVICE>) names another.
func WithServiceEndpoint(cfg *aws.Config, sdkID, url string) {
	cfg.ConfigSources = append(cfg.ConfigSources, serviceEndpoints{sdkID: url})
}
