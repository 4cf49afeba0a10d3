package httpapi_test

import (
	"fmt"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/snowflake"
)

// Responses of GET /seq/{name}/status, as a client reads them.
type (
	blockJSON struct {
		First     int64 `json:"first"`
		Last      int64 `json:"last"`
		Remaining int64 `json:"remaining"`
	}
	seqStatus struct {
		Name        string     `json:"name"`
		Mode        string     `json:"mode"`
		Current     *blockJSON `json:"current"`
		Next        *blockJSON `json:"next"`
		BlockSize   int64      `json:"block_size"`
		Rate        float64    `json:"rate"`
		LastFetchMS float64    `json:"last_fetch_ms"`
		LastError   string     `json:"last_error"`
		Served      int64      `json:"served"`
		Skipped     int64      `json:"skipped"`
		Returned    int64      `json:"returned"`
	}
)

// cachedStatus is a cached sequence's blocks as an instance reports them.
var cachedStatus = blocks.Status{
	Current:   blocks.Block{First: 2961, Last: 3000, Remaining: 40},
	Next:      blocks.Block{First: 3001, Last: 5000, Remaining: 2000},
	BlockSize: 2000, Rate: 812.5, LastFetch: 1500 * time.Microsecond, LastFetchAt: time.Unix(1_700_000_000, 0),
	Fetched: 5000, Served: 2958, Skipped: 2,
}

// TestSequenceStatus checks GET /seq/{name}/status: the mode and returned as
// stored, the rest from this instance's blocks, and nulls and zeros without them.
func TestSequenceStatus(t *testing.T) {
	s := newServer(t)
	s.counter.StoreSequence(seqd.Sequence{Name: "orders", Value: 5000, Mode: seqd.ModeCached,
		Blocks: seqd.BlockCounts{Reserved: 5000, Served: 2000, Returned: 120}})
	s.counter.SetBlockStatus("orders", cachedStatus)
	rec := s.get(t, "/seq/orders/status")
	got := decode[seqStatus](t, rec, http.StatusOK)
	want := seqStatus{
		Name: "orders", Mode: "cached",
		Current:   &blockJSON{2961, 3000, 40},
		Next:      &blockJSON{3001, 5000, 2000},
		BlockSize: 2000, Rate: 812.5, LastFetchMS: 1.5, Served: 2958, Skipped: 2, Returned: 120,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status = %s\nwant %+v", rec.Body, want)
	}
	if strings.Contains(rec.Body.String(), "last_error") {
		t.Errorf("status %s has last_error, want it only after a failed fetch", rec.Body)
	}

	// The current block used up, the next not fetched yet, the last fetch failed.
	failing := cachedStatus
	failing.Current, failing.Next, failing.LastError = blocks.Block{}, blocks.Block{}, "backend unavailable"
	s.counter.SetBlockStatus("orders", failing)
	got = decode[seqStatus](t, s.get(t, "/seq/orders/status"), http.StatusOK)
	if got.Current != nil || got.Next != nil || got.LastError != "backend unavailable" {
		t.Errorf("status without blocks = %+v, want current and next null and the last error", got)
	}

	// A strict sequence, or one this instance holds no blocks of.
	s.counter.Store("plain", 7)
	rec = s.get(t, "/seq/plain/status")
	want = seqStatus{Name: "plain", Mode: "strict"}
	if got := decode[seqStatus](t, rec, http.StatusOK); got != want {
		t.Errorf("strict status = %+v, want %+v", got, want)
	}
	if body := compactJSON(t, rec.Body.Bytes()); !strings.Contains(body, `"current":null,"next":null`) {
		t.Errorf("strict status %s: want current and next null", body)
	}

	// The optimistic strategy has neither modes nor blocks.
	s.optimistic.Store("orders", 3)
	if got := decode[seqStatus](t, s.get(t, "/seq/orders/status?strategy=optimistic"), http.StatusOK); got != (seqStatus{Name: "orders", Mode: "strict"}) {
		t.Errorf("optimistic status = %+v", got)
	}

	// A rate JSON cannot carry is 0, not a failed answer.
	nan := cachedStatus
	nan.Rate = math.NaN()
	s.counter.SetBlockStatus("orders", nan)
	if got := decode[seqStatus](t, s.get(t, "/seq/orders/status"), http.StatusOK); got.Rate != 0 {
		t.Errorf("rate NaN answered as %v, want 0", got.Rate)
	}

	wantError(t, s.get(t, "/seq/nope/status"), http.StatusNotFound, "sequence_not_found")
	wantError(t, s.get(t, "/seq/-x/status"), http.StatusBadRequest, "invalid_name")
	wantError(t, s.get(t, "/seq/orders/status?count=1"), http.StatusBadRequest, "unknown_parameter")
	wantError(t, s.get(t, "/seq/orders/status?strategy=magic"), http.StatusBadRequest, "invalid_strategy")
	wantError(t, s.serve(t, newRequest(http.MethodPost, "/seq/orders/status", "")), http.StatusMethodNotAllowed, "method_not_allowed")
}

