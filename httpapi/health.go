package httpapi

import (
	"context"
	"fmt"
	"net/http"

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

// readyz answers 200 when the backend answers a ping within the request deadline.
func readyz(ping func(context.Context) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := ping(c.Request().Context()); err != nil {
			return fmt.Errorf("readyz: %w: %w", counters.ErrUnavailable, err)
		}
		return answerStatus(c, "ready")
	}
}
