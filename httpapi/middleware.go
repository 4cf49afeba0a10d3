package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
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
