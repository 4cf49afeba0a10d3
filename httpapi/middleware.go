package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/objectid"
)

// observe is what every request passes through, outermost first:
//
//   - every answer is marked X-Content-Type-Options: nosniff, and every /oid, /uuid,
//     /snowflake, /seq and /status response no-store, errors and Echo's own OPTIONS and 405
//     answers included: a GET that hands out a value must never be served from a
//     cache, nor a status that is old the moment it is read; /status is also
//     Referrer-Policy: no-referrer;
//   - a request with a body that no handler reads (every route but PUT
//     /seq/{name}, and a PUT refused before its body is read) is answered with
//     Connection: close, and its connection stops reading once the answer is
//     written: else net/http reads the rest of the body, before it answers and
//     after, until ReadTimeout (10 s in seqd), and a client that never sends it
//     holds a busy connection that long, which the connection cap cannot close
//     to make room;
//   - the request gets an id, in X-Request-Id and the logs: the client's own when it
//     is short and plain, else a new ObjectId;
//   - a panic becomes a 500, logged with its stack;
//   - an error is written here, so that its status is known: a client that left
//     before its answer gets 499 (nginx's), not a backend failure;
//   - the request is counted and timed (Metrics), and logged: at Info when it
//     failed, at Debug when it succeeded, which keeps the log quiet and cheap at high
//     request rates. Headers, and so tokens, are never logged, nor the path of a
//     request the token checks refused (401, 403), whose name may lie outside
//     its caller's scope: its route instead.
//
// One middleware rather than five because Echo composes the middleware chain anew
// for every request, a closure each.
func observe(log *slog.Logger, m *Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			r, h := c.Request(), c.Response().Header()
			h[echo.HeaderXContentTypeOptions] = noSniffValue
			if p := r.URL.Path; strings.HasPrefix(p, "/oid") || strings.HasPrefix(p, "/uuid") || strings.HasPrefix(p, "/snowflake") || strings.HasPrefix(p, "/seq") || p == "/status" {
				h[echo.HeaderCacheControl] = noStoreValue // shared: Set would allocate
				if p == "/status" {
					h[echo.HeaderReferrerPolicy] = noReferrerValue // its links carry no name away
				}
			}
			unread := r.ContentLength != 0 && (r.Method != http.MethodPut || c.Path() != "/seq/:name")
			if unread {
				h[echo.HeaderConnection] = closeValue
			}
			ctx := r.Context()

			if err := serveRecovering(c, next, log); err != nil {
				if ctx.Err() != nil {
					err = errClientGone // the client went away: not the backend's failure
				}
				if r.ContentLength != 0 { // a PUT refused may not have read its body
					unread = true
					h[echo.HeaderConnection] = closeValue
				}
				c.Error(err)
			}
			if unread {
				// Written, with Connection: close: what is left of the body is read by no one.
				http.NewResponseController(c.Response()).SetReadDeadline(time.Now())
			}
			elapsed := time.Since(start)
			m.observeRequest(c, elapsed)

			status := c.Response().Status
			level := slog.LevelDebug
			if status >= 400 {
				level = slog.LevelInfo
			}
			if log.Enabled(ctx, level) {
				path := r.URL.Path
				if status == http.StatusUnauthorized || status == http.StatusForbidden {
					path = c.Path() // the route: a name the caller may not use stays out of the log
				}
				attrs := []slog.Attr{
					slog.String("request_id", requestID(c)),
					slog.String("method", r.Method),
					slog.String("path", prefix(path, maxLoggedPath)),
					slog.Int("status", status),
					slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
					slog.String("remote", c.RealIP()),
				}
				if code, ok := c.Get(errorCodeKey).(string); ok {
					attrs = append(attrs, slog.String("code", code))
				}
				log.LogAttrs(ctx, level, "request", attrs...)
			}
			return nil
		}
	}
}

