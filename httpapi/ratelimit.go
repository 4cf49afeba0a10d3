package httpapi

import (
	"encoding/hex"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"
)

// rateLimit returns a middleware that gives each client its own token bucket of
// perSecond requests a second with bursts of burst, answering 429 with Retry-After
// past it. A client is its token when tokens are configured (checked before this
// runs), else its address, so one caller cannot starve the rest. perSecond ≤ 0 turns
// limiting off.
//
// A request rate, not a concurrency cap: every request costs seqd about the same
// whatever its count (a range is one write), so requests are what to share out,
// and a bucket keeps its promise however slow the backend is.
func rateLimit(k *Keyring, perSecond float64, burst int) echo.MiddlewareFunc {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = max(1, int(perSecond))
	}
	store := middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(perSecond), Burst: burst, ExpiresIn: 3 * time.Minute,
	})
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               store,
		IdentifierExtractor: k.clientKey,
		DenyHandler: func(echo.Context, string, error) error {
			return errRateLimited
		},
	})
}

var errRateLimited = &Error{Code: "too_many_requests", Message: "rate limit exceeded for this client; retry after the Retry-After delay"}

// clientKey names the client a request comes from: a digest of its token when that
// is a configured one (the token itself is never kept), else its remote address.
func (k *Keyring) clientKey(c echo.Context) (string, error) {
	if e, digest := k.keys.Load().identify(c.Request()); e != nil {
		return "t:" + hex.EncodeToString(digest[:16]), nil
	}
	return "a:" + c.RealIP(), nil
}
