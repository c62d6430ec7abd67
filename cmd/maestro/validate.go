package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/model"
)

// runValidate checks each file and prints one verdict per file followed by its errors.
func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.Bool("q", false, "print only invalid files")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: maestro validate [-q] FILE...")
		return exitUsage
	}
	checker := definition.NewChecker()
	code := exitOK
	for _, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "maestro: %v\n", err)
			return exitUsage
		}
		_, err = checker.Check(data, definition.FormatFromName(path))
		if err == nil {
			if !*quiet {
				fmt.Fprintf(stdout, "%s: valid\n", path)
			}
			continue
		}
		code = exitInvalid
		fmt.Fprintf(stdout, "%s: invalid\n", path)
		var list definition.Errors
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintf(stdout, "  %s\n", e)
			}
		} else {
			fmt.Fprintf(stdout, "  %v\n", err)
		}
		if _, err := model.ParseJobTemplate(data); err == nil {
			// Still not a workflow; say what it is.
			fmt.Fprintf(stdout, "  (a valid job template: store it with POST /api/v3/job-templates)\n")
		}
	}
	return code
}