// chain composes a route's middleware with its handler, mw[0] outermost, once,
// when the route is added. Given to e.GET and the like, they are composed anew
// for every request, a closure each: five of the eighteen allocations of a
// /seq/{name}/next (BenchmarkHandler/seq-next in cmd/seqbench).
func chain(h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// deadline bounds the backend work of a request to timeout from when it starts,
// as middleware.ContextTimeout does, and as cheaply as the request allows: the
// bound's timer starts only when something waits for it (lazyDeadline), so a
// request answered from memory, a cached sequence's value, pays for no timer.
// A handler's DeadlineExceeded is the error table's unavailable, 503.
func deadline(timeout time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			ctx := &lazyDeadline{Context: r.Context(), deadline: time.Now().Add(timeout)}
			defer ctx.release()
			c.SetRequest(r.WithContext(ctx))
			return next(c)
		}
	}
}

// lazyDeadline is its Context with a deadline whose timer starts when something
// first waits: Done, or a context derived from it, which calls Done. Until then,
// Deadline and Err answer from the clock. context.Cause of one whose deadline
// passed while nobody waited is its parent's cause, not DeadlineExceeded.
type lazyDeadline struct {
	context.Context // the request's
	deadline        time.Time
	once            sync.Once
	armed           atomic.Pointer[context.Context] // the timer's, from the first wait on
	cancel          context.CancelFunc
}

func (c *lazyDeadline) arm() context.Context {
	c.once.Do(func() {
		ctx, cancel := context.WithDeadline(c.Context, c.deadline)
		c.cancel = cancel
		c.armed.Store(&ctx)
	})
	return *c.armed.Load()
}

// release ends c, as the cancel of context.WithDeadline does: its timer, if it
// started, stops, and from now on c is done, with Canceled.
func (c *lazyDeadline) release() {
	c.once.Do(func() { c.armed.Store(&released) })
	if c.cancel != nil {
		c.cancel()
	}
}

// released is what a lazyDeadline released before anything waited on it answers.
var released = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *lazyDeadline) Done() <-chan struct{} { return c.arm().Done() }

func (c *lazyDeadline) Err() error {
	if armed := c.armed.Load(); armed != nil {
		return (*armed).Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// AfterFunc lets a context derived from c wait on c's timer without a goroutine
// of its own, as it would on a context package's own context.
func (c *lazyDeadline) AfterFunc(f func()) (stop func() bool) { return context.AfterFunc(c.arm(), f) }

var (
	noStoreValue    = []string{"no-store"}
	noSniffValue    = []string{"nosniff"} // every answer: JSON is never run as a script or page
	noReferrerValue = []string{"no-referrer"}
	closeValue      = []string{"close"}
)

// maxLoggedPath bounds the path in an access log line: a client may send a very long
// one, and the start is enough to find it.
const maxLoggedPath = 256

// serveRecovering gives the request its id and calls next, and turns a panic in
// either into an error, logged with its stack. The id is made inside the recovery
// because making one reads the clock, and objectid panics on a reading past 2106:
// that must cost one request a 500, not every request its connection.
// http.ErrAbortHandler is let through: it is net/http's way to abort.
func serveRecovering(c echo.Context, next echo.HandlerFunc, log *slog.Logger) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		if err, _ = p.(error); err == nil {
			err = fmt.Errorf("%v", p)
		}
		err = fmt.Errorf("panic: %w", err)
		log.Error("panic", "request_id", requestID(c), "err", err, "stack", string(debug.Stack()))
	}()
	rid := c.Request().Header.Get(echo.HeaderXRequestID)
	if !plainID(rid) {
		rid = newRequestID()
	}
	c.Response().Header()[echo.HeaderXRequestID] = []string{rid}
	return next(c)
}

// newRequestID makes the id of a request that brought none; tests replace it.
var newRequestID = func() string { return objectid.New().Hex() }

// errClientGone answers a request whose client closed the connection before the
// answer was ready; no one reads it, but logs and metrics do.
var errClientGone = &Error{Code: "client_closed_request", Message: "the client closed the request"}

// plainID reports whether s is 1 to 64 characters of [A-Za-z0-9._:-].
func plainID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
