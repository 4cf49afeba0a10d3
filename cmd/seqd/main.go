// Command seqd serves unique keys for MongoDB applications over HTTP: ObjectIds and
// monotonic integer sequences stored in MongoDB.
//
//	MONGODB_URI=mongodb://localhost:27017 seqd --addr 127.0.0.1:8080
//
// Every flag has an environment variable; a flag given on the command line wins.
// Tokens come only from the environment or from files, never from the command
// line, which every local user can read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	// The zone database is in seqd's binary, for hosts that have none (a scratch
	// image): time.LoadLocation reads ZONEINFO and the host's database first and
	// this copy last, so hosts whose databases differ in a zone's rules may
	// start that zone's periods differently.
	_ "time/tzdata"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/snowflake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // after the first signal, a second one ends seqd at once
	if err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // -h: the usage is what was asked for
		}
		fmt.Fprintln(os.Stderr, "seqd:", err)
		os.Exit(1)
	}
}

type config struct {
	addr, uri, db, strategy, logLevel string
	timeout, shutdownTimeout          time.Duration
	modeRefresh, blockLease           time.Duration
	tokens                            tokenSources
	keys                              tokenSet // all of them, as read at start
	allowedHosts                      []string
	metricsAddr                       string
	maxConns                          int // 0: from the file limit
	maxOptimistic                     int
	noCoalesce                        bool
	writesInFlight                    int
	rateLimit                         float64
	rateBurst                         int
	pprofAddr                         string
	snowflakeLayout                   snowflake.Layout
	pidFile                           string
}

