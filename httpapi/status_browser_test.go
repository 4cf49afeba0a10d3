package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// The windows the status page is checked in: a laptop's, and a phone's (an
// iPhone 14's viewport, 390 × 844 CSS pixels).
var statusWindows = []struct {
	name          string
	width, height int
}{
	{"desktop", 1280, 800},
	{"phone", 390, 844},
}

// TestStatusPageInBrowser renders the status page in headless Chromium at
// 1280 × 800 and 390 × 844, with the widest rows seqd can show (64-character
// names, names of 19-digit numbers, values and blocks at the largest integers,
// a long fetch error, an unusable record's long message) beside ordinary ones,
// and checks in the rendered page that:
//
//   - nothing reaches past the window sideways, except inside a region made to
//     scroll sideways (the table's, whose name column stays put), and no cell's
//     text spills out of its cell;
//   - no number is broken over two lines (a value, a block's bounds, a rate, a
//     run of digits in a name);
//   - every sequence with blocks has its rate chart, drawn, with bars;
//   - the next page's link is on the first screen, above the table;
//   - on the phone each sequence is a card (a grid), not a squeezed table row;
//   - the colours are light, or dark when the browser is set to dark.
//
// It skips without Chromium: apt-get install chromium, or set SEQD_CHROMIUM to
// a Chromium or Chrome binary. With SEQD_SCREENSHOTS=DIR it also writes
// status-desktop.png, status-phone.png and status-phone-dark.png there, for a
// person to look at (make screenshots).
//
// Chromium keeps its windows 500 pixels wide or more, so the page is shown in a
// frame of each size, in a larger window; a frame's page lays out, and answers
// its media queries, as in a window of the frame's size. The frame shows a copy
// of the page without its Content-Security-Policy (which forbids frames and
// script), with a script at its end that measures the page and writes what it
// found into the window's title, which --dump-dom prints.
func TestStatusPageInBrowser(t *testing.T) {
	browser := chromium(t)
	shots := os.Getenv("SEQD_SCREENSHOTS")
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	s := newServer(t)
	fillStatusPage(s)
	const target = "/status?limit=20"

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/harness": // a frame of the window's size, at the top left
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>waiting</title><style>html, body { margin: 0; padding: 0; background: #888; } iframe { border: 0; display: block; }</style></head>`+
				`<body><iframe src="/framed" width="%s" height="%s"></iframe></body></html>`, r.URL.Query().Get("w"), r.URL.Query().Get("h"))
		case "/framed":
			rec := httptest.NewRecorder()
			s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			if rec.Code != http.StatusOK {
				http.Error(w, rec.Body.String(), rec.Code)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, strings.Replace(rec.Body.String(), "</body>", "<script>"+measureStatusPage+"</script></body>", 1))
		default:
			s.handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	run := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			"--user-data-dir=" + t.TempDir()}, args...)
		cmd := exec.CommandContext(ctx, browser, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%.2000s", browser, strings.Join(args, " "), err, stderr.String())
		}
		return out
	}

	for _, win := range statusWindows {
		t.Run(win.name, func(t *testing.T) {
			harness := fmt.Sprintf("%s/harness?w=%d&h=%d", srv.URL, win.width, win.height)
			// The window holds the frame whole: Chromium's window has no less than
			// 500 pixels, and 143 of its height go to what headless keeps of a
			// browser's frame.
			size := fmt.Sprintf("--window-size=%d,%d", max(win.width, 500)+20, win.height+200)
			measure := func(extra ...string) statusVerdict {
				dom := string(run(append([]string{size, "--dump-dom"}, append(extra, harness)...)...))
				m := regexp.MustCompile(`<title>verdict (.*?)</title>`).FindStringSubmatch(dom)
				if m == nil {
					t.Fatalf("the page reported nothing; Chromium rendered:\n%.3000s", dom)
				}
				var v statusVerdict
				if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &v); err != nil {
					t.Fatalf("the page's report %q: %v", m[1], err)
				}
				return v
			}
			v := measure()
			checkStatusVerdict(t, win.width, win.height, v, win.name == "phone")
			if v.Dark || v.Background != "rgb(255, 255, 255)" {
				t.Errorf("in a browser set to light colours: dark %v, background %s; want white", v.Dark, v.Background)
			}
			if win.name == "phone" { // once is enough: the colours do not depend on the size
				dark := measure(darkMode...)
				checkStatusVerdict(t, win.width, win.height, dark, true)
				var r, g, b int
				if _, err := fmt.Sscanf(dark.Background, "rgb(%d, %d, %d)", &r, &g, &b); err != nil || !dark.Dark || r+g+b > 3*64 {
					t.Errorf("in a browser set to dark colours: dark %v, background %s; want a dark one", dark.Dark, dark.Background)
				}
			}

			if shots == "" {
				return
			}
			shoot := func(file string, extra ...string) {
				raw := filepath.Join(t.TempDir(), "window.png")
				run(append([]string{size, "--screenshot=" + raw}, append(extra, harness)...)...)
				path := filepath.Join(shots, file)
				cropPNG(t, raw, path, win.width, win.height)
				t.Logf("screenshot of the status page at %d × %d: %s", win.width, win.height, path)
			}
			shoot("status-" + win.name + ".png")
			if win.name == "phone" {
				shoot("status-phone-dark.png", darkMode...)
			}
		})
	}
}

