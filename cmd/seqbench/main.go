// Command seqbench measures the figures of the README's "Measured" section, each next
// to an anchor measured in the same run on the same machine, and writes them as
// Markdown; the targets are the README's (`make bench`, or `go run ./cmd/seqbench -d 5s
// -only 2,4` for figures 2 and 4).
//
// It orchestrates: Go benchmarks run by go test and read with golang.org/x/perf, loads
// from cmd/seqload -json (which verifies every value it receives), counts from seqd's
// /metrics. It starts on loopback a fresh dev store, a seqd with coalescing and one
// without on it, and a bare Echo server (seqbench itself, re-executed), and stops them
// before it returns, also after an error or a signal. A figure that fails is reported
// in the table and makes the exit status 1; the other figures still run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seqd/seqd/internal/proc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "seqbench:", err)
		os.Exit(1)
	}
}

// serveBareFlag starts the bare Echo server instead of the benchmark. It is not listed
// in the usage: it is how seqbench runs the anchor of figure 2 in a process of its own.
const serveBareFlag = "-serve-bare"

// config is the parsed command line.
type config struct {
	duration time.Duration // of each load
	only     map[int]bool  // figures to run
	out      string        // file for the Markdown, besides stdout
	command  string        // the command line, for the report
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{command: strings.TrimSpace("seqbench " + proc.ShellJoin(args))}
	fs := flag.NewFlagSet("seqbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "d", 5*time.Second, "duration of each load")
	only := fs.String("only", "", "comma-separated figures to run (default all)")
	fs.StringVar(&c.out, "out", "", "also write the Markdown report to this `file`")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.duration <= 0 {
		return c, fmt.Errorf("-d must be positive, got %s", c.duration)
	}
	c.only = map[int]bool{}
	if *only == "" {
		for id := range len(figures) {
			c.only[id+1] = true
		}
		return c, nil
	}
	for f := range strings.SplitSeq(*only, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 1 || id > len(figures) {
			return c, fmt.Errorf("-only: %q is not a figure (1-%d)", f, len(figures))
		}
		c.only[id] = true
	}
	return c, nil
}

// run is seqbench. It returns an error if the setup failed or any figure did.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && args[0] == serveBareFlag {
		return serveBare(ctx, stdout)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, log: stderr}
	defer b.close()
	started := time.Now()
	figures, runErr := b.runFigures(ctx)
	md := b.markdown(started, figures)
	if _, err := io.WriteString(stdout, md); err != nil {
		return err
	}
	if cfg.out != "" {
		runErr = errors.Join(runErr, os.WriteFile(cfg.out, []byte(md), 0o644))
	}
	return runErr
}
