package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/snowflake"
)

// maxSnowflakeCount bounds GET /snowflake?count=N, as /oid's count.
const maxSnowflakeCount = maxOIDCount

// errNoSnowflakes answers /snowflake on a server given no Generator.
var errNoSnowflakes = fmt.Errorf("%w: snowflake ids are not configured on this instance", snowflake.ErrNoWorker)

// snowflakeBuffers recycles what GET /snowflake?count=N builds its answer in,
// as oidBuffers does for /oid.
var snowflakeBuffers = sync.Pool{New: func() any { return new(snowflakeBuffer) }}

type snowflakeBuffer struct {
	ids  []snowflake.ID
	json []byte
}

// newSnowflakes serves GET /snowflake[?count=N][&int64=string]: ids as JSON
// numbers, or strings for clients whose numbers are doubles. Like /oid's, the
// JSON is written by hand.
func newSnowflakes(g *snowflake.Generator) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "count", "int64")
		if err != nil {
			return err
		}
		asStrings, err := int64Param(q)
		if err != nil {
			return err
		}
		n, err := intParam(q, "count", 0, 1, maxSnowflakeCount)
		if err != nil {
			return err
		}
		if g == nil {
			return errNoSnowflakes
		}
		scratch := snowflakeBuffers.Get().(*snowflakeBuffer)
		defer snowflakeBuffers.Put(scratch)
		ids := slices.Grow(scratch.ids[:0], int(max(n, 1)))[:max(n, 1)]
		if err := g.Fill(ids); err != nil {
			return err
		}
		buf := slices.Grow(scratch.json[:0], len(`{"snowflakes":[]}`)+len(ids)*22+1)
		scratch.ids, scratch.json = ids, buf // keep the grown slices for the next request
		if n == 0 {                          // no count: a single id, answered as {"snowflake":…}
			buf = append(buf, `{"snowflake":`...)
		} else {
			buf = append(buf, `{"snowflakes":[`...)
		}
		for i, id := range ids {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendInt64(buf, int64(id), asStrings)
		}
		if n != 0 {
			buf = append(buf, ']')
		}
		buf = append(buf, "}\n"...)
		return c.JSONBlob(http.StatusOK, buf)
	}
}

// appendInt64 appends v as a JSON number, or as a JSON string of its digits.
func appendInt64(dst []byte, v int64, asString bool) []byte {
	if !asString {
		return strconv.AppendInt(dst, v, 10)
	}
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '"')
}

type snowflakeInfo struct {
	Snowflake int64  `json:"snowflake"`
	Time      string `json:"time"`
	UnixMS    int64  `json:"unix_ms"`
	Worker    int    `json:"worker"`
	Sequence  int    `json:"sequence"`
	Layout    string `json:"layout"`
}

// decodeSnowflake serves GET /snowflake/{id}: its time, worker id and
// sequence in this instance's layout.
func decodeSnowflake(layout snowflake.Layout) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "int64")
		if err != nil {
			return err
		}
		asStrings, err := int64Param(q)
		if err != nil {
			return err
		}
		s, ok := pathParam(c, "id")
		if !ok {
			return errorf("invalid_id", "malformed escape in id")
		}
		id, err := snowflake.Parse(s)
		if err != nil {
			return err
		}
		p, err := layout.Decode(id)
		if err != nil {
			return err
		}
		return answerJSON(c, asStrings, snowflakeInfo{
			Snowflake: int64(id),
			Time:      p.Time().Format(uuidTimeLayout),
			UnixMS:    p.UnixMilli,
			Worker:    p.Worker,
			Sequence:  p.Sequence,
			Layout:    layout.String(),
		})
	}
}

type snowflakeBounds struct {
	Time string `json:"time"`
	Min  int64  `json:"min"`
	Max  int64  `json:"max"`
}

// snowflakeRange serves GET /snowflake/at/{time}: the smallest and largest ids
// of that millisecond in this instance's layout, for _id range queries.
func snowflakeRange(layout snowflake.Layout) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "int64")
		if err != nil {
			return err
		}
		asStrings, err := int64Param(q)
		if err != nil {
			return err
		}
		s, ok := pathParam(c, "time")
		if !ok {
			return errorf("invalid_time", "malformed escape in time")
		}
		t, err := parseUUIDTime(s)
		if err != nil {
			return err
		}
		if t.Before(snowflake.Epoch) || t.After(layout.End()) {
			return errorf("invalid_time", "time %s is outside the %s layout's %s to %s", quoted(s), layout,
				snowflake.Epoch.Format(uuidTimeLayout), layout.End().Format(uuidTimeLayout))
		}
		return answerJSON(c, asStrings, snowflakeBounds{
			Time: t.Format(uuidTimeLayout),
			Min:  int64(layout.Min(t)),
			Max:  int64(layout.Max(t)),
		})
	}
}