// darkMode are the flags that set Chromium's colour scheme to dark, as a
// system's dark setting does (0 is blink's kDark).
var darkMode = []string{"--force-dark-mode", "--blink-settings=preferredColorScheme=0"}

// statusVerdict is what measureStatusPage found.
type statusVerdict struct {
	Width, Height, ClientWidth, ScrollWidth int
	Overflow                                []string // elements past the window's sides, outside a scroll region
	Spills                                  []string // cells whose text reaches out of them
	Broken                                  []string // numbers on more than one line
	Rows, RowsWithBlocks, Charts, DrawnBars int
	NextTop, TableTop                       float64 // the first next-page link's top, and the table's; -1 for none
	RowDisplay                              string  // a row's CSS display
	Scrolls                                 bool    // the table's region scrolls sideways (is wider inside than out)
	Dark                                    bool    // the browser asks for dark colours (prefers-color-scheme)
	Background                              string  // the page's, as CSS computes it
}

// checkStatusVerdict asserts the page's measures in a window of width × height.
func checkStatusVerdict(t *testing.T, width, height int, v statusVerdict, phone bool) {
	t.Helper()
	t.Logf("%d × %d: page %d wide, %d rows (%d with blocks), %d charts with %d bars drawn, next link at %.0f, table at %.0f, rows shown as %s, table region scrolls: %v",
		v.Width, v.Height, v.ScrollWidth, v.Rows, v.RowsWithBlocks, v.Charts, v.DrawnBars, v.NextTop, v.TableTop, v.RowDisplay, v.Scrolls)
	if v.Width != width || v.Height != height {
		t.Fatalf("the page was laid out in %d × %d, not %d × %d", v.Width, v.Height, width, height)
	}
	if v.ScrollWidth > v.ClientWidth {
		t.Errorf("the page is %d pixels wide, more than the %d-pixel window", v.ScrollWidth, v.ClientWidth)
	}
	for _, o := range v.Overflow {
		t.Errorf("reaches past the window, outside a scroll region: %s", o)
	}
	for _, s := range v.Spills {
		t.Errorf("text spills out of its cell: %s", s)
	}
	for _, b := range v.Broken {
		t.Errorf("a number broken over lines: %s", b)
	}
	if v.RowsWithBlocks == 0 || v.Charts != v.RowsWithBlocks || v.DrawnBars == 0 {
		t.Errorf("%d rows with blocks, %d rate charts, %d bars drawn: want a chart a row, with bars", v.RowsWithBlocks, v.Charts, v.DrawnBars)
	}
	if v.NextTop < 0 || v.NextTop > float64(height) || (v.TableTop >= 0 && v.NextTop > v.TableTop) {
		t.Errorf("the next page's link is at %.0f, the table at %.0f: want the link on the first %d pixels, above the table", v.NextTop, v.TableTop, height)
	}
	if phone && v.RowDisplay != "grid" {
		t.Errorf("on a phone a row is shown as %q, want a card (grid)", v.RowDisplay)
	}
}

// cropPNG writes the top left width × height of the PNG at from to to.
func cropPNG(t *testing.T, from, to string, width, height int) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", from, err)
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("screenshot %s: a %T cannot be cropped", from, img)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(out, sub.SubImage(image.Rect(0, 0, width, height))); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// fillStatusPage stores what the page must fit: the widest rows seqd can show
// and ordinary ones, with rates that rose over the last minutes, more than a
// page of them.
func fillStatusPage(s *server) {
	huge := int64(math.MaxInt64)
	var history [blocks.RateHistoryLen]float64
	for i := range history {
		history[i] = float64(100 * (i + 1) * (i + 1))
	}
	for i, name := range []string{"invoices", "orders", "tenant-a.users"} {
		used := int64(300 * (i + 1))
		rate := 812.5 * float64(i+1)
		var rising [blocks.RateHistoryLen]float64
		for w := range rising {
			rising[w] = rate * float64(w+1) / blocks.RateHistoryLen
		}
		s.counter.StoreSequence(seqd.Sequence{Name: name, Value: 120_000, Mode: seqd.ModeCached, MinBlock: 100, MaxBlock: 100_000})
		s.counter.SetBlockStatus(name, blocks.Status{
			Current:     blocks.Block{First: 100_001 + used, Last: 102_000, Remaining: 2000 - used},
			Next:        blocks.Block{First: 102_001, Last: 106_000, Remaining: 4000},
			CurrentSize: 2000, UntilFetch: 2000 - used + 400, BlockSize: 4000, Rate: rate,
			RateHistory: rising, RateHistoryKnown: 4 + 3*i, LastFetch: 1500 * time.Microsecond, Served: 90_000, Skipped: 12,
		})
	}
	s.counter.Store("plain", 7)
	for i := range 6 {
		name := fmt.Sprintf("w%d%s", i, strings.Repeat("w", 62))
		if i == 5 {
			name = "t.9223372036854775807.9223372036854775807.9223372036854775807"
		}
		s.counter.StoreSequence(seqd.Sequence{Name: name, Value: huge, Mode: seqd.ModeCached, MinBlock: seqd.MaxCount, MaxBlock: seqd.MaxCount,
			Blocks: seqd.BlockCounts{Reserved: huge, Served: huge, Returned: huge}})
		s.counter.SetBlockStatus(name, blocks.Status{
			Current:     blocks.Block{First: huge - 2*seqd.MaxCount + 2, Last: huge - seqd.MaxCount, Remaining: seqd.MaxCount - 1},
			Next:        blocks.Block{First: huge - seqd.MaxCount + 1, Last: huge, Remaining: seqd.MaxCount},
			CurrentSize: seqd.MaxCount, UntilFetch: huge, BlockSize: seqd.MaxCount, Rate: 1e12, RateHistory: history, RateHistoryKnown: i,
			LastFetch: time.Hour, Served: huge, Skipped: huge,
			LastError: "backend unavailable: " + strings.Repeat("server selection error, ", 10),
		})
	}
	s.counter.StoreInvalid("u"+strings.Repeat("W", 63), fmt.Errorf("counters: list: %w: the seq of %q is a string %q, want an integer",
		counters.ErrInvalidCounter, strings.Repeat("W", 40), strings.Repeat("x", 40)))
	for i := range 150 { // a next link
		s.counter.Store(fmt.Sprintf("z%03d", i), 1)
	}
}

