package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/period"
)

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

// seqParams are the query parameters every /seq/{name} endpoint takes, after
// the extra ones given, in a list made once, when its handler is.
func seqParams(extra ...string) []string { return append(extra, "strategy", "int64") }

// request reads what every /seq/{name} endpoint takes: the query string (of the
// parameters allowed, seqParams), the sequencer it names and the name.
func (s sequencers) request(c echo.Context, allowed []string) (map[string]string, counters.Sequencer, string, error) {
	q, err := query(c, allowed...)
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

// appendNext appends the answer of /seq/{name}/next to buf, as encoding/json
// writes it from {"name","value","first","count","strategy"} (value is r.Last), the
// three integers quoted when asStrings (?int64=string), and for a numbered
// sequence "period", "formatted" and "formatted_first" when not empty. name
// (ValidName), strategy (a Strategy constant) and period (a key) hold nothing
// JSON escapes.
func appendNext(buf []byte, name string, r counters.Numbered, strategy string, asStrings bool) []byte {
	appendInt := func(buf []byte, n int64) []byte {
		if !asStrings {
			return strconv.AppendInt(buf, n, 10)
		}
		return append(strconv.AppendInt(append(buf, '"'), n, 10), '"')
	}
	buf = append(buf, `{"name":"`...)
	buf = append(buf, name...)
	buf = append(buf, `","value":`...)
	buf = appendInt(buf, r.Last)
	buf = append(buf, `,"first":`...)
	buf = appendInt(buf, r.First)
	buf = append(buf, `,"count":`...)
	buf = appendInt(buf, r.Count())
	buf = append(buf, `,"strategy":"`...)
	buf = append(buf, strategy...)
	buf = append(buf, '"')
	if r.Period != "" {
		buf = append(append(append(buf, `,"period":"`...), r.Period...), '"')
	}
	if r.Formatted != "" {
		buf = appendJSONString(append(buf, `,"formatted":`...), r.Formatted)
	}
	if r.FormattedFirst != "" {
		buf = appendJSONString(append(buf, `,"formatted_first":`...), r.FormattedFirst)
	}
	return append(buf, "}\n"...)
}

// appendJSONString appends s, valid UTF-8, as a JSON string: a format's text
// has no control characters (period.ParseFormat), but may hold " and \. <, >
// and & are escaped as encoding/json does.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}

// numberer is a Sequencer with numbered sequences (the counter strategy's):
// periods and formats. The optimistic strategy has none.
type numberer interface {
	NextNumbered(ctx context.Context, name string, n int64) (counters.Numbered, error)
	SetNumbering(ctx context.Context, name string, nb counters.Numbering) error
	SetNumberingValue(ctx context.Context, name string, nb counters.Numbering, value int64, force bool) error
	PeriodValue(ctx context.Context, name, key string) (int64, error)
}

// nextValues serves GET and POST /seq/{name}/next[?count=N][&strategy=…].
func nextValues(seqs sequencers, m *Metrics) echo.HandlerFunc {
	params := seqParams("count")
	return func(c echo.Context) error {
		q, seq, name, err := seqs.request(c, params)
		if err != nil {
			return err
		}
		n, err := intParam(q, "count", 1, 1, seqd.MaxCount)
		if err != nil {
			return err
		}
		asStrings, err := int64Param(q)
		if err != nil {
			return err
		}
		var r counters.Numbered
		if nr, ok := seq.(numberer); ok {
			r, err = nr.NextNumbered(c.Request().Context(), name, n)
		} else {
			r.Range, err = seq.NextN(c.Request().Context(), name, n)
		}
		if err != nil {
			return err
		}
		m.valueIssued(seq.Strategy(), r.Count())
		// Written by hand, as /oid's: in cached mode the value comes from memory, and
		// c.JSON (reflection) was a quarter of the handler's time in process
		// (BenchmarkHandler/seq-next in cmd/seqbench). JSONBlob has copied the
		// answer out by the time it returns.
		buf := nextBuffers.Get().(*[]byte)
		defer nextBuffers.Put(buf)
		*buf = appendNext((*buf)[:0], name, r, seq.Strategy(), asStrings)
		return c.JSONBlob(http.StatusOK, *buf)
	}
}

// nextBuffers hold answers of /seq/{name}/next while they are written.
var nextBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// sequenceResponse is a sequence as GET and PUT /seq/{name} answer it: as stored.
type sequenceResponse struct {
	Name     string               `json:"name"`
	Value    int64                `json:"value"`
	Mode     seqd.Mode            `json:"mode"`
	MinBlock int64                `json:"min_block,omitempty"` // 0: the instance's default
	MaxBlock int64                `json:"max_block,omitempty"`
	Blocks   *blockCountsResponse `json:"blocks,omitempty"` // only once a block was reserved
	// StrictFrom is set while the sequence leaves cached mode.
	StrictFrom *time.Time `json:"strict_from,omitempty"`
	// A numbered sequence's: its period, time zone and format as set, and
	// the key of the period its value belongs to.
	Period        string `json:"period,omitempty"`
	TimeZone      string `json:"time_zone,omitempty"`
	Format        string `json:"format,omitempty"`
	CurrentPeriod string `json:"current_period,omitempty"`
}

// blockCountsResponse is cached mode's accounting over every instance.
type blockCountsResponse struct {
	Reserved    int64 `json:"reserved"`
	Served      int64 `json:"served"`
	Returned    int64 `json:"returned"`
	Unaccounted int64 `json:"unaccounted"`
}

// sequenceOf is s as the API shows it. A sequence without a mode is strict.
func sequenceOf(s counters.Sequence) *sequenceResponse {
	r := &sequenceResponse{Name: s.Name, Value: s.Value, Mode: modeOf(s), MinBlock: s.MinBlock, MaxBlock: s.MaxBlock,
		Period: s.Period, TimeZone: s.TimeZone, Format: s.Format, CurrentPeriod: s.PeriodKey}
	if r.Period != "" && r.TimeZone == "" {
		r.TimeZone = "UTC"
	}
	if b := s.Blocks; b.Reserved > 0 {
		r.Blocks = &blockCountsResponse{Reserved: b.Reserved, Served: b.Served, Returned: b.Returned, Unaccounted: b.Unaccounted()}
	}
	if !s.StrictFrom.IsZero() {
		t := s.StrictFrom.UTC().Truncate(time.Millisecond)
		r.StrictFrom = &t
	}
	return r
}

// modeOf is the mode of s; one that never had a mode set is strict.
func modeOf(s counters.Sequence) seqd.Mode {
	if s.Mode == "" {
		return seqd.ModeStrict
	}
	return s.Mode
}

// current reads a GET /seq/{name}… request that takes no more than a strategy
// and int64, and returns the sequencer it names, the sequence as stored, and
// whether the answer's int64s are strings.
func (s sequencers) current(c echo.Context) (counters.Sequencer, counters.Sequence, bool, error) {
	q, seq, name, err := s.request(c, currentParams)
	if err != nil {
		return nil, counters.Sequence{}, false, err
	}
	asStrings, err := int64Param(q)
	if err != nil {
		return nil, counters.Sequence{}, false, err
	}
	cur, err := seq.Current(c.Request().Context(), name)
	if err != nil {
		return nil, counters.Sequence{}, false, err
	}
	cur.Name = name
	return seq, cur, asStrings, nil
}

// currentParams are the query parameters of a GET /seq/{name}… that reads a sequence.
var currentParams = seqParams()

// pastPeriodParams are those of a GET /seq/{name}?period=KEY.
var pastPeriodParams = seqParams("period")

// currentValue serves GET /seq/{name}: the sequence as stored, its value the last
// handed out; with ?period=KEY, the last value of that period of a periodic
// sequence.
func currentValue(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		if q := c.QueryParams(); q.Has("period") {
			return pastPeriod(c, seqs)
		}
		_, s, asStrings, err := seqs.current(c)
		if err != nil {
			return err
		}
		return answerJSON(c, asStrings, sequenceOf(s))
	}
}

