// Package localstack runs Maestro's AWS side on one machine.
//
// It finds or starts an AWS emulator (LocalStack when it runs, else a
// moto_server child process), provisions the resources of a
// resources.Spec in it, and plays the part of Lambda's event source
// mappings and of EventBridge Scheduler: pumps poll the table's stream and
// the queues and call the same handler functions that run in Lambda, and a
// schedule pump fires due schedules against an injectable clock.
package localstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Kind names the sort of emulator behind an endpoint.
type Kind string

// The kinds of emulator Discover finds.
const (
	// KindCustom is an endpoint given by AWS_ENDPOINT_URL.
	KindCustom Kind = "custom"
	// KindLocalStack is a LocalStack instance answering on its edge port.
	KindLocalStack Kind = "localstack"
	// KindMoto is a moto_server child process started by Discover.
	KindMoto Kind = "moto"
)

// Defaults of DiscoverOptions and Emulator.
const (
	// DefaultLocalStackURL is LocalStack's edge endpoint.
	DefaultLocalStackURL = "http://127.0.0.1:4566"
	// DefaultRegion is the region used when AWS_REGION is not set.
	DefaultRegion = "us-east-1"
	// DefaultStartTimeout bounds the wait for a started moto_server (and
	// DynamoDB Local) to answer. Each takes about 3 s on an idle machine,
	// but more than 20 s on two cores shared with a test suite's load.
	DefaultStartTimeout = 2 * time.Minute
	// DummyAccessKey is the access key id (and secret) emulators accept.
	DummyAccessKey = "test"
)

// ErrNoEmulator is returned by Discover when no emulator can be found or started.
var ErrNoEmulator = errors.New("no AWS emulator: set AWS_ENDPOINT_URL, run LocalStack (localstack/docker-compose.yml) or install moto (moto_server)")

// DiscoverOptions tunes Discover. The zero value is ready to use.
type DiscoverOptions struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// LocalStackURL is where LocalStack is probed; empty means DefaultLocalStackURL.
	LocalStackURL string
	// MotoServer is the moto_server program to start; empty means
	// "moto_server" looked up on PATH.
	MotoServer string
	// StartTimeout bounds the wait for a started moto_server to answer;
	// zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// LogDir receives moto_server's log file; empty means os.TempDir().
	LogDir string
	// HTTPClient probes endpoints; nil means a client with a 1 s timeout.
	HTTPClient *http.Client
	// Logger reports what Discover found; nil discards.
	Logger *slog.Logger
}

// Emulator is an AWS endpoint that speaks the services' wire protocols.
type Emulator struct {
	// Endpoint is the base URL every service client uses.
	Endpoint string `json:"endpoint"`
	// Kind is the sort of emulator.
	Kind Kind `json:"kind"`
	// Region is the AWS region clients sign for.
	Region string `json:"region"`
	// LogFile is moto_server's log when Discover started it, else empty;
	// Close removes it, as it does DynamoDBLogFile and the moto launcher.
	LogFile string `json:"logFile,omitempty"`
	// DynamoDBEndpoint, when set, serves DynamoDB and DynamoDB Streams in
	// place of Endpoint: the DynamoDB Local that Discover started beside
	// moto_server. DynamoDBLogFile is its log.
	DynamoDBEndpoint string `json:"dynamodbEndpoint,omitempty"`
	DynamoDBLogFile  string `json:"dynamodbLogFile,omitempty"`

	// queueClock is set when the emulator is moto started through the
	// launcher, whose route AdvanceQueueDelays calls.
	queueClock bool
	// files are what Discover wrote for the children it started (the
	// launcher script, their logs); Close removes them.
	files []string

	proc      *childProcess
	ddbProc   *childProcess
	closeOnce sync.Once
	closeErr  error
}

