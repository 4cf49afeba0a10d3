package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/seqd/seqd"
)

// Error is a request seqd refused, as it answered it: {"error":{"code","message"}}
// with an HTTP status. It unwraps to the seqd sentinel of its code, or to nil for
// a code without one (unauthorized, forbidden, too_many_requests, internal, …).
//
// An answer that is not seqd's JSON (a proxy's error page, another service's) is an
// Error too, with an empty Code and a Message saying what came; it unwraps to
// seqd.ErrUnavailable.
type Error struct {
	Status  int    // the HTTP status
	Code    string // seqd's error code; empty for an answer that is not seqd's
	Message string // seqd's message, for people
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("seqd answered %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("seqd answered %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the sentinels of e's code, so that errors.Is(err, seqd.ErrNotFound)
// holds for a sequence_not_found answer. A sequence leaving cached mode (draining)
// is seqd.ErrDraining and seqd.ErrUnavailable.
func (e *Error) Unwrap() []error {
	switch e.Code {
	case "":
		return []error{seqd.ErrUnavailable}
	case "draining":
		return []error{seqd.ErrDraining, seqd.ErrUnavailable}
	}
	if err := sentinels[e.Code]; err != nil {
		return []error{err}
	}
	return nil
}

// sentinels maps the API's error codes back to the errors seqd's libraries return.
var sentinels = map[string]error{
	"invalid_name":       seqd.ErrInvalidName,
	"invalid_count":      seqd.ErrInvalidCount,
	"invalid_value":      seqd.ErrInvalidValue,
	"invalid_mode":       seqd.ErrInvalidMode,
	"invalid_period":     seqd.ErrInvalidMode, // a numbering, like a mode, is how a sequence hands out values
	"invalid_time_zone":  seqd.ErrInvalidMode,
	"invalid_format":     seqd.ErrInvalidMode,
	"sequence_not_found": seqd.ErrNotFound,
	"exhausted":          seqd.ErrExhausted,
	"backwards":          seqd.ErrBackwards,
	"contention":         seqd.ErrContention,
	"unavailable":        seqd.ErrUnavailable,
	"invalid_counter":    seqd.ErrInvalidCounter,
}

// errorAnswer reads a refusal: seqd's JSON error, or an Error that says the answer
// is not one.
func errorAnswer(status int, h http.Header, body []byte) *Error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		return &Error{Status: status, Code: e.Error.Code, Message: e.Error.Message}
	}
	return notSeqd(status, h, body, "no seqd error in the body")
}

// notSeqd is an answer that is not seqd's JSON: why, and what came instead, cut
// short.
func notSeqd(status int, h http.Header, body []byte, why string) *Error {
	ct := h.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	if ct == "" {
		ct = "no Content-Type"
	}
	return &Error{Status: status, Message: fmt.Sprintf("not seqd's answer (%s; %s): %s", why, ct, excerpt(body))}
}

// excerpt quotes the start of body, for a message.
func excerpt(body []byte) string {
	const max = 120
	if len(body) == 0 {
		return "empty body"
	}
	if len(body) <= max {
		return strconv.Quote(string(body))
	}
	n := max
	for n > 0 && !utf8.RuneStart(body[n]) {
		n--
	}
	return strconv.Quote(string(body[:n])) + fmt.Sprintf("… (%d bytes)", len(body))
}