// parseConfig reads flags, falling back to environment variables (lookupEnv, as
// os.LookupEnv), then to defaults.
func parseConfig(args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("seqd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(key, def string) string {
		if v, _ := lookupEnv(key); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.addr, "addr", env("SEQD_ADDR", "127.0.0.1:8080"), "listen address (SEQD_ADDR)")
	fs.StringVar(&c.uri, "mongodb-uri", env("MONGODB_URI", ""), "MongoDB connection string (MONGODB_URI)")
	fs.StringVar(&c.db, "db", env("SEQD_DB", "seqd"), "database name (SEQD_DB)")
	fs.StringVar(&c.strategy, "strategy", env("SEQD_STRATEGY", counters.StrategyCounter), "default sequence strategy: counter or optimistic (SEQD_STRATEGY)")
	var tokensFile, adminFile, rateLimit, rateBurst string
	// Tokens are never taken from the command line, which every local user sees
	// (ps, /proc): the flags exist only to say where a token goes instead.
	fs.String("tokens", "", "refused: put client tokens in SEQD_TOKENS (comma-separated, every name) or --tokens-file")
	fs.String("admin-token", "", "refused: put the admin token in SEQD_ADMIN_TOKEN or --admin-token-file")
	fs.StringVar(&tokensFile, "tokens-file", env("SEQD_TOKENS_FILE", ""), "file of client tokens, a line each: TOKEN SCOPE [SCOPE …], a scope a sequence name, a prefix ending in *, or * for every name; # comments; adds to SEQD_TOKENS; read again on SIGHUP (SEQD_TOKENS_FILE)")
	fs.StringVar(&adminFile, "admin-token-file", env("SEQD_ADMIN_TOKEN_FILE", ""), "file of admin tokens, as --tokens-file: TOKEN SCOPE [SCOPE …] a line; read again on SIGHUP (SEQD_ADMIN_TOKEN_FILE)")
	var allowedHosts, maxConns, maxOptimistic string
	fs.StringVar(&allowedHosts, "allowed-hosts", env("SEQD_ALLOWED_HOSTS", ""), "comma-separated host names seqd answers besides its listen address, localhost and IP addresses; other Host headers get 421; * for any on the API's address, not on --metrics-addr or --pprof-addr (SEQD_ALLOWED_HOSTS)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", env("SEQD_METRICS_ADDR", ""), "serve /metrics on this address, without a token, instead of on --addr (SEQD_METRICS_ADDR)")
	fs.StringVar(&maxConns, "max-conns", env("SEQD_MAX_CONNS", "0"), "open client connections at most; idle ones are closed first to make room; 0 is the process's file limit less what the store's connections need (SEQD_MAX_CONNS)")
	fs.StringVar(&maxOptimistic, "max-optimistic-sequences", env("SEQD_MAX_OPTIMISTIC_SEQUENCES", "1000"), "optimistic sequences (a collection each) the store may hold before a new one is refused with 409 (SEQD_MAX_OPTIMISTIC_SEQUENCES)")
	fs.StringVar(&rateLimit, "rate-limit", env("SEQD_RATE_LIMIT", "0"), "requests a second each client (token, else address) may make on /oid and /seq; 0 is no limit (SEQD_RATE_LIMIT)")
	fs.StringVar(&rateBurst, "rate-burst", env("SEQD_RATE_BURST", "0"), "requests a client may make at once above the rate; 0 means one second's worth (SEQD_RATE_BURST)")
	fs.StringVar(&c.logLevel, "log-level", env("SEQD_LOG_LEVEL", "info"), "debug, info, warn or error; successful requests are logged at debug (SEQD_LOG_LEVEL)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", env("SEQD_PPROF_ADDR", ""), "serve net/http/pprof on this address, apart from the API; off when empty (SEQD_PPROF_ADDR)")
	fs.StringVar(&c.pidFile, "pid-file", env("SEQD_PID_FILE", ""), "write seqd's process id to this file while it serves, for kill -HUP \"$(cat FILE)\"; removed at stop; a file naming another running process is refused (SEQD_PID_FILE)")
	var snowflakeLayout string
	fs.StringVar(&snowflakeLayout, "snowflake-layout", env("SEQD_SNOWFLAKE_LAYOUT", "twitter"), "the layout of /snowflake ids, for good: twitter (41 bits of ms, 1,024 worker ids, 4,096 ids/ms each) or js53 (at most 2^53-1: 40 bits of ms, 32 worker ids, 256 ids/ms each); worker ids are leased for --block-lease (SEQD_SNOWFLAKE_LAYOUT)")
	var timeout, shutdown, modeRefresh, blockLease, inFlight string
	fs.StringVar(&inFlight, "writes-in-flight", env("SEQD_WRITES_IN_FLIGHT", "1"), "coalesced writes of one strict sequence in flight at once, 1 to 64: more lets a batch go out while the one before it is still at the store, which pays only where the store's round trip is long beside its time per write (SEQD_WRITES_IN_FLIGHT)")
	fs.StringVar(&timeout, "timeout", env("SEQD_TIMEOUT", "2s"), "per-request backend deadline (SEQD_TIMEOUT)")
	fs.StringVar(&shutdown, "shutdown-timeout", env("SEQD_SHUTDOWN_TIMEOUT", "10s"), "how long in-flight requests may take to finish on shutdown (SEQD_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&modeRefresh, "mode-refresh", env("SEQD_MODE_REFRESH", "1s"), "how often an instance re-reads the mode of the sequences it serves from blocks, renewing their leases; a switch to cached reaches it within this plus a round trip (SEQD_MODE_REFRESH)")
	fs.StringVar(&blockLease, "block-lease", env("SEQD_BLOCK_LEASE", "15s"), "how long an instance serves a cached sequence from its blocks after the store last confirmed it cached: how long it rides out a store outage, and how long a switch from cached to strict waits; more than twice --mode-refresh (SEQD_BLOCK_LEASE)")
	// A bool flag, so that --no-coalesce alone means true; the environment is read
	// below, when the flag is not given.
	fs.BoolVar(&c.noCoalesce, "no-coalesce", false, "one backend write per sequence request instead of merging concurrent ones (SEQD_NO_COALESCE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if given(fs, "tokens") {
		return c, errors.New("--tokens: a token on the command line is shown to every local user (ps); put client tokens in SEQD_TOKENS or a --tokens-file")
	}
	if given(fs, "admin-token") {
		return c, errors.New("--admin-token: a token on the command line is shown to every local user (ps); put the admin token in SEQD_ADMIN_TOKEN or an --admin-token-file")
	}
	// A variable or a flag set to nothing names no file: refused, not read as
	// "no tokens" (a launcher's unset variable: --tokens-file "$TOKENS_FILE").
	for _, name := range []string{"SEQD_TOKENS_FILE", "SEQD_ADMIN_TOKEN_FILE"} {
		if v, ok := lookupEnv(name); ok && strings.TrimSpace(v) == "" {
			return c, fmt.Errorf("%s is set but empty; unset it, or name a file", name)
		}
	}
	for _, f := range []struct{ name, value string }{{"tokens-file", tokensFile}, {"admin-token-file", adminFile}} {
		if given(fs, f.name) && strings.TrimSpace(f.value) == "" {
			return c, fmt.Errorf("--%s is given but empty; leave it out, or name a file", f.name)
		}
	}
	var err error
	if c.timeout, err = positiveDuration("timeout", timeout); err != nil {
		return c, err
	}
	if c.shutdownTimeout, err = positiveDuration("shutdown-timeout", shutdown); err != nil {
		return c, err
	}
	if c.modeRefresh, err = positiveDuration("mode-refresh", modeRefresh); err != nil {
		return c, err
	}
	if c.blockLease, err = positiveDuration("block-lease", blockLease); err != nil {
		return c, err
	}
	if c.blockLease <= 2*c.modeRefresh {
		return c, fmt.Errorf("block-lease (%v) must be more than twice mode-refresh (%v): each refresh renews the leases", c.blockLease, c.modeRefresh)
	}
	if c.snowflakeLayout, err = snowflake.ParseLayout(snowflakeLayout); err != nil {
		return c, fmt.Errorf("snowflake-layout must be twitter or js53, got %q", snowflakeLayout)
	}
	if c.writesInFlight, err = strconv.Atoi(inFlight); err != nil || c.writesInFlight < 1 || c.writesInFlight > 64 {
		return c, fmt.Errorf("writes-in-flight must be a whole number from 1 to 64, got %q", inFlight)
	}
	if v, _ := lookupEnv("SEQD_NO_COALESCE"); v != "" && !given(fs, "no-coalesce") {
		if c.noCoalesce, err = strconv.ParseBool(v); err != nil {
			return c, fmt.Errorf("SEQD_NO_COALESCE must be true or false, got %q", v)
		}
	}
	if c.rateLimit, err = strconv.ParseFloat(rateLimit, 64); err != nil || c.rateLimit < 0 {
		return c, fmt.Errorf("rate-limit must be a number of requests a second, 0 or more, got %q", rateLimit)
	}
	if c.rateBurst, err = strconv.Atoi(rateBurst); err != nil || c.rateBurst < 0 {
		return c, fmt.Errorf("rate-burst must be a whole number, 0 or more, got %q", rateBurst)
	}
	c.tokens.clients, c.tokens.hasClients = lookupEnv("SEQD_TOKENS")
	c.tokens.admin, c.tokens.hasAdmin = lookupEnv("SEQD_ADMIN_TOKEN")
	c.tokens.clientFile, c.tokens.adminFile = tokensFile, adminFile
	if c.keys, err = c.tokens.load(); err != nil {
		return c, err
	}
	if allowedHosts != "" {
		for i, h := range strings.Split(allowedHosts, ",") {
			if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, " /\\@") {
				return c, fmt.Errorf("allowed-hosts: entry %d is not a host name", i+1)
			}
			c.allowedHosts = append(c.allowedHosts, h)
		}
	}
	if c.maxConns, err = strconv.Atoi(maxConns); err != nil || c.maxConns < 0 {
		return c, fmt.Errorf("max-conns must be a whole number, 0 or more, got %q", maxConns)
	}
	if room := defaultMaxConns(); c.maxConns > room {
		return c, fmt.Errorf("max-conns %d is more than the file limit (ulimit -n) leaves beside the store's %d connections, %d: seqd would run out of descriptors first; raise the limit", c.maxConns, storeConns, room)
	}
	if c.maxOptimistic, err = strconv.Atoi(maxOptimistic); err != nil || c.maxOptimistic < 1 {
		return c, fmt.Errorf("max-optimistic-sequences must be a whole number, 1 or more, got %q", maxOptimistic)
	}
	if c.strategy != counters.StrategyCounter && c.strategy != counters.StrategyOptimistic {
		return c, fmt.Errorf("strategy must be %s or %s, got %q", counters.StrategyCounter, counters.StrategyOptimistic, c.strategy)
	}
	if c.uri == "" {
		return c, errors.New("no MongoDB to talk to: set MONGODB_URI (or --mongodb-uri), or run `make run` to start a development store with seqd")
	}
	return c, nil
}

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func positiveDuration(name, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive duration such as 2s, got %q", name, s)
	}
	return d, nil
}

