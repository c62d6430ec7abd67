package localstack

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// motoServerPy launches moto's server with a key-level rollback for
// DynamoDB transactions and serialised DynamoDB requests; see the file's
// docstring for why.
//
//go:embed moto_server.py
var motoServerPy []byte

// motoShim writes the launcher next to the logs and returns the command that
// runs it, provided python3 can import moto's server.
func motoShim(ctx context.Context, dir string) ([]string, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("python3 not found: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(cctx, py, "-c", "import moto.server, moto.dynamodb.responses, moto.dynamodbstreams.responses").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("python3 cannot import moto: %v: %s", err, out)
	}
	f, err := os.CreateTemp(dir, "maestro-moto-server-*.py")
	if err != nil {
		return nil, fmt.Errorf("write moto launcher: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(motoServerPy); err != nil {
		return nil, fmt.Errorf("write moto launcher: %w", err)
	}
	return []string{py, filepath.Clean(f.Name())}, nil
}