// periodResponse is a period of a periodic sequence and its last value.
type periodResponse struct {
	Name   string `json:"name"`
	Period string `json:"period"`
	Value  int64  `json:"value"`
}

// pastPeriod serves GET /seq/{name}?period=KEY: the last value of the period
// KEY, the current one or one of the latest finished ones the sequence
// remembers; 404 for others.
func pastPeriod(c echo.Context, seqs sequencers) error {
	q, seq, name, err := seqs.request(c, pastPeriodParams)
	if err != nil {
		return err
	}
	asStrings, err := int64Param(q)
	if err != nil {
		return err
	}
	nr, ok := seq.(numberer)
	if !ok {
		return errorf("invalid_period", "the %s strategy has no periods", seq.Strategy())
	}
	key := q["period"]
	if len(key) > 16 {
		return errorf("invalid_period", "period must be a period's key (2026, 2026-11, 2026-11-26, 2026-11-26T17 or 2026-11-26T17:05), got %s", quoted(key))
	}
	v, err := nr.PeriodValue(c.Request().Context(), name, key)
	if err != nil {
		return err
	}
	return answerJSON(c, asStrings, periodResponse{Name: name, Period: key, Value: v})
}

// moder is a Sequencer with modes (the counter strategy's). The optimistic
// strategy has none: its sequences are always strict.
type moder interface {
	// SetMode sets the mode and block bounds of name, creating it at 0 if new. It
	// returns ErrInvalidMode for a mode other than strict or cached, or bounds
	// other than both 0 (the default) or 1 ≤ min ≤ max ≤ 1,000,000.
	SetMode(ctx context.Context, name string, mode seqd.Mode, minBlock, maxBlock int64) error
}

