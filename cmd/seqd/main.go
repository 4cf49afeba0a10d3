// Command seqd serves unique keys for MongoDB applications over HTTP: ObjectIds and
// monotonic integer sequences stored in MongoDB.
//
//	MONGODB_URI=mongodb://localhost:27017 seqd --addr 127.0.0.1:8080
//
// Every flag has an environment variable; a flag given on the command line wins.
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
	"strconv"
	"strings"
	"syscall"
	"time"

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
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
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
	tokens                            []string // --tokens
	adminToken                        string   // --admin-token
	tokensFile, adminFile             string
	keys                              tokenSet // all of them, as read at start
	noCoalesce                        bool
	writesInFlight                    int
	rateLimit                         float64
	rateBurst                         int
	pprofAddr                         string
	snowflakeLayout                   snowflake.Layout
}

// parseConfig reads flags, falling back to environment variables, then to defaults.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("seqd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.addr, "addr", env("SEQD_ADDR", "127.0.0.1:8080"), "listen address (SEQD_ADDR)")
	fs.StringVar(&c.uri, "mongodb-uri", env("MONGODB_URI", ""), "MongoDB connection string (MONGODB_URI)")
	fs.StringVar(&c.db, "db", env("SEQD_DB", "seqd"), "database name (SEQD_DB)")
	fs.StringVar(&c.strategy, "strategy", env("SEQD_STRATEGY", counters.StrategyCounter), "default sequence strategy: counter or optimistic (SEQD_STRATEGY)")
	var tokens, tokensFile, adminFile, rateLimit, rateBurst string
	fs.StringVar(&tokens, "tokens", env("SEQD_TOKENS", ""), "comma-separated client tokens; when set, /oid and /seq need one (SEQD_TOKENS)")
	fs.StringVar(&tokensFile, "tokens-file", env("SEQD_TOKENS_FILE", ""), "file of client tokens, a line each: TOKEN [SCOPE …], a scope a sequence name, a prefix ending in * or *, none for every name; # comments; adds to --tokens; read again on SIGHUP (SEQD_TOKENS_FILE)")
	fs.StringVar(&c.adminToken, "admin-token", env("SEQD_ADMIN_TOKEN", ""), "admin token; PUT /seq/{name} is disabled without it (SEQD_ADMIN_TOKEN)")
	fs.StringVar(&adminFile, "admin-token-file", env("SEQD_ADMIN_TOKEN_FILE", ""), "file of admin tokens, as --tokens-file: TOKEN [SCOPE …] a line; read again on SIGHUP (SEQD_ADMIN_TOKEN_FILE)")
	fs.StringVar(&rateLimit, "rate-limit", env("SEQD_RATE_LIMIT", "0"), "requests a second each client (token, else address) may make on /oid and /seq; 0 is no limit (SEQD_RATE_LIMIT)")
	fs.StringVar(&rateBurst, "rate-burst", env("SEQD_RATE_BURST", "0"), "requests a client may make at once above the rate; 0 means one second's worth (SEQD_RATE_BURST)")
	fs.StringVar(&c.logLevel, "log-level", env("SEQD_LOG_LEVEL", "info"), "debug, info, warn or error; successful requests are logged at debug (SEQD_LOG_LEVEL)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", env("SEQD_PPROF_ADDR", ""), "serve net/http/pprof on this address, apart from the API; off when empty (SEQD_PPROF_ADDR)")
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
	if v := getenv("SEQD_NO_COALESCE"); v != "" && !given(fs, "no-coalesce") {
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
	for _, t := range strings.Split(tokens, ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.tokens = append(c.tokens, t)
		}
	}
	c.tokensFile, c.adminFile = tokensFile, adminFile
	if c.keys, err = c.tokenSources().load(); err != nil {
		return c, err
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

// tokenSources are where c's tokens come from.
func (c config) tokenSources() tokenSources {
	return tokenSources{clients: c.tokens, admin: c.adminToken, clientFile: c.tokensFile, adminFile: c.adminFile}
}

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
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
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
	opts := counters.Options{NoCoalesce: cfg.noCoalesce, WritesInFlight: cfg.writesInFlight, Observer: metrics, ModeRefresh: cfg.modeRefresh, BlockLease: cfg.blockLease}
	counter, optimistic := counters.NewCounter(db, opts), counters.NewOptimistic(db, opts)
	// However run ends, once no request is served any more (and before the client
	// disconnects), give back the unused rest of cached sequences' blocks, so that
	// the next values follow the last ones handed out. It has its own deadline: a
	// shutdown that ran out of time must not cost the give-back.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		if err := counter.Close(cctx); err != nil {
			log.Warn("giving back cached blocks", "err", err)
		}
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
	// SIGHUP reads the token files again; requests in flight keep the tokens they
	// arrived under. Registered before serving: from then on a SIGHUP never ends seqd.
	hangup := make(chan os.Signal, 1)
	signal.Notify(hangup, syscall.SIGHUP)
	defer signal.Stop(hangup)
	reloadCtx, stopReloading := context.WithCancel(ctx)
	reloaded := make(chan struct{})
	go reloadOnHangup(reloadCtx, hangup, cfg.tokenSources(), keys, log, reloaded)
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
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      cfg.timeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	clientTokens, adminTokens := keys.Counts()
	log.Info("listening", "addr", ln.Addr().String(), "db", cfg.db, "strategy", cfg.strategy,
		"client_tokens", clientTokens, "admin_tokens", adminTokens, "coalesce", !cfg.noCoalesce, "writes_in_flight", cfg.writesInFlight,
		"rate_limit", cfg.rateLimit)

	if cfg.pprofAddr != "" {
		stopProfiling, err := serveProfiling(cfg.pprofAddr, log)
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
