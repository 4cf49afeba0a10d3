package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
)

type status struct {
	Status string `json:"status"`
}

// healthz answers 200 while the process serves.
func healthz(c echo.Context) error {
	return answerStatus(c, "ok")
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
