package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/seqd/seqd/internal/proc"
)

// bench is one seqbench run: the processes it started and what it measured.
type bench struct {
	cfg     config
	log     io.Writer
	bins    map[string]string // by package, e.g. "./cmd/seqd"
	store   *proc.DevStore
	servers map[string]*server // started on first use, by name
	runs    []loadRun          // every seqload run of a figure, for the report
}

// A server is a running HTTP server under load.
type server struct {
	name, url string
	proc      *proc.Process
	command   string // how it was started, for the report
}

// The servers a figure can ask for.
const (
	seqdCoalescing   = "seqd (coalescing)"
	seqdNoCoalescing = "seqd (SEQD_NO_COALESCE=true)"
	bareEcho         = "bare Echo + driver ObjectId"
)

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.log, format+"\n", args...) }

// setup builds the binaries and starts the dev store on a fresh data directory.
func (b *bench) setup(ctx context.Context) error {
	b.logf("building seqd, seqload and the dev store")
	b.bins = map[string]string{}
	for _, pkg := range []string{"./cmd/seqd", "./cmd/seqload", "./cmd/devstore"} {
		bin, err := proc.Build(ctx, pkg)
		if err != nil {
			return err
		}
		b.bins[pkg] = bin
	}
	data, err := os.MkdirTemp("", "seqbench-store-")
	if err != nil {
		return err
	}
	if b.store, err = proc.StartDevStore(ctx, b.bins["./cmd/devstore"], data, "127.0.0.1:0"); err != nil {
		return errors.Join(err, os.RemoveAll(data))
	}
	b.logf("dev store (FerretDB on SQLite) at %s, data in %s", b.store.URI(), data)
	return nil
}

// close stops every process, the servers before the store, and removes what setup made.
func (b *bench) close() error {
	var errs []error
	for _, s := range b.servers {
		errs = append(errs, s.proc.Stop(context.Background()))
	}
	if b.store != nil {
		errs = append(errs, b.store.Stop(context.Background()), os.RemoveAll(b.store.Dir()))
	}
	return errors.Join(append(errs, proc.Clean())...)
}

// server returns the server called name, starting and warming it up the first time.
// seqd runs at its default log level, info, which logs only its start and stop and
// requests answered with an error.
func (b *bench) server(ctx context.Context, name string) (*server, error) {
	if s, ok := b.servers[name]; ok {
		return s, nil
	}
	s := &server{name: name}
	warmUp := []string{"-target", "seq", "-name", "warmup", "-c", "64", "-n", "1000"} // fills the driver's pool
	if name == bareEcho {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		s.command = "seqbench " + serveBareFlag
		if s.proc, err = proc.Start(ctx, exec.Command(self, serveBareFlag), proc.ListeningOn); err != nil {
			return nil, err
		}
		warmUp = []string{"-target", "oid", "-c", "8", "-n", "5000"}
	} else {
		env := []string{"MONGODB_URI=" + b.store.URI(), "SEQD_DB=seqbench", fmt.Sprintf("SEQD_NO_COALESCE=%t", name == seqdNoCoalescing)}
		s.command = strings.Join(env, " ") + " seqd --addr 127.0.0.1:0"
		seqd, err := proc.StartSeqd(ctx, b.bins["./cmd/seqd"], env)
		if err != nil {
			return nil, err
		}
		s.proc = seqd.Process
	}
	s.url = "http://" + s.proc.Addr()
	b.servers[name] = s
	b.logf("%s at %s: %s", name, s.url, s.command)
	if _, err := b.load(ctx, 0, s, warmUp...); err != nil {
		return nil, fmt.Errorf("%s: warm-up: %w", name, err)
	}
	return s, nil
}

// loadRun is one seqload run: the part of its -json summary that seqbench reads (the
// field names are seqload's documented interface), and the CPU time that seqload, the
// server and the store used meanwhile.
type loadRun struct {
	Target       string           `json:"target"`
	Clients      int              `json:"clients"`
	ElapsedS     float64          `json:"elapsed_s"`
	Requests     int64            `json:"requests"`
	Failed       int64            `json:"failed"`
	Values       int64            `json:"values"`
	RequestsPerS float64          `json:"requests_per_s"`
	ValuesPerS   float64          `json:"values_per_s"`
	LatencyP50Ms float64          `json:"latency_p50_ms"`
	LatencyP99Ms float64          `json:"latency_p99_ms"`
	Errors       map[string]int64 `json:"errors"`
	Distinct     int64            `json:"distinct"`
	Duplicates   int64            `json:"duplicates"`
	OrderErrors  int64            `json:"order_violations"`
	Sequence     struct {
		Missing uint64 `json:"missing"`
	} `json:"sequence"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures"`

	figure                       int
	server, args                 string
	cpuLoad, cpuServer, cpuStore time.Duration
}

// serverCPUPerRequest is the server's CPU time per request of the run, 0 if unknown.
func (r loadRun) serverCPUPerRequest() time.Duration {
	return r.cpuServer / time.Duration(max(r.Requests, 1))
}

// load runs seqload -json against srv with args (which must bound the run with -d or
// -n) and, for a figure (not 0, a warm-up), records the run for the report. seqload
// exits 1 when a check failed; its summary says which, and what that means is the
// figure's to judge. A run without a summary is an error.
func (b *bench) load(ctx context.Context, figure int, srv *server, args ...string) (loadRun, error) {
	run := loadRun{figure: figure, server: srv.name, args: shellJoin(args)}
	args = append([]string{"-addr", srv.url, "-json", "-progress", "0", "-timeout", "10s"}, args...)
	b.logf("  seqload %s", shellJoin(args))
	ctx, cancel := context.WithTimeout(ctx, b.cfg.duration+time.Minute)
	defer cancel()
	cmd := proc.Command(ctx, b.bins["./cmd/seqload"], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	serverCPU, storeCPU := processCPU(srv.proc.Pid()), processCPU(b.store.Pid())
	runErr := cmd.Run()
	run.cpuServer, run.cpuStore = processCPU(srv.proc.Pid())-serverCPU, processCPU(b.store.Pid())-storeCPU
	if cmd.ProcessState != nil {
		run.cpuLoad = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		return run, fmt.Errorf("seqload: %w", context.Cause(ctx))
	}
	if err := srv.proc.Exited(); err != nil {
		return run, err
	}
	if err := readLoadSummary(stdout.Bytes(), &run); err != nil {
		return run, fmt.Errorf("seqload %s: %w (exit: %v; stderr: %s)", shellJoin(args), err, runErr, clip(stderr.String(), 500))
	}
	if figure > 0 {
		b.runs = append(b.runs, run)
		b.logf("  → %.0f requests/s, %.0f values/s, p50 %.3f ms, p99 %.3f ms, %d failed, %d duplicates",
			run.RequestsPerS, run.ValuesPerS, run.LatencyP50Ms, run.LatencyP99Ms, run.Failed, run.Duplicates)
	}
	return run, nil
}

// readLoadSummary reads seqload -json's standard output into run: its last line that
// is a JSON object, so that stray lines before it do no harm.
func readLoadSummary(stdout []byte, run *loadRun) error {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(line, "{") {
		return fmt.Errorf("no JSON summary: %q", clip(string(stdout), 300))
	}
	if err := json.Unmarshal([]byte(line), run); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if run.Target == "" {
		return errors.New(`summary: no "target": not a seqload -json summary`)
	}
	return nil
}

// processCPU is the user plus system CPU time a running process has used, 0 where
// /proc cannot tell.
func processCPU(pid int) time.Duration {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}