// TestStatusPage checks GET /status: an HTML page without script, one row per
// sequence in order, blocks where this instance has them, the unusable record
// marked, and everything escaped.
func TestStatusPage(t *testing.T) {
	s := newServer(t)
	counter := s.counter
	counter.StoreInvalid("broken", fmt.Errorf(`counters: list: %w: seq is a string "<script>alert(1)</script>"`, counters.ErrInvalidCounter))

	rec := s.get(t, "/status")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /status: %d %s", rec.Code, rec.Body)
	}
	wantHTML(t, rec.Header())
	if page := rec.Body.String(); !strings.Contains(page, "broken") || strings.Contains(page, "<script>") {
		t.Errorf("page with one unusable record: want it listed and escaped:\n%s", page)
	}

	counter.StoreSequence(seqd.Sequence{Name: "orders", Value: 5000, Mode: seqd.ModeCached, MinBlock: 100, MaxBlock: 2000})
	withError := cachedStatus
	withError.LastError = `fetch: <b>timeout</b> & "more"`
	counter.SetBlockStatus("orders", withError)
	counter.Store("plain", 7)
	counter.StoreSequence(seqd.Sequence{Name: "invoices", Value: 42, Mode: seqd.ModeStrict, Period: "month", Format: "INV-{yyyy}-{MM}-{seq:6}", PeriodKey: "2026-11"})

	rec = s.get(t, "/status")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /status: %d %s", rec.Code, rec.Body)
	}
	wantHTML(t, rec.Header())
	page := rec.Body.String()
	for _, want := range []string{
		"<!DOCTYPE html>",
		// the unusable record, marked, its message escaped
		`<tr class="bad"><td>broken</td>`,
		`is a string &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;`,
		// a cached sequence with this instance's blocks
		`<tr><td>orders</td><td class="text">cached</td><td>5000</td><td>100–2000</td>`,
		`<td>2961–3000 (40 left)</td><td>3001–5000 (2000 left)</td><td>2000</td><td>812.5/s</td><td>1.5 ms</td><td>2958</td><td>2</td>`,
		`fetch: &lt;b&gt;timeout&lt;/b&gt; &amp; &#34;more&#34;`,
		// a strict sequence without blocks
		`<tr><td>plain</td><td class="text">strict</td><td>7</td><td><span class="none">default</span></td><td class="none" colspan="8">no blocks in this instance</td></tr>`,
		// a periodic sequence: its value and the period it belongs to
		`<tr><td>invoices</td><td class="text">strict</td><td>42 <span class="period">in 2026-11</span></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	for _, unwanted := range []string{"<script", "<b>", "javascript:"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("the page holds %q:\n%s", unwanted, page)
		}
	}
	if handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`).FindString(page); handler != "" {
		t.Errorf("the page has an event handler %q:\n%s", handler, page)
	}
	if b, o, p := strings.Index(page, ">broken<"), strings.Index(page, ">orders<"), strings.Index(page, ">plain<"); !(b < o && o < p) {
		t.Errorf("rows not in the List's order (broken %d, orders %d, plain %d)", b, o, p)
	}

	wantError(t, s.get(t, "/status?strategy=magic"), http.StatusBadRequest, "invalid_strategy")
	wantError(t, s.get(t, "/status?x=1"), http.StatusBadRequest, "unknown_parameter")
}

// TestStatusPageEmpty checks the page of a strategy without sequences, and that
// ?strategy= picks the sequencer.
func TestStatusPageEmpty(t *testing.T) {
	s := newServer(t)
	s.counter.Store("orders", 1)
	rec := s.get(t, "/status?strategy=optimistic")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /status: %d %s", rec.Code, rec.Body)
	}
	wantHTML(t, rec.Header())
	if page := rec.Body.String(); !strings.Contains(page, "seqd: optimistic sequences") || !strings.Contains(page, "No sequences yet.") || strings.Contains(page, "orders") {
		t.Errorf("empty optimistic page:\n%s", page)
	}
}

