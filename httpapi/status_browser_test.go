package httpapi_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
)

// statusWindow is the browser window the status page must fit without a
// horizontal scroll bar.
const statusWindow = 1280

// TestStatusPageFitsWindow renders the status page in headless Chromium, in a
// window 1280 pixels wide, with the widest rows seqd can show (64-character
// names, values and blocks at the largest integers, a long fetch error, an
// unusable record's long message), and checks that nothing is wider than the
// window. It skips without Chromium (apt-get install chromium; SEQD_CHROMIUM names
// another binary). With SEQD_STATUS_SCREENSHOT=FILE.png it also saves a
// screenshot of the page, for a person to look at.
//
// To check a running seqd by hand:
//
//	chromium --headless --no-sandbox --window-size=1280,900 --screenshot=status.png 'http://127.0.0.1:8080/status'
func TestStatusPageFitsWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := os.Getenv("SEQD_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if browser != "" {
			break
		}
		browser, _ = exec.LookPath(name)
	}
	if browser == "" {
		t.Skip("no Chromium found (apt-get install chromium, or set SEQD_CHROMIUM)")
	}

	s := newServer(t)
	huge := int64(math.MaxInt64)
	for i := range 8 {
		name := fmt.Sprintf("%d%s", i, strings.Repeat("w", 63))
		s.counter.StoreSequence(seqd.Sequence{Name: name, Value: huge, Mode: seqd.ModeCached, MinBlock: seqd.MaxCount, MaxBlock: seqd.MaxCount,
			Blocks: seqd.BlockCounts{Reserved: huge, Served: huge, Returned: huge}})
		s.counter.SetBlockStatus(name, blocks.Status{
			Current:   blocks.Block{First: huge - 2*seqd.MaxCount + 1, Last: huge - seqd.MaxCount, Remaining: seqd.MaxCount},
			Next:      blocks.Block{First: huge - seqd.MaxCount + 1, Last: huge, Remaining: seqd.MaxCount},
			BlockSize: seqd.MaxCount, Rate: 1e12, LastFetch: time.Hour, Served: huge, Skipped: huge,
			LastError: "backend unavailable: " + strings.Repeat("server selection error, ", 10),
		})
	}
	s.counter.StoreInvalid("9"+strings.Repeat("W", 63), fmt.Errorf("counters: list: %w: the seq of %q is a string %q, want an integer",
		counters.ErrInvalidCounter, strings.Repeat("W", 40), strings.Repeat("x", 40)))
	for i := range 150 { // a next link
		s.counter.Store(fmt.Sprintf("z%03d", i), 1)
	}

	// The page as seqd serves it, and a copy that reports its own width: the
	// policy forbids script, so the copy is served without it, with a script
	// that writes the document's width into its title.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/measure" {
			s.handler.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status?limit=20", nil))
		page := strings.Replace(rec.Body.String(), "</body>",
			`<script>document.title = "width " + document.documentElement.scrollWidth</script></body>`, 1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)

	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + t.TempDir(),
			"--window-size=" + strconv.Itoa(statusWindow) + ",900"}, args...)
		out, err := exec.CommandContext(ctx, browser, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", browser, strings.Join(args, " "), err)
		}
		return string(out)
	}
	dom := run("--dump-dom", srv.URL+"/measure")
	m := regexp.MustCompile(`<title>width (\d+)</title>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no width in the page Chromium rendered:\n%.2000s", dom)
	}
	if width, _ := strconv.Atoi(m[1]); width > statusWindow {
		t.Errorf("the status page is %d pixels wide, more than the %d-pixel window", width, statusWindow)
	}
	if !strings.Contains(dom, `rel="next"`) || !strings.Contains(dom, "unusable record") {
		t.Errorf("the rendered page lacks the next link or the unusable record:\n%.2000s", dom)
	}
	if shot := os.Getenv("SEQD_STATUS_SCREENSHOT"); shot != "" {
		abs, err := filepath.Abs(shot)
		if err != nil {
			t.Fatal(err)
		}
		run("--screenshot="+abs, srv.URL+"/status?limit=20")
		t.Logf("screenshot of the status page at %d pixels: %s", statusWindow, abs)
	}
}
