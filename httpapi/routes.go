package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/seqd/seqd/snowflake"
)

// maxBody bounds request bodies; the only body the API reads is PUT /seq/{name}'s.
// Echo reads "4K" as 4000 bytes; the limit is 4 KiB.
const maxBody = "4KiB"

// addRoutes lists the whole API. Each route's middleware is composed with its
// handler once, here (chain).
func addRoutes(e *echo.Echo, cfg Config, seqs sequencers) {
	m := cfg.Metrics
	keys := cfg.Keys

	e.Use(observe(cfg.Logger, m)) // nosniff, no-store, request ids, panics, errors, metrics, logs
	e.Use(hostCheck(newHostNames(cfg.ListenAddr, cfg.AllowedHosts)))

	// The rate limit runs before the token checks, so that guessing tokens and
	// floods of refused requests are limited too (by address).
	var client, admin, page []echo.MiddlewareFunc
	if limit := rateLimit(keys, cfg.RateLimit, cfg.RateBurst); limit != nil {
		client, admin, page = append(client, limit), append(admin, limit), append(page, limit)
	}
	// The token checks leave the token's scope in the context: inScope refuses a
	// name outside it, and a listing lists only names in it. The status page
	// takes a token from a browser's Basic prompt too (requirePage).
	client, admin, page = append(client, keys.requireClient), append(admin, keys.requireAdmin, inScope), append(page, keys.requirePage)
	if cfg.Authenticated != nil {
		hook := authenticated(cfg.Authenticated)
		client, admin, page = append(client, hook), append(admin, hook), append(page, hook)
	}
	timeout := deadline(cfg.Timeout)
	// Another site's page must not even time the status page (pageOnly).
	page = append([]echo.MiddlewareFunc{pageOnly}, append(page, timeout)...)
	backend := append(client[:len(client):len(client)], timeout)
	named := append(client[:len(client):len(client)], inScope, timeout)
	// What spends or changes a value refuses a browser's cross-site request
	// first: a page must not spend values even where tokens are off.
	spend := append([]echo.MiddlewareFunc{sameOrigin}, named...)
	admin = append([]echo.MiddlewareFunc{sameOrigin}, append(admin, timeout)...)

	e.GET("/oid", chain(newOIDs(m), client...))
	e.GET("/oid/:hex", chain(decodeOID, client...))
	e.GET("/oid/at/:time", chain(oidRange, client...))

	e.GET("/uuid", chain(newUUIDs(m), client...))
	e.GET("/uuid/:uuid", chain(decodeUUID, client...))
	e.GET("/uuid/at/:time", chain(uuidRange, client...))

	layout := snowflake.Twitter
	if cfg.Snowflake != nil {
		layout = cfg.Snowflake.Layout()
	}
	e.GET("/snowflake", chain(newSnowflakes(cfg.Snowflake), client...))
	e.GET("/snowflake/:id", chain(decodeSnowflake(layout), client...))
	e.GET("/snowflake/at/:time", chain(snowflakeRange(layout), client...))

	e.GET("/seq", chain(listSequences(seqs), backend...))
	e.GET("/seq/:name", chain(currentValue(seqs), named...))
	// Only PUT reads a body; net/http bounds what it drains of other requests' bodies.
	e.PUT("/seq/:name", chain(putSequence(seqs), append(admin, middleware.BodyLimit(maxBody))...))
	e.GET("/seq/:name/next", chain(nextValues(seqs, m), spend...))
	e.POST("/seq/:name/next", chain(nextValues(seqs, m), spend...))
	e.GET("/seq/:name/status", chain(sequenceStatus(seqs), named...))
	e.GET("/status", chain(statusPageHandler(seqs, layout, cfg.SnowflakeLease), page...))

	// Load balancers probe with HEAD as often as with GET. Routes that hand out
	// values refuse HEAD (405): a probe must not spend a value.
	probe := []string{http.MethodGet, http.MethodHead}
	e.Match(probe, "/healthz", healthz(layout, cfg.SnowflakeLease))
	e.Match(probe, "/readyz", chain(readyz(newStoreCheck(cfg.Ping, cfg.Timeout, cfg.ReadyInterval)), timeout))
	if !cfg.MetricsElsewhere {
		e.GET("/metrics", chain(echo.WrapHandler(m.Handler()), keys.requireMetrics))
	}
	e.GET("/openapi.json", openAPI)
}
