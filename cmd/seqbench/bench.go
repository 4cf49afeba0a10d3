package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// bench is one seqbench run: its binaries, the processes it started, and what it measured.
type bench struct {
	cfg  config
	log  io.Writer
	tmp  string // binaries and the store's data; removed by close
	bins binaries

	store    *child
	storeURI string
	servers  map[string]*server // started on first use, by serverKind
	children []*child           // every process started, stopped by close in reverse order

	runs []loadRun // every seqload run, for the report
}

// A server is a running HTTP server under load.
type server struct {
	name string // as the report calls it
	addr string // host:port
	proc *child
}

// The servers a figure can ask for.
const (
	seqdCoalescing   = "seqd (coalescing)"
	seqdNoCoalescing = "seqd (SEQD_NO_COALESCE=true)"
	bareEcho         = "bare Echo + driver ObjectId"
)

// seqdDB is the database both seqd processes use; the driver round trip uses its own.
const seqdDB = "seqbench"

func newBench(cfg config, log io.Writer) (*bench, error) {
	tmp, err := os.MkdirTemp("", "seqbench-")
	if err != nil {
		return nil, err
	}
	return &bench{cfg: cfg, log: log, tmp: tmp, servers: map[string]*server{}}, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, format+"\n", args...)
}

// close stops every process, the servers before the store, and removes the temporary
// directory.
func (b *bench) close() error {
	var errs []error
	for i := len(b.children) - 1; i >= 0; i-- {
		errs = append(errs, b.children[i].stop())
	}
	b.children = nil
	errs = append(errs, os.RemoveAll(b.tmp))
	return errors.Join(errs...)
}

// start starts a process and takes charge of stopping it.
func (b *bench) start(name, bin string, args, env []string) (*child, error) {
	c, err := startChild(name, bin, args, env)
	if err != nil {
		return nil, err
	}
	b.children = append(b.children, c)
	return c, nil
}

// setup builds the binaries and starts the dev store on a fresh data directory.
func (b *bench) setup(ctx context.Context) error {
	b.logf("building seqd, seqload and the dev store in %s", b.tmp)
	var err error
	if b.bins, err = build(ctx, b.cfg.root, b.tmp); err != nil {
		return err
	}
	data := filepath.Join(b.tmp, "store")
	b.store, err = b.start("devstore", b.bins.devstore, []string{"-listen", "127.0.0.1:0", "-dir", data}, os.Environ())
	if err != nil {
		return err
	}
	var addr string
	err = b.store.waitUntil(ctx, "listening", func(context.Context) bool {
		addr = listeningAddr(b.store.stdout.String())
		return addr != ""
	})
	if err != nil {
		return err
	}
	b.storeURI = "mongodb://" + addr + "/"
	b.logf("dev store (FerretDB on SQLite) at %s, data in %s", b.storeURI, data)
	return nil
}

// listeningAddr finds the dev store's "listening on ADDR" line.
func listeningAddr(stdout string) string {
	for line := range strings.Lines(stdout) {
		if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
			return addr
		}
	}
	return ""
}

// server returns the server of that kind, starting it the first time.
func (b *bench) server(ctx context.Context, kind string) (*server, error) {
	if s, ok := b.servers[kind]; ok {
		return s, nil
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var proc *child
	var readyPath string
	switch kind {
	case seqdCoalescing, seqdNoCoalescing:
		env := append(seqdEnviron(os.Environ()),
			"MONGODB_URI="+b.storeURI, "SEQD_DB="+seqdDB, "SEQD_LOG_LEVEL=warn",
			fmt.Sprintf("SEQD_NO_COALESCE=%t", kind == seqdNoCoalescing))
		proc, err = b.start(kind, b.bins.seqd, []string{"--addr", addr}, env)
		readyPath = "/readyz" // the backend answers too
	case bareEcho:
		proc, err = b.start(kind, b.bins.self, []string{serveBareFlag, addr}, os.Environ())
		readyPath = "/oid"
	default:
		return nil, fmt.Errorf("no server %q", kind)
	}
	if err != nil {
		return nil, err
	}
	url := "http://" + addr + readyPath
	if err := proc.waitUntil(ctx, "ready at "+url, func(ctx context.Context) bool { return httpOK(ctx, url) }); err != nil {
		return nil, err
	}
	s := &server{name: kind, addr: addr, proc: proc}
	b.servers[kind] = s
	b.logf("%s: %s", kind, proc.commandLine())
	if _, err := b.seqload(ctx, s, warmUpArgs(kind)); err != nil {
		return nil, fmt.Errorf("%s: warm-up: %w", kind, err)
	}
	return s, nil
}

// warmUpArgs is a short load, not reported, that a server gets before its first figure:
// for seqd it also fills the driver's connection pool and creates a counter document.
func warmUpArgs(kind string) []string {
	if kind == bareEcho {
		return []string{"-target", "oid", "-c", "8", "-n", "5000"}
	}
	return []string{"-target", "seq", "-name", "warmup", "-c", "64", "-n", "1000"}
}

// seqdEnviron is env without seqd's settings, so that the caller's shell cannot change
// what is measured.
func seqdEnviron(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SEQD_") && !strings.HasPrefix(kv, "MONGODB_URI=") {
			out = append(out, kv)
		}
	}
	return out
}

// httpOK reports whether GET url answers 200.
func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// runFigures sets up and runs the chosen figures. A figure that fails is reported as
// such and the others still run; the error joins every failure.
func (b *bench) runFigures(ctx context.Context) (*report, error) {
	rep := &report{command: b.cfg.command, machine: describeMachine(ctx), duration: b.cfg.duration, started: time.Now()}
	if err := b.setup(ctx); err != nil {
		return rep, err
	}
	var errs []error
	for _, id := range b.cfg.only {
		f := figureByID(id)
		b.logf("figure %d: %s", f.id, f.title)
		res, err := f.run(ctx, b)
		if err != nil {
			err = fmt.Errorf("figure %d: %w", f.id, err)
			errs = append(errs, err)
			res.rows = append(res.rows, row{figure: fmt.Sprintf("%d. %s", f.id, f.title), seqd: "error: " + clip(err.Error(), 200), met: "no"})
		}
		res.id, res.title = f.id, f.title
		rep.figures = append(rep.figures, res)
		if ctx.Err() != nil { // interrupted: the figure's error says so
			break
		}
	}
	rep.runs = b.runs
	for _, kind := range []string{seqdCoalescing, seqdNoCoalescing, bareEcho} {
		if s, ok := b.servers[kind]; ok {
			rep.servers = append(rep.servers, s.name+": `"+s.proc.commandLine()+"`")
		}
	}
	if b.store != nil {
		rep.servers = append(rep.servers, "dev store: `"+b.store.commandLine()+"`")
	}
	return rep, errors.Join(errs...)
}
