package httpapi

import (
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/objectid"
)

// maxOIDCount bounds GET /oid?count=N.
const maxOIDCount = 10000

// oidBuffers recycles what GET /oid?count=N builds its answer in: the ids and their
// JSON, 40 KB for 1000 ids, which would otherwise become garbage at once. JSONBlob
// has copied the JSON out by the time the handler returns.
var oidBuffers = sync.Pool{New: func() any { return new(oidBuffer) }}

type oidBuffer struct {
	ids  []objectid.ID
	json []byte
}

// newOIDs serves GET /oid[?count=N][&layout=spec|legacy]. The JSON is written by hand:
// this is the hottest path in the service and needs no reflection.
func newOIDs(m *Metrics) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "count", "layout")
		if err != nil {
			return err
		}
		legacy := false
		if l, ok := q["layout"]; ok {
			switch l {
			case "spec":
			case "legacy":
				legacy = true
			default:
				return errorf("invalid_layout", "layout must be spec or legacy, got %s", quoted(l))
			}
		}
		n, err := intParam(q, "count", 0, 1, maxOIDCount)
		if err != nil {
			return err
		}
		if n == 0 { // no count: a single id, answered as {"oid":…}
			id := objectid.New()
			if legacy {
				id = objectid.NewLegacy()
			}
			m.oidIssued(legacy, 1)
			buf := make([]byte, 0, len(`{"oid":""}`)+24+1)
			buf = append(buf, `{"oid":"`...)
			buf = id.AppendHex(buf)
			buf = append(buf, "\"}\n"...)
			return c.JSONBlob(http.StatusOK, buf)
		}
		scratch := oidBuffers.Get().(*oidBuffer)
		defer oidBuffers.Put(scratch)
		ids := slices.Grow(scratch.ids[:0], int(n))[:n]
		if legacy {
			objectid.FillLegacy(ids)
		} else {
			objectid.Fill(ids)
		}
		m.oidIssued(legacy, len(ids))
		buf := slices.Grow(scratch.json[:0], len(`{"oids":[]}`)+len(ids)*27+1)
		scratch.ids, scratch.json = ids, buf // keep the grown slices for the next request
		buf = append(buf, `{"oids":[`...)
		for i, id := range ids {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = id.AppendHex(buf)
			buf = append(buf, '"')
		}
		buf = append(buf, "]}\n"...)
		return c.JSONBlob(http.StatusOK, buf)
	}
}

type oidInfo struct {
	OID     string `json:"oid"`
	Time    string `json:"time"`
	Unix    uint32 `json:"unix"`
	Counter uint32 `json:"counter"`
	Process string `json:"process"`
	Machine string `json:"machine"`
	Pid     uint16 `json:"pid"`
}

// decodeOID serves GET /oid/{hex}: the id's fields, read as both layouts.
func decodeOID(c echo.Context) error {
	if _, err := query(c); err != nil {
		return err
	}
	s, ok := pathParam(c, "hex")
	if !ok {
		return errorf("invalid_id", "malformed escape in id")
	}
	id, err := objectid.Parse(s)
	if err != nil {
		return err
	}
	p, mach := id.Process(), id.Machine()
	return c.JSON(http.StatusOK, oidInfo{
		OID:     id.Hex(),
		Time:    id.Time().Format(time.RFC3339),
		Unix:    id.Timestamp(),
		Counter: id.Counter(),
		Process: hex.EncodeToString(p[:]),
		Machine: hex.EncodeToString(mach[:]),
		Pid:     id.Pid(),
	})
}

// idBounds is the answer of GET /oid/at/{time} and /uuid/at/{time}: the
// smallest and largest ids of that time, as text.
type idBounds struct {
	Time string `json:"time"`
	Min  string `json:"min"`
	Max  string `json:"max"`
}

// oidRange serves GET /oid/at/{time}: the smallest and largest ids of that second,
// for _id range queries.
func oidRange(c echo.Context) error {
	if _, err := query(c); err != nil {
		return err
	}
	s, ok := pathParam(c, "time")
	if !ok {
		return errorf("invalid_time", "malformed escape in time")
	}
	t, err := parseIDTime(s)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, idBounds{
		Time: t.Format(time.RFC3339),
		Min:  objectid.Min(t).Hex(),
		Max:  objectid.Max(t).Hex(),
	})
}

// parseIDTime reads RFC 3339 or Unix seconds, within what an ObjectId can hold
// (1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z), truncated to the second.
func parseIDTime(s string) (time.Time, error) {
	var t time.Time
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return t, errorf("invalid_time", "unix time %s is outside 0..4294967295", quoted(s))
		}
		return time.Unix(int64(n), 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, errorf("invalid_time", "time must be RFC 3339 (2024-05-01T12:00:00Z) or Unix seconds, got %s", quoted(s))
	}
	if u := t.Unix(); u < 0 || u > 1<<32-1 {
		return t, errorf("invalid_time", "time %s is outside what an ObjectId holds (1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z)", quoted(s))
	}
	return t.Truncate(time.Second).UTC(), nil
}
