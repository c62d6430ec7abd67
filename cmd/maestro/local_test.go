package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestLocalOptions: maestro local's flags and environment become the local
// stack's options: defaults, MAESTRO_ADDR and MAESTRO_STATE_DIR (a flag
// wins), the repeatable lists in their order, and the switches.
func TestLocalOptions(t *testing.T) {
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	defaultStateDir := filepath.Join(cacheDir, "maestro")
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, o stack.Options, stderr io.Writer)
	}{
		{name: "defaults", check: func(t *testing.T, o stack.Options, stderr io.Writer) {
			want := stack.Options{Addr: "127.0.0.1:8080", Stage: "local", StreamInterval: 250 * time.Millisecond,
				StateDir: defaultStateDir, ECS: true}
			if got := comparable(o); !equalOptions(got, want) {
				t.Errorf("options %+v, want %+v", got, want)
			}
			if o.Metrics != stderr {
				t.Error("metrics do not go to stderr by default")
			}
			if o.Logger == nil || o.Logger.Enabled(context.Background(), slog.LevelDebug) || !o.Logger.Enabled(context.Background(), slog.LevelInfo) {
				t.Error("the default logger does not log at info level")
			}
		}},
		{name: "credentials and admins", args: []string{
			"-credential", "alice:SE=CR:ET=arn:aws:iam::000000000000:role/alice",
			"-credential", "bob:B0B=arn:aws:sts::000000000000:assumed-role/bob/s",
			"-admin", "arn:aws:iam::000000000000:role/admin"},
			check: func(t *testing.T, o stack.Options, _ io.Writer) {
				want := []sigv4.Credential{
					{AccessKey: "alice", Secret: "SE=CR:ET", Principal: "arn:aws:iam::000000000000:role/alice"},
					{AccessKey: "bob", Secret: "B0B", Principal: "arn:aws:iam::000000000000:role/bob"},
				}
				if !slices.Equal(o.Credentials, want) || !slices.Equal(o.Admins, []string{"arn:aws:iam::000000000000:role/admin"}) {
					t.Errorf("credentials %+v, admins %v; want %+v and the admin", o.Credentials, o.Admins, want)
				}
			}},
		{name: "environment", env: map[string]string{"MAESTRO_ADDR": "127.0.0.1:9999", "MAESTRO_STATE_DIR": "/var/tmp/m"},
			check: func(t *testing.T, o stack.Options, _ io.Writer) {
				if o.Addr != "127.0.0.1:9999" || o.StateDir != "/var/tmp/m" {
					t.Errorf("addr %q, state dir %q: the environment was not read", o.Addr, o.StateDir)
				}
			}},
		{name: "flags over the environment", env: map[string]string{"MAESTRO_ADDR": "127.0.0.1:9999", "MAESTRO_STATE_DIR": "/var/tmp/m"},
			args: []string{"-addr", "127.0.0.1:0", "-state-dir", ""},
			check: func(t *testing.T, o stack.Options, _ io.Writer) {
				if o.Addr != "127.0.0.1:0" || o.StateDir != "" {
					t.Errorf("addr %q, state dir %q: the flags did not win", o.Addr, o.StateDir)
				}
			}},
		{name: "switches", args: []string{"-v", "-metrics=false", "-ecs=false", "-stage", "dev-2", "-stream-interval", "1s"},
			check: func(t *testing.T, o stack.Options, _ io.Writer) {
				if o.Metrics != nil || o.ECS || o.Stage != "dev-2" || o.StreamInterval != time.Second {
					t.Errorf("metrics %v, ECS %v, stage %q, stream interval %v", o.Metrics, o.ECS, o.Stage, o.StreamInterval)
				}
				if !o.Logger.Enabled(context.Background(), slog.LevelDebug) {
					t.Error("-v does not log at debug level")
				}
			}},
		{name: "repeatable lists", args: []string{
			"-callback-queue", "http://q/1", "-callback-topic", "arn:t:1", "-callback-queue", "http://q/2",
			"-ecs-task-definition", "etl", "-ecs-task-definition", "train",
			"-ecs-image", "docker.io/library/busybox", "-ecs-image", "public.ecr.aws/docker/library/python",
			"-batch-job-queue", "jq", "-batch-job-definition", "jd1", "-batch-job-definition", "jd2",
		}, check: func(t *testing.T, o stack.Options, _ io.Writer) {
			for _, c := range []struct {
				what      string
				got, want []string
			}{
				{"callback queues", o.CallbackQueues, []string{"http://q/1", "http://q/2"}},
				{"callback topics", o.CallbackTopics, []string{"arn:t:1"}},
				{"task definitions", o.ECSTaskDefinitions, []string{"etl", "train"}},
				{"images", o.ECSImages, []string{"docker.io/library/busybox", "public.ecr.aws/docker/library/python"}},
				{"job queues", o.BatchJobQueues, []string{"jq"}},
				{"job definitions", o.BatchJobDefinitions, []string{"jd1", "jd2"}},
			} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s %q, want %q", c.what, c.got, c.want)
				}
			}
		}},
		{name: "maestro events flag", args: []string{"-maestro-events"}, check: func(t *testing.T, o stack.Options, _ io.Writer) {
			if !o.MaestroEvents {
				t.Error("-maestro-events did not turn MaestroEvents on")
			}
		}},
		{name: "maestro events env", env: map[string]string{"MAESTRO_CHANGE_EVENTS_MAESTRO": "true"}, check: func(t *testing.T, o stack.Options, _ io.Writer) {
			if !o.MaestroEvents {
				t.Error("MAESTRO_CHANGE_EVENTS_MAESTRO=true did not turn MaestroEvents on")
			}
		}},
		{name: "functions", args: []string{"-function", "etl=python3 etl.py --fast", "-function", " train = ./train.sh "},
			check: func(t *testing.T, o stack.Options, _ io.Writer) {
				want := map[string][]string{"etl": {"python3", "etl.py", "--fast"}, "train": {"./train.sh"}}
				if len(o.Functions) != len(want) {
					t.Fatalf("functions %v, want %v", o.Functions, want)
				}
				for name, argv := range want {
					f, ok := o.Functions[name].(localstack.CommandFunction)
					if !ok || !slices.Equal(f.Argv, argv) {
						t.Errorf("function %s: %#v, want the command %q", name, o.Functions[name], argv)
					}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MAESTRO_ADDR", tt.env["MAESTRO_ADDR"])
			t.Setenv("MAESTRO_STATE_DIR", tt.env["MAESTRO_STATE_DIR"])
			t.Setenv("MAESTRO_CHANGE_EVENTS_MAESTRO", tt.env["MAESTRO_CHANGE_EVENTS_MAESTRO"])
			var stderr bytes.Buffer
			o, ok := localOptions(tt.args, &stderr)
			if !ok {
				t.Fatalf("usage error: %s", stderr.String())
			}
			tt.check(t, o, &stderr)
		})
	}
}

