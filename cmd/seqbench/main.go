// Command seqbench measures seqd's throughput and latency and prints them as a Markdown
// table next to anchors measured in the same run on the same machine:
//
//	go run ./cmd/seqbench -d 5s -out bench.md
//	go run ./cmd/seqbench -only 2,4        # figures 2 and 4 only
//
// It builds seqd, seqload and the dev store (FerretDB on SQLite) into a temporary
// directory, starts a fresh dev store on a temporary data directory, and starts the
// servers the chosen figures need, each as its own process on a fresh loopback port:
// a seqd with coalescing, a seqd without (SEQD_NO_COALESCE=true), both on the same
// store and with SEQD_LOG_LEVEL=warn, and a bare Echo server that returns a driver
// ObjectId as JSON (seqbench itself, re-executed with a hidden flag). Every load comes
// from seqload -json, so every figure comes from one tool.
//
// # Figures
//
//  1. objectid.New vs the driver's bson.NewObjectID: ns/op from
//     `go test -run '^$' -bench . -benchmem ./objectid/`.
//  2. GET /oid requests/s, seqd vs the bare Echo handler, at one concurrency, run in the
//     order seqd, bare, bare, seqd so that drift during the run hits both alike.
//  3. GET /oid?count=1000: ObjectIds/s.
//  4. GET /seq/{name}/next at c = 1, 16, 64, 256: values/s with coalescing vs one
//     findOneAndUpdate per request. With coalescing every run must hand out a gapless
//     run without duplicates (seqload -expect-contiguous). Without it the dev store's
//     findAndModify is not atomic across connections, so duplicates are a property of
//     FerretDB and are recorded, not treated as a seqd failure.
//  5. GET /seq/{name}/next?count=1000: values/s.
//  6. Latency at c = 1 of /seq/{name}/next vs the same findOneAndUpdate ($inc, upsert,
//     write concern majority) made in-process with the driver, p50 and p99 of 2000 calls.
//  7. The optimistic strategy at c = 1, 16, 64: values/s, duplicate key retries per value
//     (the delta of seqd_duplicate_key_retries_total{strategy="optimistic"} on /metrics)
//     and contention errors (503s).
//
// Two CPUs are usually all there is: the load tool, seqd and the store share them, so
// the figures are for the whole system on one machine. The runs table gives the CPU
// seconds each process used, which shows who the bottleneck was.
//
// Every process seqbench starts is stopped before it returns, also after an error and on
// SIGINT or SIGTERM; on Linux the kernel kills them should seqbench itself be killed.
// A figure that fails is reported in the table and makes the exit status 1; the other
// figures still run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	only     []int         // figures to run, ascending
	out      string        // file for the Markdown, besides stdout
	root     string        // the seqd module's directory
	command  string        // the command line, for the report
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{command: strings.TrimSpace("seqbench " + shellJoin(args))}
	fs := flag.NewFlagSet("seqbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: seqbench [flags]

Builds seqd, seqload and the dev store, runs the throughput figures against fresh
processes and prints a Markdown table of seqd vs anchors measured in the same run.

flags:
`)
		fs.PrintDefaults()
	}
	fs.DurationVar(&c.duration, "d", 5*time.Second, "duration of each load")
	only := fs.String("only", "", "comma-separated figures to run, e.g. 2,4 (default: all, 1-7)")
	fs.StringVar(&c.out, "out", "", "also write the Markdown report to this `file`")
	fs.StringVar(&c.root, "root", "", "the seqd module's `directory` (default: found from the working directory)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.duration <= 0 {
		return c, fmt.Errorf("-d must be positive, got %s", c.duration)
	}
	var err error
	if c.only, err = parseOnly(*only); err != nil {
		return c, err
	}
	return c, nil
}

// parseOnly reads -only: figure numbers, comma-separated; empty means every figure.
func parseOnly(s string) ([]int, error) {
	var ids []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		id, err := strconv.Atoi(f)
		if err != nil || figureByID(id) == nil {
			return nil, fmt.Errorf("-only: %q is not a figure (1-%d)", f, len(figures))
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		for _, f := range figures {
			ids = append(ids, f.id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// run is seqbench. It returns an error if the setup failed or any figure did.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == serveBareFlag || args[0] == "-"+serveBareFlag) {
		if len(args) != 2 {
			return fmt.Errorf("usage: seqbench %s ADDR", serveBareFlag)
		}
		return serveBare(ctx, args[1])
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.root == "" {
		if cfg.root, err = findModuleRoot(); err != nil {
			return err
		}
	}

	b, err := newBench(cfg, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	rep, runErr := b.runFigures(ctx)
	md := rep.markdown()
	if _, err := io.WriteString(stdout, md); err != nil {
		return err
	}
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(md), 0o644); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}
