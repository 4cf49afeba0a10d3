package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
)

// maxSeqCount bounds GET /seq/{name}/next?count=N.
const maxSeqCount = 1_000_000

// sequencers picks the strategy a request names.
type sequencers struct {
	byName map[string]counters.Sequencer
	def    counters.Sequencer // for a request that names none
}

// newSequencers checks Config.Sequencers: at least one, none nil, one per strategy.
func newSequencers(list []counters.Sequencer) (sequencers, error) {
	if len(list) == 0 {
		return sequencers{}, fmt.Errorf("httpapi: Sequencers is empty")
	}
	s := sequencers{byName: make(map[string]counters.Sequencer, len(list)), def: list[0]}
	for i, seq := range list {
		if seq == nil {
			return sequencers{}, fmt.Errorf("httpapi: Sequencers[%d] is nil", i)
		}
		if _, dup := s.byName[seq.Strategy()]; dup {
			return sequencers{}, fmt.Errorf("httpapi: two Sequencers for strategy %q", seq.Strategy())
		}
		s.byName[seq.Strategy()] = seq
	}
	return s, nil
}

func (s sequencers) pick(q map[string]string) (counters.Sequencer, error) {
	name, ok := q["strategy"]
	if !ok {
		return s.def, nil
	}
	if seq, ok := s.byName[name]; ok {
		return seq, nil
	}
	return nil, errorf("invalid_strategy", "strategy must be %s or %s, got %s",
		counters.StrategyCounter, counters.StrategyOptimistic, quoted(name))
}

// request reads what every /seq/{name} endpoint takes: the query string (strategy
// and the extra parameters allowed), the sequencer it names and the name.
func (s sequencers) request(c echo.Context, allowed ...string) (map[string]string, counters.Sequencer, string, error) {
	q, err := query(c, append(allowed, "strategy")...)
	if err != nil {
		return nil, nil, "", err
	}
	seq, err := s.pick(q)
	if err != nil {
		return nil, nil, "", err
	}
	name, err := seqName(c)
	if err != nil {
		return nil, nil, "", err
	}
	return q, seq, name, nil
}

// seqName reads and validates the {name} path parameter.
func seqName(c echo.Context) (string, error) {
	name, ok := pathParam(c, "name")
	if !ok || !counters.ValidName(name) {
		return "", errorf("invalid_name",
			"invalid sequence name %s: 1 to 64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit", quoted(name))
	}
	return name, nil
}

type nextResponse struct {
	Name     string `json:"name"`
	Value    int64  `json:"value"`
	First    int64  `json:"first"`
	Count    int64  `json:"count"`
	Strategy string `json:"strategy"`
}

// nextValues serves GET and POST /seq/{name}/next[?count=N][&strategy=…].
func nextValues(seqs sequencers, m *Metrics) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, seq, name, err := seqs.request(c, "count")
		if err != nil {
			return err
		}
		n, err := intParam(q, "count", 1, 1, maxSeqCount)
		if err != nil {
			return err
		}
		r, err := seq.NextN(c.Request().Context(), name, n)
		if err != nil {
			return err
		}
		m.valueIssued(seq.Strategy(), r.Count())
		// c.JSON (encoding/json) rather than a hand-written encoder: measured in process,
		// the hand-written one saved about 150 ns a response (BenchmarkNextResponse,
		// removed with it), within the noise of BenchmarkHandler/seq-next (~3 µs) and
		// 0.015% of the ~1 ms findOneAndUpdate round trip behind every answer. A cached
		// mode serving from memory would make this a hot path again, as /oid is: measure
		// it there with BenchmarkHandler before bringing an encoder back.
		return c.JSON(http.StatusOK, nextResponse{
			Name: name, Value: r.Last, First: r.First, Count: r.Count(), Strategy: seq.Strategy(),
		})
	}
}

// sequenceResponse is a sequence as GET and PUT /seq/{name} answer it.
type sequenceResponse struct {
	Name  string    `json:"name"`
	Value int64     `json:"value"`
	Mode  seqd.Mode `json:"mode,omitempty"`
}

// currentValue serves GET /seq/{name}: the last value handed out.
func currentValue(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		_, seq, name, err := seqs.request(c)
		if err != nil {
			return err
		}
		s, err := seq.Current(c.Request().Context(), name)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, sequenceResponse{Name: name, Value: s.Value, Mode: s.Mode})
	}
}

// setValue serves PUT /seq/{name} with body {"value":N}[?force=true][&strategy=…].
func setValue(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, seq, name, err := seqs.request(c, "force")
		if err != nil {
			return err
		}
		force, err := boolParam(q, "force")
		if err != nil {
			return err
		}
		value, err := readSetBody(c.Request())
		if err != nil {
			return err
		}
		if err := seq.Set(c.Request().Context(), name, value, force); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, sequenceResponse{Name: name, Value: value})
	}
}

// readSetBody decodes {"value":N} strictly: JSON only, exactly one field, a
// non-negative integer that fits in int64, nothing after it.
func readSetBody(r *http.Request) (int64, error) {
	if ct := r.Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != echo.MIMEApplicationJSON {
			return 0, &Error{Code: "unsupported_media_type", Message: "the body must be application/json, got " + quoted(ct)}
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// middleware.BodyLimit's reader fails with an *echo.HTTPError, not *http.MaxBytesError.
		var tooLarge *http.MaxBytesError
		var he *echo.HTTPError
		if errors.As(err, &tooLarge) || (errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge) {
			return 0, &Error{Code: "body_too_large", Message: "the body must be at most " + maxBody}
		}
		return 0, errorf("invalid_body", "reading the body: %v", err)
	}
	// A map, not a struct: struct fields match keys case-insensitively, and a
	// json.Number field takes a quoted number.
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil {
		return 0, errorf("invalid_body", `the body must be {"value":N}: %s`, jsonProblem(err))
	}
	// More() is false before a stray '}' or ']', so decode again and expect the end.
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return 0, errorf("invalid_body", `the body must be one JSON object {"value":N}`)
	}
	raw, ok := fields["value"]
	if !ok {
		return 0, errorf("invalid_body", `the body must be {"value":N}: "value" is missing`)
	}
	if len(fields) != 1 {
		return 0, errorf("invalid_body", `the body must be {"value":N} with no other field`)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 {
		return 0, errorf("invalid_value", "value must be an integer from 0 to 9223372036854775807, got %s", cut(string(raw)))
	}
	return n, nil
}

type listResponse struct {
	Sequences []listEntry `json:"sequences"`
}

// listEntry is one sequence in GET /seq: its value, or, for a sequence whose
// stored record seqd cannot use, the error a request for it gets.
type listEntry struct {
	Name  string       `json:"name"`
	Value *int64       `json:"value,omitempty"`
	Error *errorDetail `json:"error,omitempty"`
}

// listSequences serves GET /seq[?strategy=…].
func listSequences(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := query(c, "strategy")
		if err != nil {
			return err
		}
		seq, err := seqs.pick(q)
		if err != nil {
			return err
		}
		list, err := seq.List(c.Request().Context())
		if err != nil {
			return err
		}
		entries := make([]listEntry, len(list))
		for i, s := range list {
			entries[i].Name = s.Name
			if s.Err != nil {
				e := classify(s.Err)
				entries[i].Error = &errorDetail{Code: e.code, Message: e.message}
			} else {
				entries[i].Value = &list[i].Value
			}
		}
		return c.JSON(http.StatusOK, listResponse{Sequences: entries})
	}
}
