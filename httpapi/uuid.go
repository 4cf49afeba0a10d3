package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seqd/seqd/uuidv7"
)

// maxUUIDCount bounds GET /uuid?count=N.
const maxUUIDCount = 10000

// uuidTimeLayout writes a UUIDv7's time: RFC 3339 in UTC with milliseconds, its
// precision, always three digits.
const uuidTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// maxUUIDUnixSeconds is the last whole second a UUIDv7's 48-bit millisecond
// field holds (10889-08-02T05:31:50Z).
const maxUUIDUnixSeconds = (1<<48 - 1) / 1000

// uuids is how GET /uuid answers: {"uuid":"…"} or {"uuids":["…",…]}.
var uuids = newIDKind[uuidv7.UUID]("uuid", "uuids", 36+3)

// newUUIDCounter is seqd_uuids_issued_total, registered with reg.
func newUUIDCounter(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seqd", Name: "uuids_issued_total",
		Help: "Version 7 UUIDs handed out.",
	})
	reg.MustRegister(c)
	return c
}

// newUUIDs serves GET /uuid[?count=N].
func newUUIDs(m *Metrics) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "count")
		if err != nil {
			return err
		}
		n, err := intParam(q, "count", 0, 1, maxUUIDCount)
		if err != nil {
			return err
		}
		return uuids.answer(c, n, func(ids []uuidv7.UUID) error {
			uuidv7.Fill(ids)
			m.uuidsIssued.Add(float64(len(ids)))
			return nil
		}, appendUUID)
	}
}

// appendUUID appends u as a JSON string in the canonical form.
func appendUUID(dst []byte, u uuidv7.UUID) []byte {
	dst = append(dst, '"')
	dst, _ = u.AppendText(dst)
	return append(dst, '"')
}

type uuidInfo struct {
	UUID    string `json:"uuid"`
	Version int    `json:"version"`
	Time    string `json:"time,omitempty"`    // version 7 only
	UnixMS  *int64 `json:"unix_ms,omitempty"` // version 7 only; 0 is a time
}

// decodeUUID serves GET /uuid/{uuid}: the version, and for a version 7 UUID its
// time.
func decodeUUID(c echo.Context) error {
	s, _, err := decodeArgs(c, "uuid", "invalid_uuid", "UUID")
	if err != nil {
		return err
	}
	id, err := uuidv7.Parse(s)
	if err != nil {
		return err
	}
	info := uuidInfo{UUID: id.String(), Version: id.Version()}
	if id.IsV7() {
		ms := id.UnixMilli()
		info.Time, info.UnixMS = id.Time().Format(uuidTimeLayout), &ms
	}
	return c.JSON(http.StatusOK, info)
}

// uuidRange serves GET /uuid/at/{time}: the smallest and largest version 7
// UUIDs of that millisecond, for _id range queries.
func uuidRange(c echo.Context) error {
	s, _, err := decodeArgs(c, "time", "invalid_time", "time")
	if err != nil {
		return err
	}
	t, err := parseUUIDTime(s)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, idBounds{
		Time: t.Format(uuidTimeLayout),
		Min:  uuidv7.Min(t).String(),
		Max:  uuidv7.Max(t).String(),
	})
}

// parseUUIDTime reads RFC 3339, with or without a fraction, or Unix seconds,
// from 1970 on, truncated to the millisecond.
func parseUUIDTime(s string) (time.Time, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > maxUUIDUnixSeconds {
			return time.Time{}, errorf("invalid_time", "unix time %s is outside 0..%d", quoted(s), maxUUIDUnixSeconds)
		}
		return time.Unix(int64(n), 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, errorf("invalid_time", "time must be RFC 3339 (2026-11-25T12:00:00.123Z) or Unix seconds, got %s", quoted(s))
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return t, errorf("invalid_time", "time %s is before 1970, where a UUIDv7's time begins", quoted(s))
	}
	return time.UnixMilli(ms).UTC(), nil
}
