package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

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

// domainErrors is the one table from the domain's errors to HTTP statuses, codes and
// messages. Entries are tried in order with errors.Is. The message is written for the
// API's users, not taken from the Go error, whose text starts with the package and
// operation ("counters: current \"x\": …"). Rows marked detail add what the domain
// says after the sentinel ("at 10, asked for 5"); the others add nothing and the
// rest goes to the log.
var domainErrors = []struct {
	err     error
	status  int
	code    string
	message string
	detail  bool // add what the domain says after the sentinel
}{
	{counters.ErrInvalidName, http.StatusBadRequest, "invalid_name", "invalid sequence name", true},
	{counters.ErrInvalidCount, http.StatusBadRequest, "invalid_count", "invalid count", true},
	{counters.ErrInvalidValue, http.StatusBadRequest, "invalid_value", "invalid value", true},
	{objectid.ErrInvalidID, http.StatusBadRequest, "invalid_id", "invalid ObjectId", true},
	{counters.ErrNotFound, http.StatusNotFound, "sequence_not_found", "sequence not found", true},
	{counters.ErrBackwards, http.StatusConflict, "backwards", "the sequence would move backwards (PUT with ?force=true to do it on purpose)", true},
	{counters.ErrExhausted, http.StatusConflict, "exhausted", "sequence exhausted", true},
	{counters.ErrContention, http.StatusServiceUnavailable, "contention", "too much contention on this sequence", false},
	{counters.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "backend unavailable", false},
	// A stored record that another client wrote: the operator must see what was found.
	{counters.ErrInvalidCounter, http.StatusInternalServerError, "invalid_counter", "the sequence's stored record is not one seqd can use", true},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "unavailable", "backend unavailable: no answer within the request deadline", false},
	{context.Canceled, http.StatusServiceUnavailable, "unavailable", "backend unavailable", false}, // the client left
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
		return &Error{Status: apiErr.Status, Code: apiErr.Code, Message: cut(apiErr.Message)}
	}
	for _, e := range domainErrors {
		if errors.Is(err, e.err) {
			msg := e.message
			if e.detail {
				msg += detailAfter(err, e.err)
			}
			return &Error{Status: e.status, Code: e.code, Message: cut(msg)}
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
		return &Error{Status: he.Code, Code: code, Message: cut(msg)}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

// detailAfter returns what err's text says after sentinel's, such as ": at 10, asked
// for 5", or "" when the sentinel ends it. What comes before names the Go package,
// operation and arguments, which the client already knows.
func detailAfter(err, sentinel error) string {
	text, s := err.Error(), sentinel.Error()
	if i := strings.LastIndex(text, s); i >= 0 {
		return text[i+len(s):]
	}
	return ""
}

// Echoed input is cut short: it shows a client what was wrong, and a long one
// would only make the answer and its log line as long.
const (
	maxEcho    = 64  // bytes of one echoed value
	maxMessage = 512 // bytes of a whole message
)

// quoted quotes s for a message, cut to its first maxEcho bytes.
func quoted(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(prefix(s, maxEcho)) + fmt.Sprintf("… (%d bytes)", len(s))
}

// cut returns s, or its first maxMessage bytes and an ellipsis.
func cut(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return prefix(s, maxMessage) + "…"
}

// prefix returns at most n bytes of s, cut at a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// jsonProblem says what is wrong with a body encoding/json could not decode, without
// the package's words ("json: cannot unmarshal … into Go value of type …").
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return "got a JSON " + typeErr.Value
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
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
		c.Set(errorCodeKey, e.Code) // for the access log
		if e.Status >= 500 {
			m.backendErrors.WithLabelValues(e.Code).Inc()
			log.Error("request failed", "request_id", requestID(c), "status", e.Status, "code", e.Code,
				"err", internalText(err))
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

// errorCodeKey holds, in the echo.Context, the code of the error the request got.
const errorCodeKey = "seqd.error_code"

// internalText is err as the log shows it: Echo's own wrapping ("code=503,
// message=…, internal=…", from the request deadline) is taken off, so that every
// failure reads the same way, from the innermost error that says what happened.
func internalText(err error) string {
	var he *echo.HTTPError
	for errors.As(err, &he) && he.Internal != nil {
		err = he.Internal
	}
	return err.Error()
}

// retryAfterSeconds is what 503 and 429 answers ask clients to wait.
const retryAfterSeconds = 1