// putSequence serves PUT /seq/{name}[?force=true][&strategy=…] with a body of
// value, mode and block bounds, and numbering (period, time_zone, format), any
// of them. The whole body is checked before anything changes; then the value
// is set, then a numbering of none, the mode, and any other numbering (so that
// a sequence can leave its numbering and go cached in one request; one leaving
// cached mode takes a numbering once its drain is over, waiting for it or
// answering 503 draining when the request's deadline comes first),
// and the answer is the sequence as stored after them. A value given with a
// numbering is set with it, in one write (SetNumberingValue), as the value of
// the current period ({"period":"year","value":4211}: the next value is 4212
// of this year).
func putSequence(seqs sequencers) echo.HandlerFunc {
	params := seqParams("force")
	return func(c echo.Context) error {
		q, seq, name, err := seqs.request(c, params)
		if err != nil {
			return err
		}
		force, err := boolParam(q, "force")
		if err != nil {
			return err
		}
		asStrings, err := int64Param(q)
		if err != nil {
			return err
		}
		body, err := readPutBody(c.Request())
		if err != nil {
			return err
		}
		m, hasModes := seq.(moder)
		if body.Mode != "" && !hasModes {
			return errorf("invalid_mode", "the %s strategy has no modes: its sequences are always strict", seq.Strategy())
		}
		nr, hasNumbering := seq.(numberer)
		if body.Numbering != nil && !hasNumbering {
			return errorf("invalid_mode", "the %s strategy has no periods or formats: take numbered values with the counter strategy", seq.Strategy())
		}
		ctx := c.Request().Context()
		// A value given with a numbering is set with it, in one write: with a
		// period it is the current period's value, no value is taken between
		// the two, and a refused numbering or value changes neither.
		setNumbering := func() error {
			if body.Value != nil {
				return nr.SetNumberingValue(ctx, name, *body.Numbering, *body.Value, force)
			}
			return nr.SetNumbering(ctx, name, *body.Numbering)
		}
		if body.Value != nil && body.Numbering == nil && body.Mode == seqd.ModeCached && hasNumbering {
			// The value goes before the mode, but a numbered sequence is never
			// cached (SetMode refuses it): refuse before the value is set, so
			// that the PUT changes nothing. (A numbering set by another PUT
			// between this read and SetMode still leaves the value set.)
			switch s, err := seq.Current(ctx, name); {
			case err == nil && (s.Period != "" || s.Format != ""):
				return errorf("invalid_mode", "%s", cachedNumbered)
			case err != nil && !errors.Is(err, counters.ErrNotFound):
				return err
			}
		}
		if body.Value != nil && body.Numbering == nil {
			if err := seq.Set(ctx, name, *body.Value, force); err != nil {
				return err
			}
		}
		off := body.Numbering != nil && body.Numbering.Period == "" && body.Numbering.Format == ""
		if off { // numbering off before a mode that may be cached
			if err := setNumbering(); err != nil {
				return err
			}
		}
		if body.Mode != "" {
			if err := m.SetMode(ctx, name, body.Mode, body.MinBlock, body.MaxBlock); err != nil {
				return err
			}
		}
		if body.Numbering != nil && !off {
			if err := setNumbering(); err != nil {
				return err
			}
		}
		s, err := seq.Current(ctx, name)
		if err != nil {
			return err
		}
		s.Name = name
		return answerJSON(c, asStrings, sequenceOf(s))
	}
}