// Discover finds an AWS emulator, in order: the endpoint in AWS_ENDPOINT_URL;
// LocalStack answering its health check on 127.0.0.1:4566; a moto_server
// child process started on a free loopback port. Beside a started
// moto_server it runs DynamoDB Local for DynamoDB and DynamoDB Streams when
// it is installed (see EnvDynamoDBLocal) and Java is on PATH; when it is
// not installed, moto serves those too. It returns ErrNoEmulator (wrapped)
// when none of these is available. Close the Emulator to stop the started
// children.
func Discover(ctx context.Context, opts DiscoverOptions) (*Emulator, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: time.Second}
	}
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = DefaultRegion
	}

	if ep := strings.TrimRight(getenv("AWS_ENDPOINT_URL"), "/"); ep != "" {
		logger.Info("using AWS_ENDPOINT_URL", "endpoint", ep)
		return &Emulator{Endpoint: ep, Kind: KindCustom, Region: region}, nil
	}

	lsURL := strings.TrimRight(opts.LocalStackURL, "/")
	if lsURL == "" {
		lsURL = DefaultLocalStackURL
	}
	if localStackHealthy(ctx, client, lsURL) {
		logger.Info("using LocalStack", "endpoint", lsURL)
		return &Emulator{Endpoint: lsURL, Kind: KindLocalStack, Region: region}, nil
	}

	prog := opts.MotoServer
	if prog == "" {
		prog = "moto_server"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return nil, fmt.Errorf("%w (looking for %s: %v)", ErrNoEmulator, prog, err)
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	logDir := opts.LogDir
	if logDir == "" {
		logDir = os.TempDir()
	}
	argv := []string{path}
	launcher := false
	var files []string
	if opts.MotoServer == "" {
		shim, err := motoShim(ctx, logDir)
		switch {
		case err == nil:
			argv, launcher = shim, true
			files = append(files, shim[len(shim)-1])
		case errors.Is(err, errMotoVersion):
			return nil, fmt.Errorf("%w: %v", ErrNoEmulator, err)
		default:
			logger.Warn("starting moto_server without the launcher's fixes; long runs will slow down and the local clock will not move SQS message delays", "reason", err)
		}
	}
	// DynamoDB Local starts beside moto_server, not after it: each takes
	// about two seconds, mostly a JVM's or an interpreter's start.
	jar, java, ddbErr := dynamoDBLocalCommand(getenv)
	if ddbErr != nil && !errors.Is(ddbErr, errDynamoDBLocalOff) && !errors.Is(ddbErr, errDynamoDBLocalAbsent) {
		return nil, fmt.Errorf("%w: %v", ErrNoEmulator, ddbErr)
	}
	type started struct {
		endpoint, logPath string
		proc              *childProcess
		err               error
	}
	var ddb chan started
	if ddbErr == nil {
		ddb = make(chan started, 1)
		go func() {
			ep, proc, logPath, err := startDynamoDBLocal(ctx, java, jar, logDir, timeout, client)
			ddb <- started{ep, logPath, proc, err}
		}()
	}
	em, err := startMoto(ctx, argv, logDir, timeout, client)
	if err != nil {
		removeFiles(files)
		if ddb != nil {
			if d := <-ddb; d.err == nil {
				err = errors.Join(err, d.proc.stop())
			}
		}
		return nil, err
	}
	em.Region, em.queueClock, em.files = region, launcher, append(files, em.LogFile)
	logger.Info("started moto_server", "endpoint", em.Endpoint, "pid", em.proc.cmd.Process.Pid, "log", em.LogFile)
	if ddb == nil {
		logger.Info("DynamoDB on moto_server", "reason", ddbErr)
		return em, nil
	}
	d := <-ddb
	if d.err != nil {
		return nil, errors.Join(fmt.Errorf("%w: %v", ErrNoEmulator, d.err), em.Close())
	}
	em.DynamoDBEndpoint, em.DynamoDBLogFile, em.ddbProc = d.endpoint, d.logPath, d.proc
	em.files = append(em.files, d.logPath)
	pid := d.proc.cmd.Process.Pid
	logger.Info("started DynamoDB Local", "endpoint", d.endpoint, "pid", pid, "log", d.logPath)
	if err := renice(pid, dynamoDBLocalNice); err != nil {
		logger.Info("DynamoDB Local runs at the default priority", "reason", err)
	}
	return em, nil
}

