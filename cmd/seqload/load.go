package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/snowflake"
	"github.com/seqd/seqd/uuidv7"
)

// How a load ended, as the summary reports it.
const (
	stoppedDuration  = "duration"
	stoppedRequests  = "requests"
	stoppedInterrupt = "interrupt"
	stoppedMaxErrors = "max-errors"
)

// kindInvalid counts 2xx responses that break the API's promises; they fail the run.
const kindInvalid = "invalid"

var (
	errDurationReached = errors.New("duration reached")
	errTooManyErrors   = errors.New("too many failed requests")
)

// worker is one client. It talks to one address, one request at a time, and owns what it
// records until the load ends; only the live counters are shared.
type worker struct {
	client int
	addr   string
	url    string

	requests   int64
	ok         int64
	errors     map[string]int64  // failed requests by kind: "503", "timeout", "transport", "invalid"
	samples    map[string]string // the first message seen for each kind
	latencies  []time.Duration   // of successful requests
	oids       []objectid.ID
	uuids      []uuidv7.UUID
	snowflakes []snowflake.ID
	seqs       []seqOp
	body       bytes.Buffer // the response being read
}

// load is one run of the workers against the addresses.
type load struct {
	cfg     config
	client  *http.Client
	cache   *client.Client // with -client-cache: requests are its NextN calls
	seqWant seqWant
	maxBody int64
	began   time.Time               // what seqOp times count from
	stop    context.CancelCauseFunc // stops issuing requests, with errTooManyErrors

	issued atomic.Int64 // requests started, for -n
	// Totals for the progress lines.
	requests, values, failed atomic.Int64
}

// outcome is what a load leaves for the summary.
type outcome struct {
	workers []*worker
	began   time.Time     // what the workers' seqOp times count from
	modes   []modeReading // the sequence's mode, read before, during and after the load (watch.go)
	elapsed time.Duration
	stopped string
}

// runLoad sends requests until the duration passes, -n requests have been sent, too many
// failed, or ctx is done (an interrupt). Requests in flight then run to their end, each
// bounded by -timeout: abandoning a sequence request could leave values reserved on the
// server but never seen here, a false gap.
func runLoad(ctx context.Context, cfg config, progressOut io.Writer) outcome {
	start := time.Now() // before the deadline, so that a run of -d lasts at least -d
	stopCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeoutCause(stopCtx, cfg.duration, errDurationReached)
		defer cancel()
	}
	requestCtx := context.WithoutCancel(ctx)

	// One transport for all clients, with an idle connection kept for each of them.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConns = 0 // no overall bound
	transport.MaxIdleConnsPerHost = cfg.clients
	defer transport.CloseIdleConnections()

	l := &load{
		cfg:     cfg,
		client:  &http.Client{Transport: transport},
		seqWant: seqWant{name: cfg.name, count: int64(cfg.perResponse()), strategy: cfg.strategy},
		maxBody: 1<<20 + 64*int64(cfg.perResponse()),
		began:   start,
		stop:    stop,
	}
	if cfg.clientCache {
		c, err := newCache(cfg, l.client)
		if err != nil {
			panic(err) // the address and options were validated with the flags
		}
		l.cache = c
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
			defer cancel()
			c.Close(ctx) // waits for a block being fetched; the values the cache holds are not received, and not checked
		}()
	}
	path := cfg.path()
	workers := make([]*worker, cfg.clients)
	for i := range workers {
		addr := cfg.addrs[i%len(cfg.addrs)]
		workers[i] = &worker{
			client:  i,
			addr:    addr,
			url:     addr + path,
			errors:  map[string]int64{},
			samples: map[string]string{},
		}
	}

	// The mode is read before the first request is sent and after the last
	// answer is read, and every -mode-poll in between, on the requests' clock.
	var modes, polled []modeReading
	var watching sync.WaitGroup
	watchCtx, stopWatching := context.WithCancel(requestCtx)
	defer stopWatching()
	if cfg.watchesMode() {
		modes = append(modes, l.readMode(requestCtx))
		if cfg.modePoll > 0 {
			watching.Go(func() { polled = l.watchMode(watchCtx, cfg.modePoll) })
		}
	}

	var progress sync.WaitGroup
	progressCtx, stopProgress := context.WithCancel(context.Background())
	defer stopProgress()
	if cfg.progress > 0 {
		progress.Go(func() { l.reportProgress(progressCtx, progressOut, start) })
	}
	var clients sync.WaitGroup
	for _, w := range workers {
		clients.Go(func() { l.drive(stopCtx, requestCtx, w) })
	}
	clients.Wait()
	elapsed := time.Since(start)
	stopProgress()
	progress.Wait()
	stopWatching()
	watching.Wait()
	if cfg.watchesMode() {
		modes = append(append(modes, polled...), l.readMode(requestCtx))
	}

	stopped := stoppedRequests
	switch cause := context.Cause(stopCtx); {
	case cause == nil:
	case errors.Is(cause, errDurationReached):
		stopped = stoppedDuration
	case errors.Is(cause, errTooManyErrors):
		stopped = stoppedMaxErrors
	default:
		stopped = stoppedInterrupt
	}
	return outcome{workers: workers, began: start, elapsed: elapsed, stopped: stopped, modes: modes}
}