// cachedNumbered is why a sequence with a period or format is not cached.
const cachedNumbered = "a cached sequence has no period or format: its instances hand out blocks with no order between them, so one could answer a period older than another has begun; use mode strict"

// putBody is what PUT /seq/{name} asks to change.
type putBody struct {
	Value              *int64    // nil: the value stays
	Mode               seqd.Mode // "": the mode and bounds stay
	MinBlock, MaxBlock int64     // with Mode; 0: the instance's default
	// Numbering, when not nil, is the period, time zone and format to set:
	// those of the three the body leaves out are none, UTC and none.
	Numbering *counters.Numbering
}

// putFields are the fields a PUT body may hold.
var putFields = []string{"value", "mode", "min_block", "max_block", "period", "time_zone", "format"}

// readPutBody decodes the PUT body strictly: JSON only, one object holding at
// least one of putFields, each at most once and spelt exactly, nothing after it.
// value is a non-negative integer that fits in int64; mode is "strict" or "cached";
// min_block and max_block come with mode, both or neither, both 0 (the default)
// or 1 ≤ min ≤ max ≤ 1,000,000. The integers may also be decimal strings, and
// must be past 2^53-1 (bodyInt). Problems with the JSON are invalid_body, with value invalid_value,
// with mode or bounds invalid_mode.
func readPutBody(r *http.Request) (putBody, error) {
	if ct := r.Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != echo.MIMEApplicationJSON {
			return putBody{}, &Error{Code: "unsupported_media_type", Message: "the body must be application/json, got " + quoted(ct)}
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// middleware.BodyLimit's reader fails with an *echo.HTTPError, not *http.MaxBytesError.
		var tooLarge *http.MaxBytesError
		var he *echo.HTTPError
		if errors.As(err, &tooLarge) || (errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge) {
			return putBody{}, &Error{Code: "body_too_large", Message: "the body must be at most " + maxBody}
		}
		return putBody{}, errorf("invalid_body", "reading the body: %v", err)
	}
	fields, err := jsonObject(body, putFields)
	if err != nil {
		return putBody{}, err
	}
	var b putBody
	if raw, ok := fields["value"]; ok {
		n, ok, unsafe := bodyInt(raw)
		if unsafe {
			return putBody{}, errorf("invalid_value", "value %s is a JSON number past 2^53-1 (9007199254740991), which a client that holds numbers as doubles (JavaScript) may have rounded before sending: send it as a string, \"%s\"", cut(string(raw)), cut(string(raw)))
		}
		if !ok || n < 0 {
			return putBody{}, errorf("invalid_value", "value must be an integer from 0 to 9223372036854775807, got %s", cut(string(raw)))
		}
		b.Value = &n
	}
	if err := readNumbering(fields, &b); err != nil {
		return putBody{}, err
	}
	rawMin, hasMin := fields["min_block"]
	rawMax, hasMax := fields["max_block"]
	raw, ok := fields["mode"]
	switch {
	case !ok && (hasMin || hasMax):
		return putBody{}, errorf("invalid_mode", "min_block and max_block are set with mode: add \"mode\"")
	case !ok:
		return b, nil
	case hasMin != hasMax:
		return putBody{}, errorf("invalid_mode", "min_block and max_block go together: give both or neither")
	}
	if err := json.Unmarshal(raw, &b.Mode); err != nil || (b.Mode != seqd.ModeStrict && b.Mode != seqd.ModeCached) {
		return putBody{}, errorf("invalid_mode", "mode must be \"strict\" or \"cached\", got %s", cut(string(raw)))
	}
	if b.Mode == seqd.ModeCached && b.Numbering != nil && (b.Numbering.Period != "" || b.Numbering.Format != "") {
		return putBody{}, errorf("invalid_mode", "%s", cachedNumbered)
	}
	if hasMin {
		var okMin, okMax bool
		b.MinBlock, okMin, _ = bodyInt(rawMin)
		b.MaxBlock, okMax, _ = bodyInt(rawMax)
		if !okMin || !okMax || seqd.CheckMode(b.Mode, b.MinBlock, b.MaxBlock) != nil {
			return putBody{}, errorf("invalid_mode", "min_block and max_block must be both 0 (the default) or integers with 1 ≤ min_block ≤ max_block ≤ %d, got %s and %s",
				seqd.MaxCount, cut(string(rawMin)), cut(string(rawMax)))
		}
	}
	return b, nil
}

