package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHistoryBackDoesNotSpend opens GET /seq/orders/next in Chromium as its
// user would, by typing the address (Sec-Fetch-Site: none), then, in the same
// tab, a page of another site that goes back to it (history.go) after eight
// pages of its own, which evict seqd's answer from the back/forward cache.
// Chromium then loads the history entry again, with the headers of the typed
// load: another site's page must not spend a value that way.
//
// It skips without Chromium (chromium).
func TestHistoryBackDoesNotSpend(t *testing.T) {
	browser := chromium(t)

	s := newServer(t)
	s.counter.Store("orders", 41)
	type load struct {
		code int
		site string
	}
	loads := make(chan load, 16)
	seqd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		if r.URL.Path == "/seq/orders/next" {
			loads <- load{rec.Code, r.Header.Get("Sec-Fetch-Site")}
		}
	}))
	t.Cleanup(seqd.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// Eight pages after it evict seqd's answer from Chromium's back/forward
		// cache (six pages), so going back loads it again.
		n := len(r.URL.Query().Get("n"))
		if n < 8 {
			fmt.Fprintf(w, `<!DOCTYPE html><script>onload = () => setTimeout(() => location.href = "/?n=%s", 0)</script>`, strings.Repeat("x", n+1))
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><script>onload = () => setTimeout(() => history.go(-9), 0)</script>`)
	}))
	t.Cleanup(other.Close)
	otherURL := strings.Replace(other.URL, "127.0.0.1", "other.test", 1)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cdp := startCDP(t, ctx, browser, "--host-resolver-rules=MAP other.test 127.0.0.1")
	page := cdp.attachPage(t)

	wait := func(what string) load {
		t.Helper()
		select {
		case l := <-loads:
			return l
		case <-ctx.Done():
			t.Fatalf("no load of /seq/orders/next %s", what)
			return load{}
		}
	}
	cdp.call(t, page, "Page.navigate", map[string]any{"url": seqd.URL + "/seq/orders/next", "transitionType": "typed"})
	if l := wait("typed"); l.site != "none" {
		t.Fatalf("typed: got Sec-Fetch-Site %q, want none", l.site)
	}
	typed, _ := s.counter.Value("orders")
	// The answer loaded, so that the next address makes a history entry after it.
	for {
		var r struct{ Result struct{ Value string } }
		json.Unmarshal(cdp.call(t, page, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.readyState", "returnByValue": true}), &r)
		if r.Result.Value == seqd.URL+"/seq/orders/next complete" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the typed address never loaded: %q", r.Result.Value)
		}
	}
	cdp.call(t, page, "Page.navigate", map[string]any{"url": otherURL + "/", "transitionType": "typed"})
	l := wait("after history.go(-9)")
	v, _ := s.counter.Value("orders")
	if l.code == http.StatusOK || v != typed {
		t.Errorf("history.go(-9) from %s: the load again got %d with Sec-Fetch-Site %q and orders is at %d; want it refused and orders at %d, as after the typed load", otherURL, l.code, l.site, v, typed)
	}
}

// cdpPipe speaks the Chrome DevTools Protocol over --remote-debugging-pipe:
// JSON messages, each ended by a NUL byte, out on the browser's fd 3 and in on
// its fd 4.
type cdpPipe struct {
	w    io.Writer
	r    *bufio.Reader
	next int
}

func startCDP(t *testing.T, ctx context.Context, browser string, args ...string) *cdpPipe {
	t.Helper()
	// Not t.TempDir: the browser's processes may still write there as its
	// RemoveAll runs.
	dir, err := os.MkdirTemp("", "seqd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	toBrowser, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-pipe", "--user-data-dir=" + dir}, append(args, "about:blank")...)
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	t.Cleanup(func() { // before the user data directory's: Browser.close waits for the browser's processes
		toW.Write([]byte(`{"id":0,"method":"Browser.close"}` + "\x00"))
		toW.Close()
		cmd.Wait() // killed by ctx if it hangs
		fromR.Close()
		os.RemoveAll(dir) // again, should a process have written after the first
		os.RemoveAll(dir)
	})
	return &cdpPipe{w: toW, r: bufio.NewReader(fromR)}
}

// call sends method to the session (the browser for "") and returns its result,
// skipping the events before it.
func (c *cdpPipe) call(t *testing.T, session, method string, params any) json.RawMessage {
	t.Helper()
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for {
		line, err := c.r.ReadBytes(0)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(bytes.TrimSuffix(line, []byte{0}), &reply); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if reply.ID != c.next {
			continue
		}
		if reply.Error != nil {
			t.Fatalf("%s: %s", method, reply.Error)
		}
		return reply.Result
	}
}

// attachPage returns a session on the browser's page.
func (c *cdpPipe) attachPage(t *testing.T) string {
	t.Helper()
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	json.Unmarshal(c.call(t, "", "Target.getTargets", map[string]any{}), &targets)
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			var s struct{ SessionID string }
			json.Unmarshal(c.call(t, "", "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}), &s)
			return s.SessionID
		}
	}
	t.Fatal("no page target")
	return ""
}
