package httpapi

import (
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/snowflake"
)

// maxSnowflakeCount bounds GET /snowflake?count=N, as /oid's count.
const maxSnowflakeCount = maxOIDCount

// errNoSnowflakes answers /snowflake on a server given no Generator.
var errNoSnowflakes = fmt.Errorf("%w: snowflake ids are not configured on this instance", snowflake.ErrNoWorker)

// snowflakes is how GET /snowflake answers: {"snowflake":…} or
// {"snowflakes":[…]}.
var snowflakes = newIDKind[snowflake.ID]("snowflake", "snowflakes", 19+3)

// newSnowflakes serves GET /snowflake[?count=N][&int64=string]: ids as JSON
// numbers, or strings for clients whose numbers are doubles.
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
		appendJSON := appendSnowflake
		if asStrings {
			appendJSON = appendSnowflakeString
		}
		return snowflakes.answer(c, n, g.Fill, appendJSON)
	}
}

func appendSnowflake(dst []byte, id snowflake.ID) []byte { return appendInt64(dst, int64(id), false) }

func appendSnowflakeString(dst []byte, id snowflake.ID) []byte {
	return appendInt64(dst, int64(id), true)
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

// snowflakeArgs reads the path parameter name of a decode or range route, and
// ?int64=.
func snowflakeArgs(c echo.Context, name, code string) (string, bool, error) {
	s, q, err := decodeArgs(c, name, code, name, "int64")
	if err != nil {
		return "", false, err
	}
	asStrings, err := int64Param(q)
	return s, asStrings, err
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
		s, asStrings, err := snowflakeArgs(c, "id", "invalid_id")
		if err != nil {
			return err
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
		s, asStrings, err := snowflakeArgs(c, "time", "invalid_time")
		if err != nil {
			return err
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