// measureStatusPage runs at the end of the page and writes, into the title of
// the window that frames it, a statusVerdict.
const measureStatusPage = `(function () {
  const doc = document.documentElement, W = doc.clientWidth;
  const v = {Width: innerWidth, Height: innerHeight, ClientWidth: W, ScrollWidth: doc.scrollWidth,
    Overflow: [], Spills: [], Broken: [], Rows: 0, RowsWithBlocks: 0, Charts: 0, DrawnBars: 0,
    NextTop: -1, TableTop: -1, RowDisplay: "", Scrolls: false,
    Dark: matchMedia("(prefers-color-scheme: dark)").matches, Background: getComputedStyle(document.body).backgroundColor};
  const what = el => el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? "." + el.className : "") +
    " «" + (el.textContent || "").trim().slice(0, 60) + "»";
  // A region made to scroll sideways: overflow-x auto or scroll, itself inside the window.
  const scroller = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll") return p;
    }
    return null;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (el.tagName === "SCRIPT" || el.closest("svg") && el.tagName !== "svg") continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if ((r.right > W + 0.5 || r.left < -0.5) && !scroller(el)) v.Overflow.push(what(el) + " from " + Math.round(r.left) + " to " + Math.round(r.right));
    if ((el.tagName === "TD" || el.tagName === "TH") && el.scrollWidth > el.clientWidth + 1) v.Spills.push(what(el) + " " + el.scrollWidth + " in " + el.clientWidth);
  }
  const region = document.querySelector(".scroll");
  if (region) v.Scrolls = region.scrollWidth > region.clientWidth;
  // Every number of two characters or more must lie on one line.
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest("script, style, title, svg")) continue;
    for (const m of n.data.matchAll(/\d[\d.,]*\d/g)) {
      const range = document.createRange();
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) v.Broken.push(m[0] + " in " + what(p) + " on " + tops.size + " lines");
    }
  }
  const rows = document.querySelectorAll("tbody tr");
  v.Rows = rows.length;
  if (rows.length) v.RowDisplay = getComputedStyle(rows[0]).display;
  for (const tr of rows) {
    if (tr.querySelector("td.none[colspan]") || tr.classList.contains("bad")) continue;
    v.RowsWithBlocks++;
    const chart = tr.querySelector("svg.chart");
    if (!chart) continue;
    const cr = chart.getBoundingClientRect();
    if (cr.width < 40 || cr.height < 10) continue;
    v.Charts++;
    for (const bar of chart.querySelectorAll("rect")) {
      const br = bar.getBoundingClientRect();
      if (br.width >= 1 && br.height >= 1) v.DrawnBars++;
    }
  }
  const next = document.querySelector('a[rel="next"]');
  if (next) v.NextTop = next.getBoundingClientRect().top;
  const table = document.querySelector("table");
  if (table) v.TableTop = table.getBoundingClientRect().top;
  parent.document.title = "verdict " + JSON.stringify(v);
})();`

// chromium returns the Chromium to test with: SEQD_CHROMIUM, or the first of
// the usual names on PATH. It skips the test without one, and with -short.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := os.Getenv("SEQD_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if browser != "" {
			break
		}
		browser, _ = exec.LookPath(name)
	}
	if browser == "" {
		t.Skip("no Chromium found: apt-get install chromium (Debian, Ubuntu), or set SEQD_CHROMIUM to a Chromium or Chrome binary")
	}
	return browser
}
