package localstack

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MotoVersion is the moto release the launcher (moto_server.py) is written
// for: it patches moto's internals, which another release may have changed.
// The Makefile's py-tools target installs this version (MOTO_VERSION there).
const MotoVersion = "5.2.1"

// motoServerPy launches moto's server with a key-level rollback for
// DynamoDB transactions, serialised DynamoDB requests, SQS deletes that no
// longer lose concurrent sends, and a route that moves SQS message delays
// with the local stack's clock; see the file's sections for why.
//
//go:embed moto_server.py
var motoServerPy []byte

// errMotoVersion is returned by motoShim when python3 imports a moto
// release other than MotoVersion.
var errMotoVersion = errors.New("wrong moto version")

// motoShim writes the launcher next to the logs and returns the command that
// runs it, provided python3 can import moto's server and the moto it imports
// is MotoVersion (else an error wrapping errMotoVersion).
func motoShim(ctx context.Context, dir string) ([]string, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("python3 not found: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, py, "-c",
		"import moto, moto.server, moto.dynamodb.responses, moto.dynamodbstreams.responses; print(moto.__version__)").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("python3 cannot import moto: %v: %s", err, out)
	}
	if v := strings.TrimSpace(string(out)); v != MotoVersion {
		return nil, fmt.Errorf("%w: %s imports moto %s; the moto launcher is written for moto %s "+
			"(make py-tools installs it into the project's virtualenv and `make test` uses that; "+
			"or pip install 'moto[server]==%s')", errMotoVersion, py, v, MotoVersion, MotoVersion)
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
