// Package httpapi serves seqd's HTTP API: ObjectIds, sequences and their modes,
// status pages, health and metrics.
//
// Echo stays inside this package. New builds the handler from its dependencies;
// routes.go lists the whole API.
package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/snowflake"
)

// Config holds what the API needs. Sequencers and Ping are required.
type Config struct {
	// Sequencers serve /seq, one per strategy; ?strategy= picks one by its
	// Strategy(). The first serves requests that name none.
	Sequencers []counters.Sequencer
	// Ping reports whether the backend answers; /readyz calls it at most once a
	// ReadyInterval (zero: a second), and every /readyz in between gets its answer.
	Ping          func(ctx context.Context) error
	ReadyInterval time.Duration
	// Timeout bounds each request's backend work; zero means 2s.
	Timeout time.Duration
	// Tokens, when not empty, are the client tokens /oid, /uuid, /snowflake, /seq
	// and /status require; an empty one among them is an error.
	Tokens []string
	// AdminToken, when not empty, enables PUT /seq/{name} for requests that present it.
	AdminToken string
	// Keys, when set, holds the tokens, with their scopes, in place of Tokens and
	// AdminToken (which must then be empty); Keys.Set changes them while serving.
	// It must come from NewKeyring: a zero Keyring is an error.
	Keys *Keyring
	// RateLimit is how many requests a second each client may make on /oid, /uuid,
	// /seq and /status (a client is its token, else its address); RateBurst how many at
	// once above that (zero: one second's worth). Zero RateLimit is no limit.
	RateLimit float64
	RateBurst int
	// ListenAddr is the address seqd listens on: its host is a Host name seqd
	// serves, besides localhost, IP addresses and AllowedHosts ("*": any).
	// Other Host headers get 421.
	ListenAddr   string
	AllowedHosts []string
	// MetricsElsewhere means /metrics is served apart (Metrics.Handler), not here.
	// Here, while client tokens are in force, it needs an admin token of every name.
	MetricsElsewhere bool
	// Authenticated, when set, is called with each request the token checks let
	// through (every request to a client route while no client token is in force).
	Authenticated func(*http.Request)
	// MaxOptimistic bounds how many optimistic sequences the store may hold, as
	// CountOptimistic counts them; a new name past it is refused with 409
	// sequence_limit. Zero is no bound.
	MaxOptimistic   int
	CountOptimistic func(context.Context) (int, error)
	// Logger receives JSON request logs; nil discards them.
	Logger *slog.Logger
	// Metrics records Prometheus metrics; nil creates a fresh registry.
	Metrics *Metrics
	// Snowflake makes the ids of /snowflake; nil answers 503 there. Its layout
	// decodes /snowflake/{id} (Twitter without one).
	Snowflake *snowflake.Generator
	// SnowflakeLease reports the worker id Snowflake holds, for /healthz; nil
	// for none to report (a fixed worker id).
	SnowflakeLease func() snowflake.LeaseStatus
}

// New returns the API as an http.Handler.
func New(cfg Config) (http.Handler, error) {
	if cfg.Ping == nil {
		return nil, fmt.Errorf("httpapi: Ping is required")
	}
	if cfg.MaxOptimistic > 0 {
		if cfg.CountOptimistic == nil {
			return nil, fmt.Errorf("httpapi: MaxOptimistic needs CountOptimistic")
		}
		list := slices.Clone(cfg.Sequencers)
		for i, seq := range list {
			if seq != nil && seq.Strategy() == counters.StrategyOptimistic {
				list[i] = newBoundedLedgers(seq, cfg.MaxOptimistic, cfg.CountOptimistic)
			}
		}
		cfg.Sequencers = list
	}
	seqs, err := newSequencers(cfg.Sequencers)
	if err != nil {
		return nil, err
	}
	if cfg.Keys == nil {
		var admins []Token
		if cfg.AdminToken != "" {
			admins = []Token{{Secret: cfg.AdminToken}}
		}
		clients := make([]Token, len(cfg.Tokens))
		for i, t := range cfg.Tokens {
			clients[i].Secret = t
		}
		if cfg.Keys, err = NewKeyring(clients, admins); err != nil {
			return nil, err
		}
	} else if len(cfg.Tokens) > 0 || cfg.AdminToken != "" {
		return nil, fmt.Errorf("httpapi: Keys and Tokens or AdminToken are both set")
	} else if cfg.Keys.keys.Load() == nil {
		return nil, fmt.Errorf("httpapi: Keys holds no tokens in force: make it with NewKeyring")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(cfg.Logger, cfg.Metrics)
	// Clients are who connects: X-Forwarded-For and X-Real-IP are the client's to
	// write, so they must not pick the rate-limit bucket.
	e.IPExtractor = echo.ExtractIPDirect()
	addRoutes(e, cfg, seqs)
	return e, nil
}
