package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/maestro-serverless/maestro/bench"
)

// runBench runs the step benchmark on a local stack and prints its figures:
// exit 0 when every instance succeeded, 1 otherwise, 2 on usage errors.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", bench.DefaultRuns, "instances of each workload, started one after the other")
	steps := fs.Int("steps", bench.DefaultSteps, "length of the chain and width of the fan-out")
	httpSteps := fs.Int("http-steps", bench.DefaultHTTPSteps, "steps of the Http DAG (ten chains calling a loopback server); 0 skips it")
	httpChain := fs.Int("http-chain", bench.DefaultHTTPChain, "length of the Http chains (httpchain: -runs instances one after the other; httpchains: -http-chains at once); 0 skips both")
	httpChains := fs.Int("http-chains", bench.DefaultHTTPChains, "Http chains run at once (httpchains); 0 skips it")
	httpFan := fs.Int("http-fan", bench.DefaultHTTPFan, "width of the Http fan (httpfan); 0 skips it")
	httpJoins := fs.Int("http-joins", 0, "layers of the Http join DAG (httpjoins: every step waits for every step of the layer before); 0 skips it")
	joinWidth := fs.Int("join-width", bench.DefaultJoinWidth, "width of the Http join DAG's layers")
	foreach := fs.Int("foreach", bench.DefaultForeach, "iterations of the foreach workload (a NoOp body; one instance); 0 skips it")
	foreachConc := fs.Int("foreach-concurrency", bench.DefaultForeachConcurrency, "the foreach workloads' concurrency (at most 500)")
	foreachHTTP := fs.Int("foreach-http", 0, "iterations of the foreachhttp workload (an Http body calling the loopback server; one instance); 0 skips it")
	foreachItems := fs.Int("foreach-items", 0, "iterations of the foreachitems workload (a NoOp body fed by a JSONL object of that many items in the stack's bucket, items_from; one instance); 0 skips it")
	streamEvery := fs.Duration("stream-interval", bench.DefaultStreamInterval, "DynamoDB stream poll period (Lambda polls every 250ms)")
	workPollers := fs.Int("work-pollers", 0, "batches of work messages the local workers take at once (0: the local stack's 4)")
	singleStarts := fs.Bool("single-starts", false, "start the httpchains instances with a request each, not 100 to a start-batch request")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	timeout := fs.Duration("timeout", bench.DefaultTimeout, "limit for each instance, from its start request to its end")
	verbose := fs.Bool("v", false, "log the system's warnings and errors to stderr")
	trace := fs.Bool("trace", false, "write one line per AWS call the system makes to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process (the benchmark and the local stack's handlers) to this file")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 || *runs < 1 || *steps < 1 || *httpSteps < 0 || *httpChain < 0 || *httpChains < 0 || *httpFan < 0 || *httpJoins < 0 || *joinWidth < 1 || *foreach < 0 || *foreachHTTP < 0 || *foreachItems < 0 || *foreachConc < 1 || *foreachConc > 500 || *workPollers < 0 || *streamEvery <= 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "usage: maestro bench [-runs N>=1] [-steps N>=1] [-http-steps N>=0] [-http-chain N>=0] [-http-chains N>=0] [-http-fan N>=0] [-http-joins N>=0] [-join-width N>=1] [-foreach N>=0] [-foreach-http N>=0] [-foreach-items N>=0] [-foreach-concurrency 1..500] [-stream-interval D>0] [-work-pollers N>=0] [-single-starts] [-timeout D>0] [-json] [-v] [-trace] [-cpuprofile FILE]")
		return exitUsage
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg := bench.Config{Runs: *runs, Steps: *steps, HTTPSteps: *httpSteps, StreamInterval: *streamEvery, Timeout: *timeout, Logger: logger}
	cfg.HTTPChain, cfg.HTTPChains, cfg.HTTPFan = *httpChain, *httpChains, *httpFan
	cfg.HTTPJoins, cfg.JoinWidth = *httpJoins, *joinWidth
	cfg.SingleStarts = *singleStarts
	cfg.Foreach, cfg.ForeachConcurrency, cfg.ForeachHTTP = *foreach, *foreachConc, *foreachHTTP
	cfg.ForeachItems = *foreachItems
	cfg.WorkPollers = *workPollers
	for _, n := range []*int{&cfg.HTTPSteps, &cfg.HTTPChain, &cfg.HTTPChains, &cfg.HTTPFan} {
		if *n == 0 {
			*n = -1 // 0 on the command line skips; in Config it is the default
		}
	}
	if *trace {
		cfg.Trace = stderr
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "maestro bench: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "maestro bench: cpu profile: %v\n", err)
			return exitInvalid
		}
		defer pprof.StopCPUProfile()
	}
	started := time.Now()
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "maestro bench: %v\n", err)
		return exitInvalid
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
		if err == nil {
			_, err = fmt.Fprintf(stdout, "\nbenchmark took %s\n", time.Since(started).Round(time.Second))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "maestro bench: %v\n", err)
		return exitInvalid
	}
	if rep.Failed() {
		fmt.Fprintln(stderr, "maestro bench: some instances did not succeed")
		return exitInvalid
	}
	return exitOK
}
