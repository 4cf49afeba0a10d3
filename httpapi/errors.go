package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/objectid"
	"github.com/seqd/seqd/snowflake"
	"github.com/seqd/seqd/uuidv7"
)

// Error is a request the API refuses: a code, whose status the codes table gives,
// and a message for the API's users.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// errorf returns an *Error with code and a formatted message.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// codes is the one table from error codes to HTTP statuses: whoever refuses a
// request names a code, and its status is found here.
var codes = map[string]int{
	"bad_request":       http.StatusBadRequest,
	"invalid_body":      http.StatusBadRequest,
	"invalid_count":     http.StatusBadRequest,
	"invalid_force":     http.StatusBadRequest,
	"invalid_after":     http.StatusBadRequest,
	"invalid_id":        http.StatusBadRequest,
	"invalid_int64":     http.StatusBadRequest,
	"invalid_layout":    http.StatusBadRequest,
	"invalid_limit":     http.StatusBadRequest,
	"invalid_mode":      http.StatusBadRequest,
	"invalid_name":      http.StatusBadRequest,
	"invalid_prefix":    http.StatusBadRequest,
	"invalid_query":     http.StatusBadRequest,
	"invalid_sort":      http.StatusBadRequest,
	"invalid_strategy":  http.StatusBadRequest,
	"invalid_time":      http.StatusBadRequest,
	"invalid_uuid":      http.StatusBadRequest,
	"invalid_value":     http.StatusBadRequest,
	"unknown_parameter": http.StatusBadRequest,

	"unauthorized":   http.StatusUnauthorized,
	"admin_disabled": http.StatusForbidden,
	"forbidden":      http.StatusForbidden,
	"cross_site":     http.StatusForbidden,

	"not_found":          http.StatusNotFound,
	"sequence_not_found": http.StatusNotFound,
	"method_not_allowed": http.StatusMethodNotAllowed,

	"backwards":      http.StatusConflict,
	"exhausted":      http.StatusConflict,
	"sequence_limit": http.StatusConflict,

	"misdirected_host": http.StatusMisdirectedRequest,

	"body_too_large":         http.StatusRequestEntityTooLarge,
	"unsupported_media_type": http.StatusUnsupportedMediaType,
	"too_many_requests":      http.StatusTooManyRequests,
	// nginx's: a client that left before its answer; no one reads it, but logs
	// and metrics do, and it is not the backend's failure.
	"client_closed_request": 499,

	"internal": http.StatusInternalServerError,
	// A stored record that another client wrote: the operator must see what was found.
	"invalid_counter": http.StatusInternalServerError,
	"contention":      http.StatusServiceUnavailable,
	"draining":        http.StatusServiceUnavailable,
	"unavailable":     http.StatusServiceUnavailable,
}

