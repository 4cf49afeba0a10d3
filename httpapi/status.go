package httpapi

import (
	"bytes"
	"cmp"
	_ "embed"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/snowflake"
)

// blockReporter is a Sequencer that serves cached sequences from blocks (the
// counter strategy's): BlockStatus reports this process's blocks of name, false
// when it holds none. It reads memory only, so it takes no context.
type blockReporter interface {
	BlockStatus(name string) (blocks.Status, bool)
}

// blockStatusOf returns this instance's blocks of name, if seq has any.
func blockStatusOf(seq counters.Sequencer, name string) (blocks.Status, bool) {
	if r, ok := seq.(blockReporter); ok {
		return r.BlockStatus(name)
	}
	return blocks.Status{}, false
}

// blockResponse is the unused rest of a block.
type blockResponse struct {
	First     int64 `json:"first"`
	Last      int64 `json:"last"`
	Remaining int64 `json:"remaining"`
}

// statusResponse is one sequence as this instance serves it: GET
// /seq/{name}/status answers it, and GET /status shows one a row. The mode and
// returned are as stored; the rest is this instance's blocks, zero when it holds
// none.
type statusResponse struct {
	Name        string         `json:"name"`
	Mode        seqd.Mode      `json:"mode"`
	Current     *blockResponse `json:"current"` // null: no block
	Next        *blockResponse `json:"next"`
	BlockSize   int64          `json:"block_size"`
	Rate        float64        `json:"rate"` // values a second
	LastFetchMS float64        `json:"last_fetch_ms"`
	LastError   string         `json:"last_error,omitempty"`
	Served      int64          `json:"served"`   // values this instance served from its blocks
	Skipped     int64          `json:"skipped"`  // values it passed over to keep a count contiguous
	Returned    int64          `json:"returned"` // values every instance gave back at a clean stop
}

// instanceStatus is s with this instance's blocks st.
func instanceStatus(s counters.Sequence, st blocks.Status) statusResponse {
	return statusResponse{
		Name:        s.Name,
		Mode:        modeOf(s),
		Current:     blockOf(st.Current),
		Next:        blockOf(st.Next),
		BlockSize:   st.BlockSize,
		Rate:        finite(st.Rate),
		LastFetchMS: float64(st.LastFetch.Microseconds()) / 1000,
		LastError:   st.LastError,
		Served:      st.Served,
		Skipped:     st.Skipped,
		Returned:    s.Blocks.Returned,
	}
}

func blockOf(b blocks.Block) *blockResponse {
	if b.Remaining == 0 {
		return nil
	}
	return &blockResponse{First: b.First, Last: b.Last, Remaining: b.Remaining}
}

// finite is x, or 0 for what JSON cannot carry: a rate measured over no time
// must not cost the answer a 500.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// sequenceStatus serves GET /seq/{name}/status[?strategy=…].
func sequenceStatus(seqs sequencers) echo.HandlerFunc {
	return func(c echo.Context) error {
		seq, s, asStrings, err := seqs.current(c)
		if err != nil {
			return err
		}
		st, _ := blockStatusOf(seq, s.Name)
		return answerJSON(c, asStrings, instanceStatus(s, st))
	}
}

//go:embed status.html
var statusHTML string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{"name": nameHTML}).Parse(statusHTML))

// statusRow is one sequence on the status page.
type statusRow struct {
	statusResponse
	Value     int64
	MinBlock  int64
	MaxBlock  int64
	HasBlocks bool   // this instance reported blocks for it
	Error     string // the record seqd cannot use; nothing else is set
	Use       blockUse
	Chart     rateChart
	NextFetch string
}

// statusPageData is what the status page shows: one page of sequences, a form to
// choose a prefix, and links to the first page and the next.
type statusPageData struct {
	Snowflake snowflakeHealth
	Strategy  string
	At        string
	Rows      []statusRow
	Limit     int
	Prefix    string
	After     string
	ByRate    bool          // ?sort=rate: the page's rows by rate, the highest first
	Hidden    []hiddenField // the form's other parameters, kept when it asks for a prefix
	First     string        // the first page's query, when this is not the first page
	Next      string        // the next page's query, when more sequences follow
	NextName  string        // the page's last name, where the next starts
	SortLink  string        // the query of this page in the other order
	History   int           // minutes the charts cover
}

