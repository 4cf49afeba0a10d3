package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	targetOID       = "oid"
	targetUUID      = "uuid"
	targetSnowflake = "snowflake"
	targetSeq       = "seq"
)

// Strategy names as the API spells them. They are not taken from package counters, which
// links the MongoDB driver: seqload speaks HTTP only and builds with the standard library.
const (
	strategyCounter    = "counter"
	strategyOptimistic = "optimistic"
)

// config is the parsed command line.
type config struct {
	addrs            []string // base URLs, without a trailing slash
	target           string   // targetOID, targetUUID, targetSnowflake or targetSeq
	count            int      // values per request; 0 sends no count parameter
	layout           string   // oid only
	name             string   // seq only
	strategy         string   // seq only; "" lets the server choose
	clients          int
	duration         time.Duration // 0: no time bound
	requests         int64         // 0: no request bound
	timeout          time.Duration // per request
	token            string
	expectContiguous bool
	ranges           string        // seq only: file for the values received, as ranges
	mode             string        // seq only: "strict" or "cached", set before the load; "" leaves it
	adminToken       string        // for -mode
	modePoll         time.Duration // seq: how often the mode is read during the load; 0: before and after only
	clientCache      bool          // seq only: take values from the Go client's local cache
	maxErrors        int64         // -1: no bound
	json             bool
	progress         time.Duration // 0: no progress lines
}

// usageError is a command line that cannot run; main exits 2 for it.
// reported says the flag package has printed it already.
type usageError struct {
	msg      string
	reported bool
}

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// addrList is the -addr flag: repeatable, each value a comma-separated list.
type addrList struct {
	addrs []string
	set   bool // the first -addr replaces the default
}

func (l *addrList) String() string { return strings.Join(l.addrs, ",") }

func (l *addrList) Set(v string) error {
	if !l.set {
		l.addrs, l.set = nil, true
	}
	for a := range strings.SplitSeq(v, ",") {
		base, err := normalizeAddr(a)
		if err != nil {
			return err
		}
		l.addrs = append(l.addrs, base)
	}
	return nil
}