// readNumbering reads the body's period, time_zone and format into b, if it
// has any of them: strings that period.ParseUnit, ParseZone and ParseFormat
// take, a format whose date tokens the period has (Format.Check). Each
// problem has its code: invalid_period, invalid_time_zone, invalid_format.
func readNumbering(fields map[string]json.RawMessage, b *putBody) error {
	var nb counters.Numbering
	given := false
	for _, f := range []struct {
		field, code string
		to          *string
		err         error
	}{
		{"period", "invalid_period", &nb.Period, period.ErrInvalidUnit},
		{"time_zone", "invalid_time_zone", &nb.TimeZone, period.ErrInvalidZone},
		{"format", "invalid_format", &nb.Format, period.ErrInvalidFormat},
	} {
		raw, ok := fields[f.field]
		if !ok {
			continue
		}
		given = true
		if err := json.Unmarshal(raw, f.to); err != nil || raw[0] != '"' {
			return errorf(f.code, "%s must be a string, got %s", f.field, cut(string(raw)))
		}
	}
	if !given {
		return nil
	}
	if nb.Period == "none" {
		nb.Period = ""
	}
	if nb.Period == "" && nb.TimeZone != "" {
		return errorf("invalid_time_zone", "time_zone goes with a period: add \"period\"")
	}
	if err := nb.Check(); err != nil {
		for _, c := range []struct {
			err  error
			code string
		}{{period.ErrInvalidUnit, "invalid_period"}, {period.ErrInvalidZone, "invalid_time_zone"}, {period.ErrInvalidFormat, "invalid_format"}} {
			if errors.Is(err, c.err) {
				return &Error{Code: c.code, Message: periodMessage(err)}
			}
		}
		return errorf("invalid_format", "%v", err)
	}
	b.Numbering = &nb
	return nil
}

// periodMessage is what a Numbering.Check error says after its sentinel,
// ErrInvalidMode: what the period package found wrong.
func periodMessage(err error) string {
	return strings.TrimPrefix(err.Error(), counters.ErrInvalidMode.Error()+": ")
}

