// Command maestro is the command-line tool of the serverless Maestro orchestrator.
//
// Usage:
//
//	maestro validate FILE...   check workflow definitions (JSON, or YAML by extension)
//	maestro local              run the whole system on this machine (see README)
//	maestro bench              run the step benchmark on the local stack
//	maestro push|start|status|instances|stop|kill|unblock|restart|signal ...
//	maestro whoami|access|teams ...
//	                           use a running system's API (see package cli)
//	maestro completion bash    a bash completion script
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/maestro-serverless/maestro/cli"
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
  completion bash    print a bash completion script (source <(maestro completion bash))
` + cli.Usage

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
	case "completion":
		if len(args) != 2 || args[1] != "bash" {
			fmt.Fprintln(stderr, "usage: maestro completion bash")
			return exitUsage
		}
		fmt.Fprintf(stdout, bashCompletion, strings.Join(append([]string{"validate", "local", "bench", "completion"}, cli.Commands...), " "))
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		if slices.Contains(cli.Commands, args[0]) {
			return cli.Run(ctx, args, cli.Options{Stdout: stdout, Stderr: stderr})
		}
		fmt.Fprintf(stderr, "maestro: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

// bashCompletion completes commands, then file names.
const bashCompletion = `_maestro() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _maestro maestro
`
