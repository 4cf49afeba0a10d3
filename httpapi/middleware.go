package httpapi

import (
	"log/slog"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/seqd/seqd/objectid"
)

// noStore marks every /oid and /seq response uncacheable, errors and Echo's own
// OPTIONS and 405 answers included: a GET that hands out a value must never be served
// from a cache. It runs before routing.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Request().URL.Path; strings.HasPrefix(p, "/oid") || strings.HasPrefix(p, "/seq") {
			c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		}
		return next(c)
	}
}

// errClientGone answers a request whose client closed the connection before the
// answer was ready (nginx's 499); no one reads it, but logs and metrics do.
var errClientGone = &Error{Status: 499, Code: "client_closed_request", Message: "the client closed the request"}

// requestIDs gives every request an id, in X-Request-Id on the response and in the
// logs: the client's own when it sent a short plain one, else a new ObjectId.
func requestIDs(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rid := c.Request().Header.Get(echo.HeaderXRequestID)
		if !plainID(rid) {
			rid = objectid.New().Hex()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, rid)
		return next(c)
	}
}

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

// accessLog writes the error response itself (so the status is known) and logs one
// line per request: at Info for failures, at Debug for successes, which keeps the
// log quiet and cheap at high request rates. Headers, and so tokens, are never logged.
func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			ctx := c.Request().Context()
			if err := next(c); err != nil {
				if ctx.Err() != nil {
					// The client went away: not the backend's failure, and nobody to tell.
					err = errClientGone
				}
				c.Error(err)
			}
			status := c.Response().Status
			level := slog.LevelDebug
			if status >= 400 {
				level = slog.LevelInfo
			}
			if !log.Enabled(ctx, level) {
				return nil
			}
			r := c.Request()
			log.LogAttrs(ctx, level, "request",
				slog.String("request_id", requestID(c)),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Duration("duration", time.Since(start)),
				slog.String("remote", c.RealIP()),
			)
			return nil
		}
	}
}

// recoverPanics turns a panic into a 500 and logs it, with its stack, as JSON.
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("panic", "request_id", requestID(c), "err", err, "stack", string(stack))
			return err
		},
	})
}