// TestStatusPageSnowflake: the status page says the snowflake layout and the
// worker id held until when, or that none is held.
func TestStatusPageSnowflake(t *testing.T) {
	until := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	held := newServer(t, withSnowflake(t, snowflake.JS53, 3), func(c *httpapi.Config) {
		c.SnowflakeLease = func() snowflake.LeaseStatus { return snowflake.LeaseStatus{Held: true, Worker: 3, Until: until} }
	})
	if page := held.get(t, "/status").Body.String(); !strings.Contains(page, "Snowflake ids: js53 layout; worker id 3, leased until 2026-11-26T20:00:00.000Z") {
		t.Errorf("status page of an instance holding worker id 3:\n%s", page)
	}
	none := newServer(t)
	if page := none.get(t, "/status").Body.String(); !strings.Contains(page, "Snowflake ids: twitter layout; no worker id held") {
		t.Errorf("status page of an instance holding no worker id:\n%s", page)
	}
}

// wantHTML asserts an HTML answer that runs no script.
func wantHTML(t testing.TB, h http.Header) {
	t.Helper()
	if mt, params, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "text/html" || !strings.EqualFold(params["charset"], "utf-8") {
		t.Errorf("Content-Type %q, want text/html; charset=utf-8", h.Get("Content-Type"))
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q, want default-src 'none' and no script source", csp)
	}
}

// TestStatusPagePaging checks the status page's paging: at most limit rows, a
// plain form that asks for a prefix and keeps the strategy and limit, a next link
// exactly when more follow, a link back to the first page, the prefix escaped,
// and a policy that lets the form submit to seqd and nowhere else.
func TestStatusPagePaging(t *testing.T) {
	s := newServer(t)
	for _, name := range []string{"a1", "a2", "a3", "b1", "b2"} {
		s.counter.Store(name, 1)
	}
	rec := s.get(t, "/status?limit=2")
	wantHTML(t, rec.Header())
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") {
		t.Errorf("Content-Security-Policy %q, want form-action 'self': the prefix form submits to seqd", csp)
	}
	page := rec.Body.String()
	for _, want := range []string{
		`<form method="get">`,
		`<input name="prefix" value=""`,
		`<input type="hidden" name="limit" value="2">`,
		`<a href="?after=a2&amp;limit=2" rel="next">Next page, after a2</a>`,
		"<td>a1</td>", "<td>a2</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/status?limit=2 lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<td>a3</td>") || strings.Contains(page, "First page") || strings.Contains(page, `name="strategy"`) {
		t.Errorf("/status?limit=2: a third row, a first-page link or a strategy field:\n%s", page)
	}

	page = s.get(t, "/status?limit=2&after=a2&prefix=a&strategy=counter").Body.String()
	for _, want := range []string{
		`<input name="prefix" value="a"`,
		`<input type="hidden" name="strategy" value="counter">`,
		`<a href="?limit=2&amp;prefix=a&amp;strategy=counter">First page</a>`,
		"<td>a3</td>",
		`after “a2”`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the second page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, `rel="next"`) || strings.Contains(page, "<td>b1</td>") {
		t.Errorf("the last page of prefix a has a next link or a name without the prefix:\n%s", page)
	}
	if page := s.get(t, "/status?prefix=c").Body.String(); !strings.Contains(page, "No sequences here.") {
		t.Errorf("an empty prefix page:\n%s", page)
	}
	wantError(t, s.get(t, "/status?prefix=%3Cb%3E"), http.StatusBadRequest, "invalid_prefix")
	wantError(t, s.get(t, "/status?limit=1001"), http.StatusBadRequest, "invalid_limit")
}

