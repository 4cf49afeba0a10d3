package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/objectid"
)

// Error is a request the API refuses, with the status and code the client sees.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func badRequest(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

// domainErrors is the one table from the domain's errors to HTTP statuses and codes.
// Entries are tried in order with errors.Is. Client errors show the error's text;
// server-side ones show only the sentinel's text and log the rest.
var domainErrors = []struct {
	err    error
	status int
	code   string
}{
	{counters.ErrInvalidName, http.StatusBadRequest, "invalid_name"},
	{counters.ErrInvalidCount, http.StatusBadRequest, "invalid_count"},
	{counters.ErrInvalidValue, http.StatusBadRequest, "invalid_value"},
	{objectid.ErrInvalidID, http.StatusBadRequest, "invalid_id"},
	{counters.ErrNotFound, http.StatusNotFound, "sequence_not_found"},
	{counters.ErrBackwards, http.StatusConflict, "backwards"},
	{counters.ErrExhausted, http.StatusConflict, "exhausted"},
	{counters.ErrContention, http.StatusServiceUnavailable, "contention"},
	{counters.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{counters.ErrInvalidCounter, http.StatusInternalServerError, "invalid_counter"},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "unavailable"},
	{context.Canceled, http.StatusServiceUnavailable, "unavailable"}, // the client left
}

// echoCodes names the statuses Echo itself produces (routing, body limit, ...).
var echoCodes = map[int]string{
	http.StatusBadRequest:            "bad_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusRequestEntityTooLarge: "body_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusTooManyRequests:       "too_many_requests",
	http.StatusServiceUnavailable:    "unavailable",
}

// classify turns any error a handler returns into what the client sees.
func classify(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	for _, e := range domainErrors {
		if errors.Is(err, e.err) {
			msg := e.err.Error()
			if e.status < 500 {
				msg = err.Error()
			}
			return &Error{Status: e.status, Code: e.code, Message: msg}
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code, ok := echoCodes[he.Code]
		if !ok {
			code = "error"
		}
		msg := http.StatusText(he.Code)
		if s, ok := he.Message.(string); ok && he.Code < 500 {
			msg = s
		}
		if he.Code >= 500 {
			code = "internal"
			if he.Code == http.StatusServiceUnavailable {
				code = "unavailable"
			}
		}
		return &Error{Status: he.Code, Code: code, Message: msg}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorHandler writes every error as {"error":{"code","message"}}; it is Echo's
// HTTPErrorHandler. It logs and counts server-side failures. 503s carry Retry-After, 401s WWW-Authenticate.
func errorHandler(log *slog.Logger, m *Metrics) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		e := classify(err)
		if e.Status >= 500 {
			m.backendErrors.WithLabelValues(e.Code).Inc()
			log.Error("request failed", "request_id", requestID(c), "status", e.Status, "err", err)
		}
		h := c.Response().Header()
		// An error is never worth caching, on any path.
		h.Set(echo.HeaderCacheControl, "no-store")
		switch e.Status {
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		case http.StatusUnauthorized:
			h.Set("WWW-Authenticate", `Bearer realm="seqd"`)
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(e.Status)
			return
		}
		_ = c.JSON(e.Status, errorBody{errorDetail{Code: e.Code, Message: e.Message}})
	}
}

// retryAfterSeconds is what 503 and 429 answers ask clients to wait.
const retryAfterSeconds = 1
