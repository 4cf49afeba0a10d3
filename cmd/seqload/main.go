// Command seqload is a load generator for seqd that also checks what seqd hands out.
//
// Clients (-c) send requests over keep-alive connections, one at a time each, until -d has
// passed or -n requests have been sent, whichever comes first. A progress line goes to
// stderr every second; at the end a summary goes to stdout: requests, values, rates,
// latency percentiles and failed requests by status. Then every value received is checked:
//
//   - No value was received twice, across all clients and all addresses. With several
//     -addr this is the multi-instance check: seqd processes must not overlap.
//   - ObjectIds (-target oid) and version 7 UUIDs (-target uuid): each client's ids
//     strictly increase, within a response and from one response to the next. A client
//     keeps to one address, and only ids from one address are compared: a process's ids
//     are ordered, ids of two processes are not. A UUID must be lowercase, version 7.
//   - Sequences (-target seq): real-time order, as far as the sequence's mode promises it.
//     Each request's send and answer times are recorded; a request sent after another was
//     answered must receive larger values. In strict mode (and with -strategy optimistic)
//     that holds whichever clients and addresses the two went through: what a linearizable
//     counter promises, and what several seqd instances on one store must keep. In cached
//     mode each instance hands out values from blocks of its own, so it holds among the
//     requests of one address only; with -client-cache, among all, since one Go client's
//     cache serves them. Requests in flight at the same time may be served in either
//     order. The mode is read from the server with GET /seq/{name} (first address) before
//     the load, every -mode-poll during it and after it (where a reading gets no answer,
//     -mode stands in, if given, and otherwise cached's promise is checked), and a
//     sequence switched during the load is judged by the mode in force when each request
//     was answered: requests answered while it was strict, against every earlier answer;
//     the others, per address. The summary says which promise it checked. Package
//     internal/history holds the checks.
//   - Sequences with -expect-contiguous: the values received form one run with no value
//     missing (reported: min, max, how many are missing and where). A failed request may
//     have reserved values all the same, so gaps are only checked when asked for.
//
// With -mode strict or -mode cached (and -admin-token), seqload first puts the sequence
// in that mode on every address (PUT /seq/{name}), then loads it.
//
// With -client-cache (sequences, one -addr) the clients are goroutines sharing one Go
// client (package client) with its local cache of blocks: each request is a NextN call,
// most of them answered from memory. The checks are the same: one cache hands out its
// values in real-time order.
//
// With -ranges FILE, a sequence run also writes every value it received to FILE as
// ascending ranges, "first last" one a line (internal/history), so that the values of
// several seqload processes can be checked for uniqueness together.
//
// Examples:
//
//	seqload -addr localhost:8080 -c 16 -d 10s
//	seqload -count 1000 -layout legacy -n 5000
//	seqload -target uuid -c 32 -d 10s
//	seqload -target seq -name orders -strategy counter -count 100 -expect-contiguous -d 30s
//	seqload -addr http://a:8080,http://b:8080 -c 32 -json | jq .values_per_s
//	seqload -target seq -name orders -mode cached -admin-token "$ADMIN" -client-cache -c 8 -d 10s
//
// Clients are given addresses round-robin: with -addr a,b client 0 talks to a, client 1 to
// b, client 2 to a, and so on; every address needs one client at least.
//
// # Stopping
//
// seqload always stops by itself. Once the time is up, -n requests are out, or on SIGINT or
// SIGTERM, it sends no more requests and waits for those in flight, each bounded by
// -timeout: a sequence request abandoned half-way may have reserved values that would then
// show as a gap. The summary covers everything answered. A second SIGINT exits at once.
//
// # Output
//
// Progress lines on stderr give, for the last second, requests/s and values/s, and the
// failed requests so far. The summary on stdout gives the request path, each address with
// its clients, requests, failures and values, how the run stopped and after how long,
// requests (ok + failed), values, rates, latency p50/p90/p99/max, failed requests by kind
// with the first message of each, distinct values and duplicates, the promise checked
// (seq), order violations (oid: within a client; seq: of real-time order, where the
// promise binds), the sequence's min, max and missing count (seq), each failure, and PASS
// or FAIL.
//
// With -json it is one JSON object on one line instead, with the fields target, path,
// addrs [{addr, clients, requests, failed, values}], clients, stopped ("duration",
// "requests", "interrupt" or "max-errors"), elapsed_s, requests, ok, failed, values,
// requests_per_s, values_per_s, latency_p50_ms, latency_p90_ms, latency_p99_ms,
// latency_max_ms, errors {kind: count}, error_samples {kind: message}, distinct,
// duplicates, order_violations, sequence {name, strategy, min, max, missing} (seq only),
// promise (seq only: the mode or modes read, and what was checked), passed and failures
// [message]:
//
//	seqload -d 5s -json | jq '{rps: .requests_per_s, p99: .latency_p99_ms}'
//
// Values are ObjectIds, UUIDs or sequence values received in successful responses. Failed
// requests are counted by kind: the HTTP status ("503"), "timeout", "transport" (no
// response) or "invalid" (a 2xx response that breaks the API's promises: a malformed id,
// a wrong count, first..value not matching count).
//
// Latency percentiles (nearest rank) are exact: every successful request's latency is
// kept, 8 bytes each, and sorted at the end. A histogram would round p99 to a bucket edge.
// Failed requests are left out, lest fast 503s flatter the figures.
//
// # Memory
//
// Everything received is kept until the end, in slices the garbage collector need not
// scan: 12 bytes per ObjectId, 16 per UUID; 32 bytes per successful sequence request (its send and
// answer times and its first and last value, however many values it carried). The
// id check sorts each client's ids in place and merges them, so it needs no copy;
// the sequence check adds 48 bytes per request while it runs (96 for a cached sequence,
// checked per address as well; about 400 while a run with a switch of mode is judged:
// BenchmarkVerifySequence). Growth and the collector's
// headroom come on top: 20 million ObjectIds took 700 MB resident with the default
// GOGC=100, 470 MB with GOGC=25, which costs some CPU while the live heap is small.
//
// # Exit status
//
// 0 when every check passed; 1 on a duplicate, an order or contiguity failure, an invalid
// response, when no request succeeded, or with -max-errors N when more than N requests
// failed (the run then stops early); 2 for a bad command line. Other failed requests are
// counted, not fatal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		if !usage.reported {
			fmt.Fprintln(os.Stderr, "seqload:", err)
		}
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "seqload:", err)
		os.Exit(1)
	}
}

// run parses args, runs the load, prints the summary and returns an error when a check failed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	// The first signal stops the load and lets the summary print; after it, the default
	// behaviour is back, so a second one ends the process.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)

	if cfg.mode != "" {
		if err := setMode(ctx, cfg); err != nil {
			return err
		}
	}
	out := runLoad(ctx, cfg, stderr)
	s := summarize(cfg, out)
	if cfg.json {
		err = s.writeJSON(stdout)
	} else {
		err = s.writeText(stdout)
	}
	if err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	if cfg.ranges != "" {
		if err := writeRanges(cfg.ranges, out); err != nil {
			return err
		}
	}
	if !s.Passed {
		errs := make([]error, len(s.Failures))
		for i, f := range s.Failures {
			errs[i] = errors.New(f)
		}
		return errors.Join(errs...)
	}
	return nil
}