// hiddenField is a query parameter the prefix form sends as it came.
type hiddenField struct{ Name, Value string }

// statusPageCSP allows the page its inline style and its own form, and nothing
// else: no script, no fetch, no frame.
const statusPageCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// statusPageHandler serves GET /status[?limit=N][&after=NAME][&prefix=P][&strategy=…][&sort=rate]:
// a page of the strategy's sequences, as GET /seq lists them, with this
// instance's blocks, for operators. With sort=rate the page's rows are in
// order of rate, the highest first; the page is still the next names in order.
func statusPageHandler(seqs sequencers, layout snowflake.Layout, lease func() snowflake.LeaseStatus) echo.HandlerFunc {
	return func(c echo.Context) error {
		lq, page, err := seqs.list(c, "sort")
		if err != nil {
			return err
		}
		byRate := false
		switch v, ok := lq.q["sort"]; {
		case !ok || v == "name":
		case v == "rate":
			byRate = true
		default:
			return errorf("invalid_sort", "sort must be name or rate, got %s", quoted(v))
		}
		data := statusPageData{
			Snowflake: snowflakeHealthOf(layout, lease),
			Strategy:  lq.seq.Strategy(),
			At:        time.Now().UTC().Format(time.RFC3339),
			Rows:      make([]statusRow, len(page.Sequences)),
			Limit:     lq.opts.Limit,
			Prefix:    lq.opts.Prefix,
			After:     lq.opts.After,
			ByRate:    byRate,
			History:   int(blocks.RateHistoryLen * blocks.RateWindow / time.Minute),
		}
		for _, k := range []string{"strategy", "limit", "sort"} {
			if v, ok := lq.q[k]; ok {
				data.Hidden = append(data.Hidden, hiddenField{k, v})
			}
		}
		if lq.opts.After != "" {
			data.First = pageQuery(lq.q, "")
		}
		if page.Next != "" {
			data.Next, data.NextName = pageQuery(lq.q, page.Next), page.Next
		}
		data.SortLink = sortQuery(lq.q, !byRate)
		for i, s := range page.Sequences {
			row := &data.Rows[i]
			if s.Err != nil {
				row.Name, row.Error = s.Name, classify(s.Err).message
				continue
			}
			st, ok := blockStatusOf(lq.seq, s.Name)
			row.statusResponse = instanceStatus(s, st)
			row.Value, row.MinBlock, row.MaxBlock, row.HasBlocks = s.Value, s.MinBlock, s.MaxBlock, ok
			if ok {
				row.Use, row.Chart, row.NextFetch = useOf(st), chartOf(st), nextFetchOf(st)
			}
		}
		if byRate {
			// Stable: equal rates stay in order of name.
			slices.SortStableFunc(data.Rows, func(a, b statusRow) int { return cmp.Compare(b.Rate, a.Rate) })
		}
		var buf bytes.Buffer
		if err := statusPage.Execute(&buf, data); err != nil {
			return err
		}
		c.Response().Header().Set("Content-Security-Policy", statusPageCSP)
		return c.HTMLBlob(http.StatusOK, buf.Bytes())
	}
}

// pageQuery is the query string of the page of q after the name after (the
// first page for ""): q's other parameters as they came.
func pageQuery(q map[string]string, after string) string {
	v := url.Values{}
	for k, x := range q {
		if k != "after" {
			v.Set(k, x)
		}
	}
	if after != "" {
		v.Set("after", after)
	}
	return "?" + v.Encode()
}

// sortQuery is the query string of q's page in order of rate, or of name.
func sortQuery(q map[string]string, byRate bool) string {
	v := url.Values{}
	for k, x := range q {
		if k != "sort" {
			v.Set(k, x)
		}
	}
	if byRate {
		v.Set("sort", "rate")
	}
	return "?" + v.Encode()
}