// jsonObject decodes body as one JSON object of at least one of the allowed
// fields, each at most once, and returns each field's raw value. It reads the
// tokens itself, rather than into a map or a struct: a map keeps the last of two
// equal keys, struct fields match keys case-insensitively and take quoted numbers.
func jsonObject(body []byte, allowed []string) (map[string]json.RawMessage, error) {
	want := "a JSON object of " + strings.Join(allowed, ", ")
	problem := func(err error) error {
		return errorf("invalid_body", "the body must be %s: %s", want, jsonProblem(err))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil {
		return nil, problem(err)
	} else if tok != json.Delim('{') {
		return nil, errorf("invalid_body", "the body must be %s: got a JSON %s", want, jsonKind(tok))
	}
	fields := make(map[string]json.RawMessage, len(allowed))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, problem(unexpectedEOF(err))
		}
		key, _ := tok.(string) // More is true and no error: the decoder is at a key
		if !contains(allowed, key) {
			return nil, errorf("invalid_body", "the body must be %s: unknown field %s", want, quoted(key))
		}
		if _, dup := fields[key]; dup {
			return nil, errorf("invalid_body", "the body must be %s: %s given twice", want, quoted(key))
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, problem(unexpectedEOF(err))
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, problem(unexpectedEOF(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf("invalid_body", "the body must be one JSON object, with nothing after it")
	}
	if len(fields) == 0 {
		return nil, errorf("invalid_body", "the body must be %s: it has none", want)
	}
	return fields, nil
}

// jsonKind names the kind of JSON value that starts with tok, as
// json.UnmarshalTypeError does.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim: // the decoder returns only opening ones here
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// unexpectedEOF is err, with the end of the body inside the object said as such.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// listResponse is a page of GET /seq: Next, the page's last name, is there
// exactly when more sequences follow it.
type listResponse struct {
	Sequences []listEntry `json:"sequences"` // [] for an empty page, never null
	Next      string      `json:"next,omitempty"`
}

// listEntry is one sequence in GET /seq: the sequence as stored, or, for a
// sequence whose stored record seqd cannot use, its name and the error a request
// for it gets. Name is listEntry's own, which encoding/json puts before the
// embedded one: the entry has its name whether or not it has the rest.
type listEntry struct {
	Name string `json:"name"`
	*sequenceResponse
	Error *errorDetail `json:"error,omitempty"`
}

// listParams are the query parameters of an endpoint that lists sequences.
var listParams = []string{"strategy", "limit", "after", "prefix"}

// listQuery is what a listing request asked for: the sequencer and the page.
type listQuery struct {
	seq  counters.Sequencer
	q    map[string]string // the query, as given
	opts counters.ListOptions
}

// listOptions reads a listing request's query: a strategy, and a page of at most
// limit (1 to counters.MaxListLimit, by default counters.DefaultListLimit)
// sequences whose names start with prefix, after after (a name, or whatever
// next said). The checks are counters.ListOptions.Check's, each with an error
// code of its own.
func (s sequencers) listOptions(c echo.Context, extra ...string) (listQuery, error) {
	q, err := query(c, append(listParams[:len(listParams):len(listParams)], extra...)...)
	if err != nil {
		return listQuery{}, err
	}
	seq, err := s.pick(q)
	if err != nil {
		return listQuery{}, err
	}
	limit, err := intParam(q, "limit", counters.DefaultListLimit, 1, counters.MaxListLimit)
	if err != nil {
		return listQuery{}, err
	}
	opts := counters.ListOptions{Prefix: q["prefix"], After: q["after"], Limit: int(limit)}
	// An empty prefix or after is none, as a form with an empty field sends it.
	if opts.Prefix != "" && !counters.ValidName(opts.Prefix) {
		return listQuery{}, errorf("invalid_prefix",
			"prefix must be the start of a name: 1 to 64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit, got %s", quoted(opts.Prefix))
	}
	if !utf8.ValidString(opts.After) {
		return listQuery{}, errorf("invalid_after", "after must be the next of the page before (UTF-8), got %s", quoted(opts.After))
	}
	return listQuery{seq: seq, q: q, opts: opts}, nil
}

// list reads a listing request and lists the page it asks for, of the names in
// the token's scope: one List, as many as the scope's ranges the page reaches.
func (s sequencers) list(c echo.Context, extra ...string) (listQuery, counters.Page, error) {
	lq, err := s.listOptions(c, extra...)
	if err != nil {
		return listQuery{}, counters.Page{}, err
	}
	page, err := scopeOf(c).listIn(c.Request().Context(), lq.seq, lq.opts)
	if err != nil {
		return listQuery{}, counters.Page{}, err
	}
	return lq, page, nil
}

// listSequences serves GET /seq[?limit=N][&after=NAME][&prefix=P][&strategy=…]:
// one page of sequences, in order of name.
func listSequences(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		lq, page, err := seqs.list(c, "int64")
		if err != nil {
			return err
		}
		asStrings, err := int64Param(lq.q)
		if err != nil {
			return err
		}
		entries := make([]listEntry, len(page.Sequences))
		for i, s := range page.Sequences {
			entries[i].Name = s.Name
			if s.Err != nil {
				e := classify(s.Err)
				entries[i].Error = &errorDetail{Code: e.code, Message: e.message}
			} else {
				entries[i].sequenceResponse = sequenceOf(s)
			}
		}
		return answerJSON(c, asStrings, listResponse{Sequences: entries, Next: page.Next})
	}
}