// drive is one client's loop.
func (l *load) drive(stopCtx, requestCtx context.Context, w *worker) {
	for stopCtx.Err() == nil {
		if l.cfg.requests > 0 && l.issued.Add(1) > l.cfg.requests {
			return
		}
		if l.cache != nil {
			l.take(requestCtx, w)
			continue
		}
		l.do(requestCtx, w)
	}
}

// do sends one request and records its outcome in w.
func (l *load) do(ctx context.Context, w *worker) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	// Values are taken with POST: net/http's transport sends a GET again when a
	// reused connection closes before the answer, which would take values unseen.
	method := http.MethodGet
	if l.cfg.target == targetSeq {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, w.url, nil)
	if err != nil {
		panic(err) // the URL was validated with the flags
	}
	if l.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.cfg.token)
	}

	start := time.Now()
	resp, err := l.client.Do(req)
	var body []byte
	if err == nil {
		// The worker's buffer, reused: a fresh one a response would make the
		// garbage collector seqload's busiest part at large counts.
		w.body.Reset()
		_, err = w.body.ReadFrom(io.LimitReader(resp.Body, l.maxBody))
		resp.Body.Close()
		body = w.body.Bytes()
	}
	end := time.Now()
	latency := end.Sub(start)
	w.requests++
	l.requests.Add(1)

	switch {
	case err != nil:
		l.fail(w, transportKind(err), err.Error())
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		l.fail(w, strconv.Itoa(resp.StatusCode), w.addr+": "+excerpt(body))
	default:
		if err := l.accept(w, body, start, end); err != nil {
			l.fail(w, kindInvalid, w.addr+": "+err.Error())
			return
		}
		w.ok++
		w.latencies = append(w.latencies, latency)
		l.values.Add(int64(l.cfg.perResponse()))
	}
}

// accept stores the values of a successful response, sent at start and read by end.
func (l *load) accept(w *worker, body []byte, start, end time.Time) (err error) {
	switch l.cfg.target {
	case targetOID:
		w.oids, err = decodeObjectIDs(w.oids, body, l.cfg.count > 0, l.cfg.perResponse())
		return err
	case targetUUID:
		w.uuids, err = decodeUUIDs(w.uuids, body, l.cfg.count > 0, l.cfg.perResponse())
		return err
	case targetSnowflake:
		w.snowflakes, err = decodeSnowflakes(w.snowflakes, body, l.cfg.count > 0, l.cfg.perResponse())
		return err
	}
	first, last, err := decodeSequence(body, l.seqWant)
	if err == nil {
		w.seqs = append(w.seqs, seqOp{start: start.Sub(l.began), end: end.Sub(l.began), first: first, last: last})
	}
	return err
}

func (l *load) fail(w *worker, kind, msg string) {
	w.errors[kind]++
	if _, ok := w.samples[kind]; !ok {
		w.samples[kind] = msg
	}
	if failed := l.failed.Add(1); l.cfg.maxErrors >= 0 && failed > l.cfg.maxErrors {
		l.stop(errTooManyErrors)
	}
}

func transportKind(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "transport"
}

// excerpt is the start of an answer's body, for a failure's message.
func excerpt(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// reportProgress prints the rates of the last interval until ctx is done.
func (l *load) reportProgress(ctx context.Context, out io.Writer, start time.Time) {
	tick := time.NewTicker(l.cfg.progress)
	defer tick.Stop()
	last, lastRequests, lastValues := start, int64(0), int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			requests, values := l.requests.Load(), l.values.Load()
			secs := now.Sub(last).Seconds()
			fmt.Fprintf(out, "%6.1fs %10.0f requests/s %12.0f values/s %8d errors\n",
				now.Sub(start).Seconds(), float64(requests-lastRequests)/secs,
				float64(values-lastValues)/secs, l.failed.Load())
			last, lastRequests, lastValues = now, requests, values
		}
	}
}