// TestStatusPageBasic: with client tokens in force, GET /status without a token
// answers 401 with a Basic challenge, so that a browser asks its user; HTTP
// Basic with any user name and a token as the password opens it, beside a
// bearer token, and shows only the names in that token's scope. The API's
// routes take no Basic credentials and ask for none.
func TestStatusPageBasic(t *testing.T) {
	tenant, err := httpapi.ParseScope("a*")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := httpapi.NewKeyring([]httpapi.Token{{Secret: clientToken}, {Secret: clientToken2, Scope: tenant}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(c *httpapi.Config) { c.Keys = keys })
	for _, name := range []string{"a1", "a2", "b1"} {
		s.counter.Store(name, 1)
	}
	basic := func(user, password string) string {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.SetBasicAuth(user, password)
		return r.Header.Get("Authorization")
	}
	get := func(target, auth string) *httptest.ResponseRecorder {
		return s.serve(t, newRequest(http.MethodGet, target, "", "Authorization", auth))
	}

	for _, auth := range []string{"", basic("ops", "wrong"), basic("ops", ""), basic(clientToken, "x"), "Bearer wrong"} {
		rec := get("/status", auth)
		wantError(t, rec, http.StatusUnauthorized, "unauthorized")
		if got := rec.Header().Values("WWW-Authenticate"); !slices.Contains(got, `Basic realm="seqd"`) {
			t.Errorf("GET /status with %q: WWW-Authenticate %q, want Basic realm=\"seqd\" among them", auth, got)
		}
	}
	for _, tt := range []struct {
		auth       string
		want, hide []string
	}{
		{basic("anyone", clientToken), []string{"<td>a1</td>", "<td>a2</td>", "<td>b1</td>"}, nil},
		{basic("", clientToken), []string{"<td>a1</td>", "<td>b1</td>"}, nil},
		{"Bearer " + clientToken, []string{"<td>a1</td>", "<td>b1</td>"}, nil},
		{basic("tenant-a", clientToken2), []string{"<td>a1</td>", "<td>a2</td>"}, []string{"<td>b1</td>"}},
		{"Bearer " + clientToken2, []string{"<td>a1</td>"}, []string{"<td>b1</td>"}},
	} {
		rec := get("/status", tt.auth)
		if rec.Code != http.StatusOK {
			t.Errorf("GET /status with %q: %d %s", tt.auth, rec.Code, rec.Body)
			continue
		}
		page := rec.Body.String()
		for _, w := range tt.want {
			if !strings.Contains(page, w) {
				t.Errorf("GET /status with %q lacks %s", tt.auth, w)
			}
		}
		for _, h := range tt.hide {
			if strings.Contains(page, h) {
				t.Errorf("GET /status with %q shows %s, outside the token's scope", tt.auth, h)
			}
		}
	}

	// Basic credentials, which a browser sends on its own, open nothing else.
	for _, target := range []string{"/seq", "/seq/a1", "/seq/a1/status", "/oid"} {
		rec := get(target, basic("ops", clientToken))
		wantError(t, rec, http.StatusUnauthorized, "unauthorized")
		for _, v := range rec.Header().Values("WWW-Authenticate") {
			if strings.HasPrefix(v, "Basic") {
				t.Errorf("GET %s: WWW-Authenticate %q: the API must not ask a browser for Basic credentials", target, v)
			}
		}
	}
	rec := s.serve(t, newRequest(http.MethodPost, "/seq/a1/next", "", "Authorization", basic("ops", clientToken)))
	wantError(t, rec, http.StatusUnauthorized, "unauthorized")
}

// TestStatusDashboard checks the pictures the status page draws for each
// sequence with blocks: how much of the current block is used, the rate of each
// of the last minutes and now, when the next fetch comes; ?sort=rate; paging
// links at the top as at the bottom; names that wrap but never inside a number.
func TestStatusDashboard(t *testing.T) {
	s := newServer(t)
	for _, name := range []string{"cold", "hot", "orders", "plain", "warm", "t.2026.9223372036854775807"} {
		s.counter.StoreSequence(seqd.Sequence{Name: name, Value: 5000, Mode: seqd.ModeCached})
	}
	orders := cachedStatus
	orders.CurrentSize, orders.Rate, orders.UntilFetch = 2000, 80, 400 // 1960 of 2000 used
	orders.Current = blocks.Block{First: 2961, Last: 3000, Remaining: 40}
	orders.RateHistory[blocks.RateHistoryLen-3], orders.RateHistory[blocks.RateHistoryLen-2] = 100, 50
	orders.RateHistoryKnown = 3
	s.counter.SetBlockStatus("orders", orders)
	for name, st := range map[string]blocks.Status{
		"cold":                       {Rate: 1, UntilFetch: 400, CurrentSize: 100, Current: blocks.Block{First: 1, Last: 100, Remaining: 100}},
		"hot":                        {Rate: 500, Fetching: true},
		"warm":                       {Rate: 50},
		"t.2026.9223372036854775807": {},
	} {
		s.counter.SetBlockStatus(name, st)
	}

	page := s.get(t, "/status").Body.String()
	row := func(name string) string {
		t.Helper()
		i := strings.Index(page, "<tr><td>"+name+"</td>")
		if i < 0 {
			t.Fatalf("no row of %s:\n%s", name, page)
		}
		return page[i : i+strings.Index(page[i:], "</tr>")]
	}
	ordersRow := row("orders")
	for _, want := range []string{
		// the bar: 98 % used, past 90 % marked
		`aria-label="1960 of 2000 used"`, `<rect class="fill high" width="98.0" height="10"/>`, `98%`,
		// the chart: 100, 50 and 0 values a second in the last whole minutes, 80 now, scaled to 100
		`aria-label="values a second, each of the last 3 minutes with a rate, then now: 100.0/s, 50.0/s, 0.0/s, 80.0/s"`,
		`<rect x="71" y="1.00" width="8" height="23.00"/>`,
		`<rect x="81" y="12.50" width="8" height="11.50"/>`,
		`<rect class="now" x="101" y="5.60" width="8" height="18.40"/>`,
		// 400 values before the next fetch, at 80 a second
		`<td>in 5 s</td>`,
	} {
		if !strings.Contains(ordersRow, want) {
			t.Errorf("the row of orders lacks %s:\n%s", want, ordersRow)
		}
	}
	if n := strings.Count(ordersRow, "<rect x=") + strings.Count(ordersRow, `<rect class="now"`); n != 4 {
		t.Errorf("the chart of orders has %d bars, want 4 (3 minutes and now):\n%s", n, ordersRow)
	}
	for name, want := range map[string]string{
		"cold": "<td>in 6 min</td>", "hot": "<td>now</td>", "warm": "<td>at the next request</td>",
		// the name as the page writes it: no minute past yet, so only now
		`<span title="t.2026.9223372036854775807">t.<span class="num">2026</span>.<span class="num">9223372036854775807</span></span>`: `aria-label="values a second in the last minute: 0.0/s"`,
	} {
		if r := row(name); !strings.Contains(r, want) {
			t.Errorf("the row of %s lacks %s:\n%s", name, want, r)
		}
	}
	if r := row("cold"); !strings.Contains(r, `aria-label="0 of 100 used"`) {
		t.Errorf("the row of cold lacks its unused block's bar:\n%s", r)
	}
	if !strings.Contains(page, `<tr><td><span title="t.2026.9223372036854775807">t.<span class="num">2026</span>.<span class="num">9223372036854775807</span></span></td>`) {
		t.Errorf("a name with numbers: want its numbers kept whole:\n%s", page)
	}

	order := func(page string, names ...string) []int {
		at := make([]int, len(names))
		for i, n := range names {
			at[i] = strings.Index(page, "<tr><td>"+n+"</td>")
		}
		return at
	}
	if at := order(page, "cold", "hot", "orders", "plain", "warm"); !slices.IsSorted(at) {
		t.Errorf("by default rows not in order of name: %v", at)
	}
	if !strings.Contains(page, `<a href="?sort=rate">this page by rate</a>`) {
		t.Errorf("the page lacks the link to sort by rate:\n%s", page)
	}
	byRate := s.get(t, "/status?sort=rate").Body.String()
	// hot 500, orders 80, warm 50, cold 1, then plain and t.… at 0, in order of name
	if at := order(byRate, "hot", "orders", "warm", "cold", "plain"); !slices.IsSorted(at) || at[0] < 0 {
		t.Errorf("?sort=rate: rows at %v, want hot, orders, warm, cold, plain", at)
	}
	if !strings.Contains(byRate, `<input type="hidden" name="sort" value="rate">`) || !strings.Contains(byRate, `<a href="?">by name</a>`) {
		t.Errorf("?sort=rate: want the form to keep the order, and a link back to order by name:\n%s", byRate)
	}
	wantError(t, s.get(t, "/status?sort=hot"), http.StatusBadRequest, "invalid_sort")

	// Paging links at the top, before the table, as at the bottom.
	paged := s.get(t, "/status?limit=2&sort=rate").Body.String()
	next := `<a href="?after=hot&amp;limit=2&amp;sort=rate" rel="next">`
	if strings.Count(paged, next) != 2 || strings.Index(paged, next) > strings.Index(paged, "<table") {
		t.Errorf("want the next page's link, keeping the order, before the table and after it:\n%s", paged)
	}
}

// TestStatusPageCrossSiteFetch: a browser that holds the status page's Basic
// credentials sends them with every request to seqd, whichever site's page
// makes it. Another site cannot read the answer, but it can time it: a page's
// fetch('/status?prefix=…', {mode: 'no-cors', credentials: 'include'}), or an
// <img>, with one prefix after another, learns from how long each listing takes
// which names exist in the token's scope (XS-Search). So a request for /status
// that the browser marks as another origin's gets 403 cross_site, unless it
// is a navigation to the page (a link from another site): its user sees the
// page, and the linking site reads nothing.
func TestStatusPageCrossSiteFetch(t *testing.T) {
	keys, err := httpapi.NewKeyring([]httpapi.Token{{Secret: clientToken}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(c *httpapi.Config) { c.Keys = keys })
	s.counter.Store("tenant-b.secret", 1)
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth("ops", clientToken)
	basic := r.Header.Get("Authorization")
	const target = "/status?prefix=tenant-b.s&limit=1"

	for _, tt := range []struct {
		what   string
		header []string
	}{
		{"an <img> of another site", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"}},
		{"another site's fetch, no-cors", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "empty"}},
		{"another port of localhost's fetch", []string{"Sec-Fetch-Site", "same-site", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty", "Origin", "http://localhost:3000"}},
		{"another site's iframe", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe"}},
		{"a fetch from a browser without fetch metadata", []string{"Origin", "http://attacker.example"}},
	} {
		rec := s.serve(t, newRequest(http.MethodGet, target, "", append([]string{"Authorization", basic}, tt.header...)...))
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s with the page's Basic credentials: %d (page listed), want 403 cross_site", tt.what, rec.Code)
			continue
		}
		wantError(t, rec, http.StatusForbidden, "cross_site")
	}
	for _, tt := range []struct {
		what   string
		header []string
	}{
		{"a link from another site", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}},
		{"the page's own form", []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}},
		{"a bookmark", []string{"Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}},
		{"curl", nil},
	} {
		rec := s.serve(t, newRequest(http.MethodGet, target, "", append([]string{"Authorization", basic}, tt.header...)...))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s: %d %.200s, want the page", tt.what, rec.Code, rec.Body)
		}
	}
}

// Over plain http to an address that is not loopback (seqd on a LAN address),
// browsers send neither Sec-Fetch-* nor, with a GET, Origin: another site's
// <img> or no-cors fetch of /status then carries the page's saved Basic
// credentials and nothing that marks it as another site's, and is answered with
// the token's listing, which that site can time, prefix after prefix (the
// XS-Search TestStatusPageCrossSiteFetch closes where the browser says where a
// request comes from). A navigation (Upgrade-Insecure-Requests, which a page
// cannot add to a no-cors request) and curl still get the page.
func TestStatusPageCrossSiteWithoutFetchMetadata(t *testing.T) {
	keys, err := httpapi.NewKeyring([]httpapi.Token{{Secret: clientToken}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(c *httpapi.Config) { c.Keys, c.ListenAddr = keys, "0.0.0.0:8080" })
	s.counter.Store("tenant-b.secret", 1)
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth("ops", clientToken)
	basic := r.Header.Get("Authorization")
	const target = "/status?prefix=tenant-b.s&limit=1"
	const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	serve := func(header ...string) *httptest.ResponseRecorder {
		req := newRequest(http.MethodGet, target, "", append([]string{"Authorization", basic}, header...)...)
		req.Host = "192.0.2.10:8080"
		return s.serve(t, req)
	}
	for _, tt := range []struct {
		what   string
		header []string
	}{
		{"another site's <img>", []string{"User-Agent", chrome, "Accept", "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"}},
		{"another site's no-cors fetch", []string{"User-Agent", chrome, "Accept", "*/*"}},
	} {
		if rec := serve(tt.header...); rec.Code != http.StatusForbidden {
			t.Errorf("%s of /status on a LAN address with the page's Basic credentials: %d (page listed), want 403 cross_site", tt.what, rec.Code)
		}
	}
	for _, tt := range []struct {
		what   string
		header []string
	}{
		{"a link followed", []string{"User-Agent", chrome, "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "Upgrade-Insecure-Requests", "1"}},
		{"curl", []string{"User-Agent", "curl/8.11.1"}},
	} {
		if rec := serve(tt.header...); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s: %d %.200s, want the page", tt.what, rec.Code, rec.Body)
		}
	}
}
