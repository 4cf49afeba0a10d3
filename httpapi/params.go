package httpapi

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// query reads the request's query string strictly: a parameter the endpoint does not
// take, or one given twice, is an error rather than something silently ignored.
func query(c echo.Context, allowed ...string) (map[string]string, error) {
	raw := c.QueryString()
	if raw == "" {
		return nil, nil
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errorf("invalid_query", "malformed query string: %v", err)
	}
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		if !contains(allowed, k) {
			if len(allowed) == 0 {
				return nil, errorf("unknown_parameter", "unknown query parameter %s: this endpoint takes none", quoted(k))
			}
			return nil, errorf("unknown_parameter", "unknown query parameter %s (allowed: %s)", quoted(k), strings.Join(allowed, ", "))
		}
		if len(v) != 1 {
			return nil, errorf("invalid_query", "query parameter %s given %d times", quoted(k), len(v))
		}
		out[k] = v[0]
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// intParam parses q[key] as a decimal integer in [min, max]; absent means def.
func intParam(q map[string]string, key string, def, min, max int64) (int64, error) {
	s, ok := q[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min || n > max {
		return 0, errorf("invalid_"+key, "%s must be an integer from %d to %d, got %s", key, min, max, quoted(s))
	}
	return n, nil
}

// boolParam parses q[key] as true/false (also 1/0); absent means false.
func boolParam(q map[string]string, key string) (bool, error) {
	s, ok := q[key]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errorf("invalid_"+key, "%s must be true or false, got %s", key, quoted(s))
	}
	return b, nil
}

// pathParam returns a path parameter unescaped. Echo matches on the escaped path when
// the request has one (for example %2F in a name), so the value may need unescaping.
func pathParam(c echo.Context, name string) (string, bool) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, true
	}
	u, err := url.PathUnescape(v)
	return u, err == nil
}
