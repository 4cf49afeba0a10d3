package httpapi

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd/objectid"
)

// maxOIDCount bounds GET /oid?count=N.
const maxOIDCount = 10000

// oids is how GET /oid answers: {"oid":"…"} or {"oids":["…",…]}.
var oids = newIDKind[objectid.ID]("oid", "oids", 24+3)

// newOIDs serves GET /oid[?count=N][&layout=spec|legacy].
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
		return oids.answer(c, n, func(ids []objectid.ID) error {
			if legacy {
				objectid.FillLegacy(ids)
			} else {
				objectid.Fill(ids)
			}
			m.oidIssued(legacy, len(ids))
			return nil
		}, appendOID)
	}
}

// appendOID appends id as a JSON string of 24 lowercase hex characters.
func appendOID(dst []byte, id objectid.ID) []byte {
	dst = append(dst, '"')
	dst = id.AppendHex(dst)
	return append(dst, '"')
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
	s, _, err := decodeArgs(c, "hex", "invalid_id", "id")
	if err != nil {
		return err
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
	s, _, err := decodeArgs(c, "time", "invalid_time", "time")
	if err != nil {
		return err
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
