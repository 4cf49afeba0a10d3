package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
)

// With -client-cache the clients are goroutines sharing one Go client (package
// client) with its local cache: each "request" is a NextN call, most of them served
// from a block in memory, some waiting for the request that reserves the next block.
// One cache hands out its values in real-time order, which is what the sequence
// check asks of them; two caches need not, so -client-cache takes one address.

// newCache returns the Go client, with its cache, of cfg's one address.
func newCache(cfg config, hc *http.Client) (*client.Client, error) {
	opts := []client.Option{client.WithHTTPClient(hc), client.WithCache(blocks.Options{})}
	if cfg.token != "" {
		opts = append(opts, client.WithToken(cfg.token))
	}
	return client.New(cfg.addrs[0], opts...)
}

// take takes the next values from the cache and records the outcome in w.
func (l *load) take(ctx context.Context, w *worker) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	start := time.Now()
	r, err := l.cache.NextN(ctx, l.cfg.name, int64(l.cfg.perResponse()))
	end := time.Now()
	w.requests++
	l.requests.Add(1)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		l.fail(w, "timeout", err.Error())
	case err != nil:
		l.fail(w, "client", err.Error())
	case r.Last-r.First+1 != int64(l.cfg.perResponse()):
		l.fail(w, kindInvalid, fmt.Sprintf("NextN(%d) returned %d..%d", l.cfg.perResponse(), r.First, r.Last))
	default:
		w.seqs = append(w.seqs, seqOp{start: start.Sub(l.began), end: end.Sub(l.began), first: r.First, last: r.Last})
		w.ok++
		w.latencies = append(w.latencies, end.Sub(start))
		l.values.Add(int64(l.cfg.perResponse()))
	}
}