// comparable is o without its functions, logger and writers.
func comparable(o stack.Options) stack.Options {
	o.Functions, o.Logger, o.Metrics = nil, nil, nil
	return o
}

func equalOptions(a, b stack.Options) bool {
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// TestLocalUsageErrors: maestro local refuses what it cannot read with
// exit 2, starting nothing; a stage the stack refuses is exit 1, also
// before any emulator is looked for.
func TestLocalUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"unknown flag", []string{"-bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{"function without a command", []string{"-function", "etl="}, exitUsage, `function "etl=": want name=command`},
		{"function without a name", []string{"-function", "=python3"}, exitUsage, "want name=command"},
		{"function without =", []string{"-function", "python3"}, exitUsage, "want name=command"},
		{"bad duration", []string{"-stream-interval", "often"}, exitUsage, "invalid value"},
		{"bad switch", []string{"-ecs=maybe"}, exitUsage, "invalid boolean value"},
		// The shell split an unquoted command line: the rest of the flags
		// would be dropped.
		{"an argument", []string{"-function", "etl=python3", "etl.py", "-function", "train=./train.sh"}, exitUsage,
			`unexpected argument "etl.py"`},
		{"credential without a principal", []string{"-credential", "alice:SECRET"}, exitUsage, "want ACCESS_KEY:SECRET=PRINCIPAL_ARN"},
		{"credential without a secret", []string{"-credential", "alice:=arn:aws:iam::000000000000:role/alice"}, exitUsage, "want ACCESS_KEY:SECRET=PRINCIPAL_ARN"},
		{"credential of no principal", []string{"-credential", "alice:S=arn:aws:iam::000000000000:group/g"}, exitUsage, "not an IAM user, role"},
		{"admin not an ARN", []string{"-admin", "root"}, exitUsage, "not an ARN"},
		{"invalid stage", []string{"-stage", "Not_A_Stage", "-addr", "127.0.0.1:0", "-state-dir", ""}, exitInvalid, `invalid stage "Not_A_Stage"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, append([]string{"local"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
		})
	}
}

// TestLocalRunsUntilInterrupted: maestro local starts an emulator of its
// own (as make run does), serves the API at the address it prints, with the
// stage of its flags, and on Ctrl-C (its context's end) shuts down, stops
// that emulator and exits 0.
func TestLocalRunsUntilInterrupted(t *testing.T) {
	if os.Getenv("AWS_ENDPOINT_URL") != "" {
		t.Log("AWS_ENDPOINT_URL is set: maestro local uses that emulator")
	}
	stage := fmt.Sprintf("cli%08x", rand.Uint32())
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var stdout, stderr localstack.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"local", "-addr", "127.0.0.1:0", "-stage", stage, "-state-dir", "", "-metrics=false", "-ecs=false"}, &stdout, &stderr)
	}()

	running := regexp.MustCompile(`API: +(http://127\.0\.0\.1:\d+) `)
	endpoint := regexp.MustCompile(`AWS endpoint: (\S+) \((\w+)\)`)
	var api string
	deadline := time.After(3 * time.Minute)
	for api == "" {
		select {
		case code := <-done:
			t.Fatalf("maestro local exited %d before it ran:\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("maestro local did not say it runs within 3 minutes:\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if m := running.FindStringSubmatch(stdout.String()); m != nil {
			api = m[1]
		}
	}
	em := endpoint.FindStringSubmatch(stdout.String())
	if em == nil {
		t.Fatalf("no AWS endpoint in:\n%s", stdout.String())
	}

	resp, err := http.Get(api + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Resources struct {
			Stage string `json:"stage"`
		} `json:"resources"`
	}
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET /health: %s, %v", resp.Status, err)
	}
	if health.Resources.Stage != stage {
		t.Errorf("health names stage %q, want %q", health.Resources.Stage, stage)
	}

	interrupt()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after Ctrl-C, want 0:\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("maestro local did not stop within a minute of Ctrl-C")
	}
	if !strings.Contains(stdout.String(), "shutting down") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get(api + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("the API still answers after shutdown: %s", resp.Status)
	}
	if kind := localstack.Kind(em[2]); kind == localstack.KindMoto {
		if resp, err := client.Get(em[1]); err == nil {
			resp.Body.Close()
			t.Errorf("the moto_server maestro local started still answers at %s", em[1])
		}
	}
}
