// Command maestro is the command-line tool of the serverless Maestro orchestrator.
//
// Usage:
//
//	maestro validate FILE...   check workflow definitions (JSON, or YAML by extension)
//	maestro local              run the whole system on this machine (see README)
//	maestro bench              run the step benchmark on the local stack
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

const usage = `usage: maestro <command> [arguments]

commands:
  validate FILE...   validate workflow definitions (.json, .yaml, .yml);
                     exit 0 when all are valid, 1 when any is invalid, 2 on usage errors
  local              run the whole system locally (emulator, pumps, API)
  bench              run the step benchmark on the local stack
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "validate":
		return runValidate(args[1:], stdout, stderr)
	case "local":
		return runLocal(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "maestro: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}