// maxHeaderBytes bounds a request's header (net/http adds 4 KB to it).
const maxHeaderBytes = 32 << 10

// sequencers returns both strategies over counter and optimistic, the one named
// strategy first: the first serves requests that name none.
func sequencers(counter *counters.Counter, optimistic *counters.Optimistic, strategy string) []counters.Sequencer {
	if strategy == counters.StrategyOptimistic {
		return []counters.Sequencer{optimistic, counter}
	}
	return []counters.Sequencer{counter, optimistic}
}

// run is seqd: it serves until ctx is done, then lets in-flight requests finish
// and disconnects from MongoDB.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, lookupEnv, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: level}))

	// Idle pooled connections are closed after 5 minutes, before a server or a
	// proxy that closes idle connections (the development store does at 10)
	// makes the first write after a pause fail on a dead connection.
	client, err := mongo.Connect(options.Client().ApplyURI(cfg.uri).SetAppName("seqd").SetMaxConnIdleTime(5 * time.Minute))
	if err != nil {
		return fmt.Errorf("mongodb: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := client.Disconnect(dctx); err != nil {
			log.Warn("mongodb disconnect", "err", err)
		}
	}()

	metrics := httpapi.NewMetrics(nil)
	db := client.Database(cfg.db)
	opts := counters.Options{NoCoalesce: cfg.noCoalesce, WritesInFlight: cfg.writesInFlight, Observer: metrics, ModeRefresh: cfg.modeRefresh, BlockLease: cfg.blockLease, Logger: log}
	counter, optimistic := counters.NewCounter(db, opts), counters.NewOptimistic(db, opts)
	// However run ends, once no request is served any more (and before the client
	// disconnects), give back the unused rest of cached sequences' blocks, so that
	// the next values follow the last ones handed out. It has its own deadline: a
	// shutdown that ran out of time must not cost the give-back.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		counter.Close(cctx) // it logs, in one line, what it gave back and what it could not
	}()
	// Snowflake worker ids are leased like cached blocks, for --block-lease; a
	// clean stop gives the worker id back once no request is served any more.
	lessor, err := snowflake.NewLessor(ctx, db, cfg.snowflakeLayout, snowflake.LeaseOptions{Lease: cfg.blockLease})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		if err := lessor.Close(cctx); err != nil {
			log.Warn("giving back the snowflake worker id", "err", err)
		}
	}()
	keys, err := httpapi.NewKeyring(cfg.keys.clients, cfg.keys.admins)
	if err != nil {
		return err
	}
	cfg.keys.logWarnings(log)
	// SIGHUP reads the token files again; requests in flight keep the tokens they
	// arrived under. Registered before serving: from then on a SIGHUP never ends seqd.
	hangup := make(chan os.Signal, 1)
	signal.Notify(hangup, syscall.SIGHUP)
	defer signal.Stop(hangup)
	reloadCtx, stopReloading := context.WithCancel(ctx)
	reloaded := make(chan struct{})
	go reloadOnHangup(reloadCtx, hangup, cfg.tokens, keys, metrics, log, reloaded)
	defer func() { stopReloading(); <-reloaded }()

	handler, err := httpapi.New(httpapi.Config{
		Sequencers:     sequencers(counter, optimistic, cfg.strategy),
		Ping:           func(ctx context.Context) error { return client.Ping(ctx, readpref.Primary()) },
		Timeout:        cfg.timeout,
		Keys:           keys,
		RateLimit:      cfg.rateLimit,
		RateBurst:      cfg.rateBurst,
		Logger:         log,
		Metrics:        metrics,
		Snowflake:      lessor.Generator(),
		SnowflakeLease: lessor.Status,

		ListenAddr:       cfg.addr,
		AllowedHosts:     cfg.allowedHosts,
		MetricsElsewhere: cfg.metricsAddr != "",
		Authenticated:    markAuthenticated,
		MaxOptimistic:    cfg.maxOptimistic,
		CountOptimistic: func(ctx context.Context) (int, error) {
			names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(counters.LedgerPrefix)}}}})
			return len(names), err
		},
	})
	if err != nil {
		return err
	}

	maxConns := cfg.maxConns
	if maxConns == 0 {
		if maxConns = defaultMaxConns(); maxConns == 0 {
			return fmt.Errorf("the file limit (ulimit -n) leaves too few descriptors for client connections beside the store's %d; raise it, or set --max-conns", storeConns)
		}
	}
	tcp, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	// An unauthenticated connection waits for its next request as long as for its
	// first (ReadHeaderTimeout).
	ln := newConnLimit(tcp, maxConns, 5*time.Second)
	srv := &http.Server{
		Handler:           handler,
		ConnState:         ln.connState,
		ConnContext:       connContext,
		ReadHeaderTimeout: 5 * time.Second,
		// 32 KB, nginx's default (4 buffers of 8 KB), not net/http's 1 MB: a
		// connection that is sending its header costs what its header holds.
		MaxHeaderBytes: maxHeaderBytes,
		ReadTimeout:    10 * time.Second,
		WriteTimeout:   cfg.timeout + 10*time.Second,
		IdleTimeout:    2 * time.Minute,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if cfg.pidFile != "" {
		removePIDFile, err := writePIDFile(cfg.pidFile)
		if err != nil {
			ln.Close()
			return err
		}
		defer removePIDFile()
	}
	clientTokens, adminTokens := keys.Counts()
	log.Info("listening", "addr", ln.Addr().String(), "db", cfg.db, "strategy", cfg.strategy,
		"client_tokens", clientTokens, "admin_tokens", adminTokens, "coalesce", !cfg.noCoalesce, "writes_in_flight", cfg.writesInFlight,
		"rate_limit", cfg.rateLimit, "max_conns", maxConns)

	if cfg.metricsAddr != "" {
		stopMetrics, err := serveApart("metrics-addr", cfg.metricsAddr, "metrics", metricsMux(metrics.Handler()), cfg.allowedHosts, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopMetrics()
	}
	if cfg.pprofAddr != "" {
		stopProfiling, err := serveProfiling(cfg.pprofAddr, cfg.allowedHosts, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopProfiling()
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	<-served
	log.Info("stopped")
	return nil
}