// localStackHealthy reports whether LocalStack's health endpoint at base
// answers with its JSON document.
func localStackHealthy(ctx context.Context, client *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_localstack/health", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var health struct {
		Services map[string]string `json:"services"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&health); err != nil {
		return false
	}
	return health.Services != nil
}

// startMoto starts moto_server on a free loopback port and waits until it
// answers.
func startMoto(ctx context.Context, argv []string, logDir string, timeout time.Duration, client *http.Client) (*Emulator, error) {
	c := childOnPort{what: "moto_server", logPattern: "moto-server-*.log", probePath: "/moto-api/", needOK: true,
		command: func(port int) *exec.Cmd {
			args := append(append([]string{}, argv[1:]...), "-H", "127.0.0.1", "-p", strconv.Itoa(port))
			return exec.Command(argv[0], args...)
		}}
	endpoint, proc, logPath, err := c.start(ctx, logDir, timeout, client)
	if err != nil {
		return nil, err
	}
	return &Emulator{Endpoint: endpoint, Kind: KindMoto, LogFile: logPath, proc: proc}, nil
}

// childOnPort is an emulator child process that serves HTTP on a loopback
// port given on its command line.
type childOnPort struct {
	what, logPattern string
	// command returns the command that serves on port.
	command func(port int) *exec.Cmd
	// probePath is requested until the child answers it (with a 200 when
	// needOK, else with any HTTP status).
	probePath string
	needOK    bool
}

// start starts the child on a free loopback port, its output in a new log
// file in logDir, and waits until it answers. A port taken between choosing
// and binding makes the child exit; then it tries again on another port.
func (c childOnPort) start(ctx context.Context, logDir string, timeout time.Duration, client *http.Client) (endpoint string, proc *childProcess, logPath string, err error) {
	var errs []error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", nil, "", fmt.Errorf("start %s: %w", c.what, err)
		}
		logFile, err := os.CreateTemp(logDir, c.logPattern)
		if err != nil {
			return "", nil, "", fmt.Errorf("start %s: log file: %w", c.what, err)
		}
		cmd := c.command(port)
		cmd.Stdout = logFile
		cmd.Stderr = logFile
		proc, err := startChild(cmd)
		logFile.Close() // the child holds its own descriptor
		if err != nil {
			return "", nil, "", fmt.Errorf("start %s: %w", c.what, err)
		}
		endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
		pid := proc.cmd.Process.Pid
		err = waitAnswer(ctx, client, endpoint+c.probePath, timeout, proc.exited, c.what, c.needOK,
			func() bool { return listensOn(pid, port) })
		if err == nil {
			return endpoint, proc, logFile.Name(), nil
		}
		if stopErr := proc.stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		errs = append(errs, fmt.Errorf("port %d: %w (log %s)", port, err, logFile.Name()))
		if ctx.Err() != nil {
			break
		}
		select {
		case <-proc.exited:
			continue // most likely the port was taken: try another
		default:
			return "", nil, "", fmt.Errorf("start %s: %w", c.what, errors.Join(errs...))
		}
	}
	return "", nil, "", fmt.Errorf("start %s: %w", c.what, errors.Join(errs...))
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitAnswer polls url until the child named what answers it (with a 200
// when needOK, else with any HTTP status) while owns says it holds the
// port — another process that took the port between choosing and binding
// answers too, and the child then exits — or the child exits, ctx ends or
// timeout passes.
func waitAnswer(ctx context.Context, client *http.Client, url string, timeout time.Duration, exited <-chan struct{}, what string, needOK bool,
	owns func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("probe %s: %w", url, err)
		}
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK || !needOK) && owns() {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before answering", what)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %v: %w", what, timeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// Close stops the children that Discover started, if any. It is safe to
// call more than once.
func (e *Emulator) Close() error {
	e.closeOnce.Do(func() {
		var errs []error
		kept := map[string]bool{}
		for _, c := range []struct {
			p         *childProcess
			what, log string
		}{{e.ddbProc, "DynamoDB Local", e.DynamoDBLogFile}, {e.proc, "moto_server", e.LogFile}} {
			if c.p == nil {
				continue
			}
			if c.p.ended() {
				// It ended on its own while in use: what its log says is
				// the clue, so the log stays and its end is in the error.
				kept[c.log] = true
				errs = append(errs, fmt.Errorf("%s (pid %d) ended before Close (%v); its log %s ends: %s",
					c.what, c.p.cmd.Process.Pid, c.p.waitErr, c.log, logTail(c.log, 2048)))
				continue
			}
			errs = append(errs, c.p.stop())
		}
		e.closeErr = errors.Join(errs...)
		removeFiles(slices.DeleteFunc(slices.Clone(e.files), func(f string) bool { return kept[f] }))
	})
	return e.closeErr
}

// logTail returns the last n bytes of the file at path, or why it cannot.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// removeFiles removes the files an emulator's children no longer need: a
// test suite starts dozens of emulators, and their launchers and logs
// would pile up in the temporary directory. A child that fails to start
// keeps its log (its error names it).
func removeFiles(paths []string) {
	for _, p := range paths {
		if p != "" {
			_ = os.Remove(p)
		}
	}
}

// AWSConfig returns an SDK configuration for the emulator: static dummy
// credentials, the emulator's region, the emulator as the base endpoint of
// every service client and DynamoDBEndpoint, when set, as the endpoint of
// DynamoDB and DynamoDB Streams. optFns are applied after these and may
// override them (add config.WithAPIOptions for a RequestCounter, for
// example). Per-service AWS_ENDPOINT_URL_<SERVICE> variables take
// precedence over both, as the SDK defines. S3 clients should also use
// UsePathStyle.
func (e *Emulator) AWSConfig(ctx context.Context, optFns ...func(*config.LoadOptions) error) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(e.Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(DummyAccessKey, DummyAccessKey, "")),
		// Every pump, handler and test shares one endpoint; keep enough idle
		// connections to reuse them. moto's server starts a thread per new
		// connection, which dominates its cost under load otherwise.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = 512
			t.MaxIdleConnsPerHost = 512
		})),
	}
	cfg, err := config.LoadDefaultConfig(ctx, append(opts, optFns...)...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config for %s emulator at %s: %w", e.Kind, e.Endpoint, err)
	}
	// Not config.WithBaseEndpoint: the load options are the first source a
	// service client asks for its own endpoint, so that option would hide
	// every per-service setting. The emulator's endpoints come last.
	cfg.BaseEndpoint = aws.String(e.Endpoint)
	if e.DynamoDBEndpoint != "" {
		cfg.ConfigSources = append(cfg.ConfigSources, serviceEndpoints{
			"DynamoDB": e.DynamoDBEndpoint, "DynamoDB Streams": e.DynamoDBEndpoint,
		})
	}
	return cfg, nil
}

// serviceEndpoints is an SDK configuration source of per-service base
// endpoints, keyed by service SDK id: each service client asks its
// configuration sources for its own endpoint before using BaseEndpoint.
type serviceEndpoints map[string]string

// GetServiceBaseEndpoint implements the SDK's service endpoint provider.
func (s serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	ep, ok := s[sdkID]
	return ep, ok, nil
}

// UsePathStyle is an s3.Options function that addresses buckets in the path
// (http://host/bucket/key) as emulators need, rather than in the host name:
//
//	s3.NewFromConfig(cfg, localstack.UsePathStyle)
func UsePathStyle(o *s3.Options) { o.UsePathStyle = true }
