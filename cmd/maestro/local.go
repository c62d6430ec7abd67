package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/principal"
)

// runLocal runs the whole system in the foreground until interrupted.
func runLocal(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, ok := localOptions(args, stderr)
	if !ok {
		return exitUsage
	}
	st, err := stack.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "maestro local: %v\n", err)
		return exitInvalid
	}
	ddb := st.Emulator.Endpoint
	if st.Emulator.DynamoDBEndpoint != "" {
		ddb = st.Emulator.DynamoDBEndpoint + " (DynamoDB Local)"
	}
	fmt.Fprintf(stdout, "maestro is running\n  API:          %s   (GET %s/health)\n  AWS endpoint: %s (%s)\n  DynamoDB:     %s\n  table:        %s\n",
		st.URL, st.URL, st.Emulator.Endpoint, st.Emulator.Kind, ddb, st.Resources.Table.Name)
	if n := len(opts.Credentials); n > 0 {
		fmt.Fprintf(stdout, "  signatures:   every request but GET /health must be SigV4-signed (execute-api, %s) with one of %d key(s)\n", st.Emulator.Region, n)
		fmt.Fprintf(stdout, "  access:       enforced: every route checks the caller's role (%d admin(s))\n", len(opts.Admins))
	}
	fmt.Fprintln(stdout, "Press Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Fprintln(stdout, "shutting down")
	if err := st.Close(); err != nil {
		fmt.Fprintf(stderr, "maestro local: shutdown: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// localOptions reads maestro local's flags into the local stack's options.
// On a usage error it reports it on stderr and returns false.
func localOptions(args []string, stderr io.Writer) (stack.Options, bool) {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("MAESTRO_ADDR", "127.0.0.1:8080"), "API listen address (env MAESTRO_ADDR); the API answers only requests whose Host names it")
	stage := fs.String("stage", "local", "stage name prefixing every resource")
	streamEvery := fs.Duration("stream-interval", 250*time.Millisecond, "DynamoDB stream poll period (Lambda polls every 250ms)")
	stateDir := fs.String("state-dir", envOr("MAESTRO_STATE_DIR", defaultStateDir()), "where the stream pump keeps its checkpoints across restarts (env MAESTRO_STATE_DIR; empty: none)")
	verbose := fs.Bool("v", false, "debug logging")
	funcs := map[string]localstack.LocalFunction{}
	fs.Func("function", "a Lambda function Lambda steps may invoke, as name=command [args...]: the command gets the payload on stdin and prints the result (repeatable)", func(v string) error {
		name, f, err := localstack.ParseFunctionSpec(v)
		if err != nil {
			return err
		}
		funcs[name] = f
		return nil
	})
	var queues, topics []string
	fs.Func("callback-queue", "an SQS queue URL Callback steps may send task tokens to (repeatable)", func(v string) error {
		queues = append(queues, v)
		return nil
	})
	fs.Func("callback-topic", "an SNS topic ARN Callback steps may send task tokens to (repeatable)", func(v string) error {
		topics = append(topics, v)
		return nil
	})
	gpuQueue := fs.String("batch-gpu-job-queue", "", "the Batch job queue (name or ARN) where Kubernetes steps that request GPUs run (default: refused)")
	emf := fs.Bool("metrics", true, "print the handlers' metrics as CloudWatch Embedded Metric Format lines with the logs")
	maestroEvents := fs.Bool("maestro-events", envOr("MAESTRO_CHANGE_EVENTS_MAESTRO", "") == "true", "also publish Maestro's *_CHANGE_EVENT messages to the events topic (env MAESTRO_CHANGE_EVENTS_MAESTRO=true)")
	ecsOn := fs.Bool("ecs", true, "provision an ECS cluster and network on the emulator for Ecs and Kubernetes steps (their tasks end through POST /local/job-events)")
	var taskDefs, ecsImages, jobQueues, jobDefs []string
	for _, f := range []struct {
		name, usage string
		dst         *[]string
	}{
		{"ecs-task-definition", "an ECS task definition family Ecs steps may name (repeatable)", &taskDefs},
		{"ecs-image", "an image Ecs and Kubernetes steps may run: registry/repository prefix or registry/repository@sha256:digest (repeatable; default: any image)", &ecsImages},
		{"batch-job-queue", "a Batch job queue (name or ARN) Batch steps may submit to (repeatable)", &jobQueues},
		{"batch-job-definition", "a Batch job definition name Batch steps may use (repeatable)", &jobDefs},
	} {
		fs.Func(f.name, f.usage, func(v string) error {
			*f.dst = append(*f.dst, v)
			return nil
		})
	}
	var creds []sigv4.Credential
	fs.Func("credential", "ACCESS_KEY:SECRET=PRINCIPAL_ARN: a key the API accepts SigV4 signatures of (service execute-api), as the IAM principal it names (repeatable). With any, every request but GET /health must be signed with one, else 403; without, the API is open", func(v string) error {
		c, err := parseCredential(v)
		if err != nil {
			return err
		}
		creds = append(creds, c)
		return nil
	})
	var admins []string
	fs.Func("admin", "ARN: a principal named administrator: manages teams, tag permits, job queues, job templates and any workflow's access (repeatable; enforced with -credential)", func(v string) error {
		p, err := principal.Normalize(v)
		if err != nil {
			return err
		}
		admins = append(admins, p)
		return nil
	})
	private := fs.Bool("private-workflows", false, "new workflows have no readers beyond their owners and operators (with -credential)")
	var prefixes map[string][]string
	fs.Func("signal-prefix", "TEAM=PREFIX: only members of TEAM (and admins) may announce signals whose name starts with PREFIX (repeatable; with -credential)", func(v string) error {
		team, prefix, ok := strings.Cut(v, "=")
		if !ok || prefix == "" {
			return fmt.Errorf("want TEAM=PREFIX, got %q", v)
		}
		if err := access.CheckTeamName(team); err != nil {
			return err
		}
		if prefixes == nil {
			prefixes = map[string][]string{}
		}
		prefixes[team] = append(prefixes[team], prefix)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return stack.Options{}, false
	}
	if fs.NArg() > 0 {
		// Parsing stops at the first argument that is not a flag, so
		// "-function etl=python3 etl.py -function ..." would drop every
		// flag after "etl.py" without a word.
		fmt.Fprintf(stderr, "maestro local: unexpected argument %q: quote a function's command line (-function 'name=command args')\n", fs.Arg(0))
		return stack.Options{}, false
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts := stack.Options{Addr: *addr, Stage: *stage, StreamInterval: *streamEvery, StateDir: *stateDir, Logger: log,
		Functions: funcs, CallbackQueues: queues, CallbackTopics: topics,
		ECS: *ecsOn, ECSTaskDefinitions: taskDefs, ECSImages: ecsImages, BatchJobQueues: jobQueues, BatchJobDefinitions: jobDefs,
		MaestroEvents: *maestroEvents, BatchGPUJobQueue: *gpuQueue, Credentials: creds, Admins: admins,
		PrivateWorkflows: *private, SignalPrefixes: prefixes}
	if *emf {
		opts.Metrics = stderr
	}
	return opts, true
}

// parseCredential reads ACCESS_KEY:SECRET=PRINCIPAL_ARN. The secret may
// hold = and :; the principal is what follows its last "=arn:".
func parseCredential(v string) (sigv4.Credential, error) {
	const usage = "want ACCESS_KEY:SECRET=PRINCIPAL_ARN"
	key, rest, ok := strings.Cut(v, ":")
	i := strings.LastIndex(rest, "=arn:")
	if !ok || key == "" || i <= 0 {
		return sigv4.Credential{}, errors.New(usage)
	}
	p, err := principal.Normalize(rest[i+1:])
	if err != nil {
		return sigv4.Credential{}, fmt.Errorf("access key %q: %w", key, err)
	}
	return sigv4.Credential{AccessKey: key, Secret: rest[:i], Principal: p}, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// defaultStateDir is the user's cache directory's maestro folder, or "" when
// there is none.
func defaultStateDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "maestro")
}
