package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/seqd/seqd/internal/loadreport"
	"github.com/seqd/seqd/internal/metrics"
	"github.com/seqd/seqd/internal/proc"
)

// bench is one seqbench run: the processes it started and what it measured.
type bench struct {
	cfg             config
	log             io.Writer
	seqloadBin      string
	store           *proc.DevStore
	seqd, off, bare *server    // seqd with coalescing, without, and the bare Echo server
	runs            []loadRun  // every seqload run of a figure, for the report
	servers         [][]string // name and command line of every process started
}

// A server is a running HTTP server under load.
type server struct {
	name, url string
	proc      *proc.Process
}

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.log, format+"\n", args...) }

// setup builds the binaries and starts, each warmed up with a short load, the dev store
// on a fresh data directory, seqd with and without coalescing on it, and the bare Echo
// server. seqd runs at its default log level, info: it logs its start and stop and the
// requests answered with an error.
func (b *bench) setup(ctx context.Context) error {
	b.logf("building seqd, seqload and the dev store")
	var bins []string
	for _, pkg := range []string{"./cmd/seqd", "./cmd/seqload", "./cmd/devstore"} {
		bin, err := proc.Build(ctx, pkg)
		if err != nil {
			return err
		}
		bins = append(bins, bin)
	}
	b.seqloadBin = bins[1]
	data, err := os.MkdirTemp("", "seqbench-store-")
	if err != nil {
		return err
	}
	if b.store, err = proc.StartDevStore(ctx, bins[2], data, "127.0.0.1:0"); err != nil {
		return errors.Join(err, os.RemoveAll(data))
	}
	b.servers = append(b.servers, []string{"dev store", "devstore -listen 127.0.0.1:0 -dir " + data})
	seqdWarmUp := []string{"-target", "seq", "-name", "warmup", "-c", "64", "-n", "1000"} // fills the driver's pool
	for _, s := range []struct {
		srv        **server
		name       string
		noCoalesce bool
	}{{&b.seqd, "seqd (coalescing)", false}, {&b.off, "seqd (SEQD_NO_COALESCE=true)", true}} {
		env := []string{"MONGODB_URI=" + b.store.URI(), "SEQD_DB=seqbench", fmt.Sprintf("SEQD_NO_COALESCE=%t", s.noCoalesce), "SEQD_ADMIN_TOKEN=" + adminToken}
		seqd, err := proc.StartSeqd(ctx, bins[0], env)
		if err != nil {
			return err
		}
		if *s.srv, err = b.serve(ctx, s.name, strings.Join(env, " ")+" seqd --addr 127.0.0.1:0", seqd.Process, seqdWarmUp...); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bare, err := proc.Start(ctx, exec.Command(self, serveBareFlag), proc.ListeningOn)
	if err != nil {
		return fmt.Errorf("%s: %w", bareName, err)
	}
	b.bare, err = b.serve(ctx, bareName, "seqbench "+serveBareFlag, bare, "-target", "oid", "-c", "8", "-n", "5000")
	return err
}

// bareName is the bare Echo server's name in the report.
const bareName = "bare Echo + driver ObjectId"

// serve takes charge of a started server and warms it up with a short load.
func (b *bench) serve(ctx context.Context, name, command string, p *proc.Process, warmUp ...string) (*server, error) {
	s := &server{name: name, url: "http://" + p.Addr(), proc: p}
	b.servers = append(b.servers, []string{name, command})
	b.logf("%s at %s: %s", name, s.url, command)
	if _, err := b.load(ctx, 0, s, warmUp...); err != nil {
		return s, fmt.Errorf("%s: warm-up: %w", name, err)
	}
	return s, nil
}

// close stops every process, the servers before the store, and removes what setup made.
func (b *bench) close() error {
	var errs []error
	for _, s := range []*server{b.seqd, b.off, b.bare} {
		if s != nil {
			errs = append(errs, s.proc.Stop(context.Background()))
		}
	}
	if b.store != nil {
		errs = append(errs, b.store.Stop(context.Background()), os.RemoveAll(b.store.Dir()))
	}
	return errors.Join(append(errs, proc.Clean())...)
}

// loadRun is one seqload run: its summary, the CPU time that seqload, the server and
// the store used meanwhile, and the change of seqd's counters over it.
type loadRun struct {
	loadreport.Summary
	figure                       int
	server, args                 string
	cpuLoad, cpuServer, cpuStore time.Duration
	counted                      counts // seqd's; zero for the bare server
}

// counts are what seqd's /metrics counts of its counter writes: writes and the callers
// they served (seqd_coalesced_batch_callers, count and sum), and duplicate key retries
// of the optimistic strategy.
type counts struct{ writes, callers, retries float64 }

func (b *bench) counts(ctx context.Context, srv *server) (counts, error) {
	if srv.name == bareName {
		return counts{}, nil
	}
	f, err := metrics.Scrape(ctx, http.DefaultClient, srv.url)
	var c counts
	c.writes, c.callers, _ = f.Histogram("seqd_coalesced_batch_callers")
	c.retries, _ = f.Sum("seqd_duplicate_key_retries_total", "strategy", "optimistic")
	return c, err
}

// serverCPUPerRequest is the server's CPU time per request of the run.
func (r loadRun) serverCPUPerRequest() time.Duration {
	return r.cpuServer / time.Duration(max(r.Requests, 1))
}

// load runs seqload -json against srv with args (which must bound the run with -d or
// -n) and, for a figure (not 0, a warm-up), records the run for the report. seqload
// exits 1 when a check failed; its summary says which, and what that means is the
// figure's to judge. A run without a summary is an error.
func (b *bench) load(ctx context.Context, figure int, srv *server, args ...string) (loadRun, error) {
	run := loadRun{figure: figure, server: srv.name, args: proc.ShellJoin(args)}
	args = append([]string{"-addr", srv.url, "-json", "-progress", "0", "-timeout", "10s"}, args...)
	b.logf("  seqload %s", proc.ShellJoin(args))
	before, err := b.counts(ctx, srv)
	if err != nil {
		return run, err
	}
	lctx, cancel := context.WithTimeout(ctx, b.cfg.duration+time.Minute)
	defer cancel()
	cmd := proc.Command(lctx, b.seqloadBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	serverCPU, storeCPU := srv.proc.CPUTime(), b.store.CPUTime()
	runErr := cmd.Run()
	run.cpuServer, run.cpuStore = srv.proc.CPUTime()-serverCPU, b.store.CPUTime()-storeCPU
	if cmd.ProcessState != nil {
		run.cpuLoad = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if lctx.Err() != nil {
		return run, fmt.Errorf("seqload: %w", context.Cause(lctx))
	}
	if err := srv.proc.Exited(); err != nil {
		return run, err
	}
	if run.Summary, err = loadreport.Read(stdout.Bytes()); err != nil {
		return run, fmt.Errorf("seqload %s: %w (exit: %v; stderr: %s)", proc.ShellJoin(args), err, runErr, clip(stderr.String(), 500))
	}
	after, err := b.counts(ctx, srv)
	if err != nil {
		return run, err
	}
	run.counted = counts{after.writes - before.writes, after.callers - before.callers, after.retries - before.retries}
	if figure > 0 {
		b.runs = append(b.runs, run)
	}
	return run, nil
}
