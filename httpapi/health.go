package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/snowflake"
)

type status struct {
	Status string `json:"status"`
}

// health is GET /healthz's answer: the process serves, and its snowflake
// layout and worker id lease.
type health struct {
	Status    string          `json:"status"`
	Snowflake snowflakeHealth `json:"snowflake"`
}

type snowflakeHealth struct {
	Layout string `json:"layout"`
	Worker *int   `json:"worker,omitempty"` // the worker id held; none while it holds none
	Until  string `json:"until,omitempty"`  // when its lease runs out unless renewed, by this process's clock
}

// healthz answers 200 while the process serves, with the snowflake layout and
// the worker id held (lease, nil for none known).
func healthz(layout snowflake.Layout, lease func() snowflake.LeaseStatus) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodHead {
			return answerStatus(c, "ok")
		}
		return c.JSON(http.StatusOK, health{Status: "ok", Snowflake: snowflakeHealthOf(layout, lease)})
	}
}

// snowflakeHealthOf is the layout, and the worker id held and until when,
// for /healthz and the status page.
func snowflakeHealthOf(layout snowflake.Layout, lease func() snowflake.LeaseStatus) snowflakeHealth {
	h := snowflakeHealth{Layout: layout.String()}
	if lease != nil {
		if s := lease(); s.Held {
			h.Worker = &s.Worker
			h.Until = s.Until.UTC().Format(uuidTimeLayout)
		}
	}
	return h
}

// answerStatus writes {"status": s} with 200, or only the status line and headers
// to HEAD.
func answerStatus(c echo.Context, s string) error {
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(http.StatusOK)
	}
	return c.JSON(http.StatusOK, status{s})
}

// readyz answers 200 when the backend answered its last ping (storeCheck).
func readyz(check *storeCheck) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := check.wait(c.Request().Context()); err != nil {
			return fmt.Errorf("readyz: %w: %w", counters.ErrUnavailable, err)
		}
		return answerStatus(c, "ready")
	}
}

// storeCheck pings the store at most once an interval, however often /readyz is
// asked: /readyz is open to anyone, and a ping a request let a flood of probes
// take the store's time from the clients. Every request in an interval shares
// that interval's ping, waiting for it if it is still out.
type storeCheck struct {
	ping     func(context.Context) error
	timeout  time.Duration // of one ping
	interval time.Duration
	now      func() time.Time // tests replace it

	mu   sync.Mutex
	last *pingResult // the newest ping, nil before the first
}

// pingResult is one ping: err is set before done is closed.
type pingResult struct {
	started time.Time
	done    chan struct{}
	err     error
}

func newStoreCheck(ping func(context.Context) error, timeout, interval time.Duration) *storeCheck {
	if interval <= 0 {
		interval = time.Second
	}
	return &storeCheck{ping: ping, timeout: timeout, interval: interval, now: time.Now}
}

// wait returns the result of the interval's ping, starting one if the last began
// an interval ago or more. The ping runs apart from ctx, bounded by the timeout,
// so that a caller who leaves does not fail the others sharing it.
func (s *storeCheck) wait(ctx context.Context) error {
	s.mu.Lock()
	p := s.last
	if now := s.now(); p == nil || now.Sub(p.started) >= s.interval {
		p = &pingResult{started: now, done: make(chan struct{})}
		s.last = p
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		go func() {
			defer cancel()
			p.err = s.ping(pctx)
			close(p.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