// normalizeAddr turns "host:port" or a URL into a base URL such as "http://host:port".
// A path is kept, for a seqd behind a prefix.
func normalizeAddr(a string) (string, error) {
	a = strings.TrimSpace(a)
	if a == "" {
		return "", errors.New("empty address")
	}
	if !strings.Contains(a, "://") {
		a = "http://" + a
	}
	u, err := url.Parse(a)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("address %q: want http://host:port", a)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("address %q: no query or fragment, please", a)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("seqload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: seqload [flags]

Sends requests to seqd from concurrent clients, then checks that no value came twice;
that each client's ObjectIds or UUIDs increase; and, for sequences, real-time order
across all clients and addresses: a request sent after another was answered must
receive larger values.

  seqload -addr localhost:8080 -c 16 -d 10s
  seqload -target seq -name orders -count 100 -strategy counter -expect-contiguous -n 10000
  seqload -addr http://a:8080,http://b:8080 -target oid -count 1000 -json
  seqload -target uuid -count 100 -c 32 -d 10s
  seqload -target seq -name orders -mode cached -admin-token "$ADMIN" -client-cache -c 8 -d 10s

flags:
`)
		fs.PrintDefaults()
	}
	addrs := addrList{addrs: []string{"http://localhost:8080"}}
	fs.Var(&addrs, "addr", "seqd base `URL`s, comma-separated or repeated; clients are spread round-robin over them")
	fs.StringVar(&c.target, "target", targetOID, "what to request: oid (GET /oid), uuid (GET /uuid), snowflake (GET /snowflake) or seq (GET /seq/{name}/next)")
	fs.IntVar(&c.count, "count", 0, "values per request, sent as ?count=N (default: no count parameter, one value)")
	fs.StringVar(&c.layout, "layout", "", "oid: ObjectId layout, sent as &layout= (e.g. legacy)")
	fs.StringVar(&c.name, "name", "seqload", "seq: sequence name")
	fs.StringVar(&c.strategy, "strategy", "", "seq: counter or optimistic (default: the server's)")
	fs.IntVar(&c.clients, "c", 8, "concurrent clients")
	fs.DurationVar(&c.duration, "d", 10*time.Second, "how long to send requests; with -n and no -d, no time bound")
	fs.Int64Var(&c.requests, "n", 0, "how many requests to send in all (0: until -d)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "bound on each request")
	fs.StringVar(&c.token, "token", "", "bearer token, sent as Authorization: Bearer …")
	fs.StringVar(&c.mode, "mode", "", "seq: put the sequence in this mode, strict or cached, on every address before the load (needs -admin-token)")
	fs.StringVar(&c.adminToken, "admin-token", "", "seqd's admin token, for -mode")
	fs.DurationVar(&c.modePoll, "mode-poll", 250*time.Millisecond,
		"seq: how often to read the sequence's mode during the load, to judge each request by its mode's promise; shorter than the block lease (0: before and after the load only)")
	fs.BoolVar(&c.clientCache, "client-cache", false, "seq: the clients are goroutines taking values from one Go client's local cache (package client), of one -addr")
	fs.BoolVar(&c.expectContiguous, "expect-contiguous", false, "seq: fail unless the values received form one run without gaps")
	fs.StringVar(&c.ranges, "ranges", "", "seq: write the values received to this `file`, as ascending ranges \"first last\" one a line")
	fs.Int64Var(&c.maxErrors, "max-errors", -1, "stop and fail once more than this many requests have failed; -1: never")
	fs.BoolVar(&c.json, "json", false, "print the summary as one JSON object")
	fs.DurationVar(&c.progress, "progress", time.Second, "interval of the progress lines on stderr (0: none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, usageError{msg: err.Error(), reported: true}
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected arguments: %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.addrs = addrs.addrs
	if set["n"] && !set["d"] {
		c.duration = 0
	}

	for i, a := range c.addrs {
		if slices.Contains(c.addrs[:i], a) {
			return c, usagef("-addr %s: given twice", a)
		}
	}
	switch {
	case len(c.addrs) == 0:
		return c, usagef("-addr: no address")
	case c.target != targetOID && c.target != targetUUID && c.target != targetSnowflake && c.target != targetSeq:
		return c, usagef("-target %q: want oid, uuid, snowflake or seq", c.target)
	case set["count"] && c.count < 1:
		return c, usagef("-count %d: want at least 1", c.count)
	case c.clients < len(c.addrs):
		return c, usagef("-c %d: want at least one client per address (%d)", c.clients, len(c.addrs))
	case c.duration < 0 || c.requests < 0 || c.timeout <= 0 || c.progress < 0 || c.modePoll < 0:
		return c, usagef("-d, -n, -timeout, -progress and -mode-poll cannot be negative, and -timeout not zero")
	case c.duration == 0 && c.requests == 0:
		return c, usagef("no bound: give -d or -n")
	}
	if c.target != targetSeq {
		for _, f := range []string{"name", "strategy", "expect-contiguous", "ranges", "mode", "client-cache", "mode-poll"} {
			if set[f] {
				return c, usagef("-%s applies to -target seq only", f)
			}
		}
		if c.target != targetOID && set["layout"] {
			return c, usagef("-layout applies to -target oid only")
		}
	} else {
		if set["layout"] {
			return c, usagef("-layout applies to -target oid only")
		}
		if c.name == "" {
			return c, usagef("-name: empty") // any other name is the server's to judge
		}
		if c.strategy != "" && c.strategy != strategyCounter && c.strategy != strategyOptimistic {
			return c, usagef("-strategy %q: want %s or %s", c.strategy, strategyCounter, strategyOptimistic)
		}
		if c.mode != "" && c.mode != "strict" && c.mode != "cached" || c.mode != "" && c.adminToken == "" {
			return c, usagef("-mode %q: want strict or cached, with -admin-token", c.mode)
		}
		if c.clientCache && (len(c.addrs) > 1 || c.strategy != "" && c.strategy != strategyCounter) {
			return c, usagef("-client-cache takes one -addr, and the counter strategy: the Go client asks for the server's")
		}
	}
	return c, nil
}

// path is the request path and query, the same for every address.
func (c *config) path() string {
	q := url.Values{}
	if c.count > 0 {
		q.Set("count", strconv.Itoa(c.count))
	}
	var p string
	if c.target == targetOID {
		p = "/oid"
		if c.layout != "" {
			q.Set("layout", c.layout)
		}
	} else if c.target == targetUUID {
		p = "/uuid"
	} else if c.target == targetSnowflake {
		p = "/snowflake"
	} else if c.clientCache {
		return fmt.Sprintf("/seq/%s/next through the Go client's cache, NextN(%d)", url.PathEscape(c.name), c.perResponse())
	} else {
		p = "/seq/" + url.PathEscape(c.name) + "/next"
		if c.strategy != "" {
			q.Set("strategy", c.strategy)
		}
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// perResponse is how many values a successful response carries.
func (c *config) perResponse() int { return max(c.count, 1) }
