package httpapi

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// noStore marks a response uncacheable: a GET that hands out a value must never be
// served from a cache.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return next(c)
	}
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
			if err := next(c); err != nil {
				c.Error(err)
			}
			status := c.Response().Status
			level := slog.LevelDebug
			if status >= 400 {
				level = slog.LevelInfo
			}
			ctx := c.Request().Context()
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