// statusOf returns the status of code; a code missing from the table is a bug in
// seqd, so it is answered as one.
func statusOf(code string) int {
	if status, ok := codes[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// domainErrors turn the domain's errors into codes and messages. Entries are tried
// in order with errors.Is. The message is written for the API's users, not taken
// from the Go error, whose text starts with the package and operation ("counters:
// current \"x\": …"). Rows marked detail add what the domain says after the sentinel
// ("at 10, asked for 5"); the others add nothing and the rest goes to the log.
var domainErrors = []struct {
	err     error
	code    string
	message string
	detail  bool // add what the domain says after the sentinel
}{
	{counters.ErrInvalidName, "invalid_name", "invalid sequence name", true},
	{counters.ErrInvalidCount, "invalid_count", "invalid count", true},
	{counters.ErrInvalidValue, "invalid_value", "invalid value", true},
	{counters.ErrInvalidMode, "invalid_mode", "invalid mode", true},
	{objectid.ErrInvalidID, "invalid_id", "invalid ObjectId", true},
	{uuidv7.ErrInvalidUUID, "invalid_uuid", "invalid UUID", true},
	{snowflake.ErrInvalidID, "invalid_id", "invalid snowflake id", true},
	{snowflake.ErrExhausted, "exhausted", "past the snowflake layout's last millisecond", false},
	{snowflake.ErrNoWorker, "unavailable", "no snowflake worker id held", true},
	{snowflake.ErrClockBehind, "unavailable", "the clock is behind the last snowflake id", true},
	{counters.ErrNotFound, "sequence_not_found", "sequence not found", true},
	{counters.ErrBackwards, "backwards", "the sequence would move backwards (PUT with ?force=true to do it on purpose)", true},
	{counters.ErrExhausted, "exhausted", "sequence exhausted", true},
	{counters.ErrContention, "contention", "too much contention on this sequence", false},
	{counters.ErrDraining, "draining", "the sequence is leaving cached mode", true},
	{counters.ErrUnavailable, "unavailable", "backend unavailable", false},
	{counters.ErrInvalidCounter, "invalid_counter", "the sequence's stored record is not one seqd can use", true},
	{context.DeadlineExceeded, "unavailable", "backend unavailable: no answer within the request deadline", false},
	{context.Canceled, "unavailable", "backend unavailable", false}, // the client left
}

// echoCodes are the codes of the errors Echo itself produces (routing, body limit,
// request deadline, ...), found by their status in the codes table.
var echoCodes = func() map[int]string {
	byStatus := make(map[int]string)
	for _, code := range []string{
		"bad_request", "unauthorized", "forbidden", "not_found", "method_not_allowed", "body_too_large",
		"unsupported_media_type", "too_many_requests", "internal", "unavailable",
	} {
		byStatus[codes[code]] = code
	}
	return byStatus
}()

// answer is what the client sees of an error.
type answer struct {
	status        int
	code, message string
}

// classify turns any error a handler returns into what the client sees.
func classify(err error) answer {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return answer{statusOf(apiErr.Code), apiErr.Code, cut(apiErr.Message)}
	}
	for _, e := range domainErrors {
		if errors.Is(err, e.err) {
			msg := e.message
			if e.detail {
				msg += detailAfter(err, e.err)
			}
			return answer{statusOf(e.code), e.code, cut(msg)}
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		// Echo's message for a 5xx may carry internals; its status text does not.
		msg := http.StatusText(he.Code)
		if s, ok := he.Message.(string); ok && he.Code < 500 {
			msg = s
		}
		if code, ok := echoCodes[he.Code]; ok {
			return answer{statusOf(code), code, cut(msg)}
		}
		// A status the table does not name keeps Echo's status, with a generic code.
		code := "error"
		if he.Code >= 500 {
			code = "internal"
		}
		return answer{he.Code, code, cut(msg)}
	}
	return answer{statusOf("internal"), "internal", "internal error"}
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
		c.Set(errorCodeKey, e.code) // for the access log
		if e.status >= 500 {
			m.backendErrors.WithLabelValues(e.code).Inc()
			log.Error("request failed", "request_id", requestID(c), "status", e.status, "code", e.code,
				"err", internalText(err))
		}
		h := c.Response().Header()
		// An error is never worth caching, on any path.
		h.Set(echo.HeaderCacheControl, "no-store")
		switch e.status {
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			h.Set("Retry-After", strconv.Itoa(retryAfter(err)))
		case http.StatusUnauthorized:
			h.Add("WWW-Authenticate", `Bearer realm="seqd"`) // after the status page's Basic
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(e.status)
			return
		}
		_ = c.JSON(e.status, errorBody{errorDetail{Code: e.code, Message: e.message}})
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

// retryAfterSeconds is what 503 and 429 answers ask clients to wait, unless
// the error says how long (a sequence leaving cached mode).
const retryAfterSeconds = 1

// retryAfter is the Retry-After of an answer to err, in whole seconds, at least 1.
func retryAfter(err error) int {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		return max(int(math.Ceil(r.RetryAfter().Seconds())), 1)
	}
	return retryAfterSeconds
}
