package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// Sequences run to 2^63-1, and a JSON number that large is exact in Go, but not in
// JavaScript, whose numbers are doubles: JSON.parse rounds every integer past
// 2^53-1 (Number.MAX_SAFE_INTEGER) to the nearest double, so that two values
// handed out apart can read as one. A client that cannot hold 64-bit integers
// asks with ?int64=string, on every /seq endpoint: the answer then writes each
// int64 field as its decimal string (as proto3's JSON mapping writes int64). The
// default stays numbers, so that no answer changes for the clients that read them
// well (Go, curl, jq -r). A PUT body may give its integers as strings whatever
// the parameter says, and must past 2^53-1 (bodyInt).
//
// A query parameter rather than a media-type parameter or extra *_str fields: it
// is one word in the URL, visible in logs, typed by every client generator as an
// enum parameter (openapi-fetch reads no Accept parameters), and with it the lossy
// number is not in the answer at all, rather than next to its string for a reader
// to pick the wrong one.

// int64Fields are the fields of /seq answers that hold int64s; rate and
// last_fetch_ms are float64s and stay numbers.
var int64Fields = map[string]bool{
	"value": true, "first": true, "count": true, // /next
	"min_block": true, "max_block": true, // a sequence
	"reserved": true, "served": true, "returned": true, "unaccounted": true, // its block counts
	"last": true, "remaining": true, "block_size": true, "skipped": true, // /status: blocks
	"snowflake": true, "min": true, "max": true, // /snowflake/{id} and /snowflake/at/{time}
}

// int64Param reads ?int64=: "string" asks for int64s as strings, "number" (the
// default) as numbers.
func int64Param(q map[string]string) (asStrings bool, err error) {
	switch v, ok := q["int64"]; {
	case !ok || v == "number":
		return false, nil
	case v == "string":
		return true, nil
	default:
		return false, errorf("invalid_int64", "int64 must be number or string, got %s", quoted(v))
	}
}

// answerJSON writes v as JSON with status 200, its int64 fields as strings when
// asStrings.
func answerJSON(c echo.Context, asStrings bool, v any) error {
	if !asStrings {
		return c.JSON(http.StatusOK, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, append(quoteInt64s(make([]byte, 0, len(b)+64), b), '\n'))
}

// quoteInt64s appends src, JSON as encoding/json writes it (compact, keys plain),
// to dst with the integer value of every int64Fields key quoted.
func quoteInt64s(dst, src []byte) []byte {
	var key []byte      // the last string seen
	afterColon := false // the next value is key's
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			j = min(j+1, len(src))
			dst = append(dst, src[i:j]...)
			key, afterColon = src[i+1:max(j-1, i+1)], false
			i = j
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(src) && isNumberByte(src[j]) {
				j++
			}
			num := src[i:j]
			if _, err := strconv.ParseInt(string(num), 10, 64); afterColon && err == nil && int64Fields[string(key)] {
				dst = append(append(append(dst, '"'), num...), '"')
			} else {
				dst = append(dst, num...)
			}
			afterColon = false
			i = j
		default:
			afterColon = c == ':'
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// maxSafeInteger is 2^53-1, JavaScript's Number.MAX_SAFE_INTEGER: past it a
// double does not hold every integer.
const maxSafeInteger = 1<<53 - 1

// bodyInt reads an integer of a PUT body: a JSON number up to 2^53-1, or its
// decimal string as strconv.FormatInt writes it ("5", not "05", "+5" or " 5"),
// with or without ?int64=string. A JSON number past 2^53-1 is refused (unsafe),
// not stored: a client that holds numbers as doubles (JavaScript's, and a client
// generated for it, whose type for the field is number | string) may have rounded
// it before sending (JSON.stringify(9007199254740993) is "9007199254740992"), and
// nothing in the request says whether it did. The string is exact in every
// language.
func bodyInt(raw json.RawMessage) (n int64, ok, unsafe bool) {
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && strconv.FormatInt(n, 10) == s, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil && n > maxSafeInteger {
		return 0, false, true
	}
	return n, err == nil, false
}
