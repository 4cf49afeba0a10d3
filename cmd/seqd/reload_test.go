//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// seqdRun is seqd's run, serving in this process, and its log.
type seqdRun struct {
	addr string
	log  *logWatch
	stop func() error // cancels run and returns what it returned
}

// logWatch keeps every line of the log, and lets a test wait for one.
type logWatch struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed at the next line, or at the end
	ended bool
}

// read reads r to its end; seqd must never wait for its log to be read.
func (w *logWatch) read(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		w.mu.Lock()
		w.lines = append(w.lines, s.Text())
		close(w.more)
		w.more = make(chan struct{})
		w.mu.Unlock()
	}
	w.mu.Lock()
	w.ended = true
	close(w.more)
	w.mu.Unlock()
}

// waitFor returns the first line from line index from on whose msg is msg, and
// the index after it.
func (w *logWatch) waitFor(t *testing.T, from int, msg string) (map[string]any, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		w.mu.Lock()
		lines, more, ended := w.lines, w.more, w.ended
		w.mu.Unlock()
		for ; from < len(lines); from++ {
			var entry map[string]any
			if json.Unmarshal([]byte(lines[from]), &entry) == nil && entry["msg"] == msg {
				return entry, from + 1
			}
		}
		if ended {
			t.Fatalf("the log ended without %q:\n%s", msg, w.String())
		}
		select {
		case <-more:
		case <-ctx.Done():
			t.Fatalf("no %q in the log:\n%s", msg, w.String())
		}
	}
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// startSeqd runs seqd with args on a loopback port against a MongoDB that is not
// there: /oid serves, and so does everything refused before the backend.
func startSeqd(t *testing.T, args ...string) *seqdRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	w := &logWatch{more: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0", "--timeout", "300ms"}, args...),
			envOf("MONGODB_URI", "mongodb://127.0.0.1:1/?connectTimeoutMS=200"), logW, io.Discard)
		logW.Close()
	}()
	go w.read(logR)
	s := &seqdRun{log: w}
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { s.stop() })
	entry, _ := w.waitFor(t, 0, "listening")
	s.addr, _ = entry["addr"].(string)
	return s
}

// status sends method path with token to s and returns the status.
func (s *seqdRun) status(client *http.Client, method, path, token string) (int, error) {
	req, err := http.NewRequest(method, "http://"+s.addr+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// hangup sends this process SIGHUP, which run catches.
func hangup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// SIGHUP rotates the tokens under load: no request with a token valid before and
// after fails, a token removed is refused once the reload is logged, a new one
// taken, scopes follow the file, and a file that fails to parse leaves the tokens
// in force and says why, without a token.
func TestHangupRotatesTokensUnderLoad(t *testing.T) {
	dir := t.TempDir()
	const keep, scoped = "secret-keep", "secret-scoped"
	tokensFile := writeFile(t, dir, "tokens", keep+" *\nsecret-old-0 *\n"+scoped+" tenant-a.*\n")
	adminFile := writeFile(t, dir, "admin", "secret-admin tenant-a.*\n")
	s := startSeqd(t, "--tokens-file", tokensFile, "--admin-token-file", adminFile)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	t.Cleanup(client.CloseIdleConnections)

	// Load: tokens valid throughout, on /oid (200) and on a name outside the scoped
	// token's scope (403, refused before the backend), from several goroutines.
	stopLoad := make(chan struct{})
	var served atomic.Int64
	var failures sync.Map // what went wrong → true
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token, path, want := keep, "/oid", http.StatusOK
			switch i % 3 {
			case 1:
				token = scoped
			case 2:
				token, path, want = scoped, "/seq/tenant-b.orders/next", http.StatusForbidden
			}
			for {
				select {
				case <-stopLoad:
					return
				default:
				}
				got, err := s.status(client, http.MethodGet, path, token)
				if err != nil || got != want {
					failures.Store(fmt.Sprintf("%s %s: %d, %v; want %d", token, path, got, err, want), true)
				}
				served.Add(1)
			}
		}()
	}

	from := 0
	old := "secret-old-0"
	for i := 1; i <= 5; i++ {
		// Wait for load between reloads, so that each reload meets requests.
		for start := served.Load(); served.Load() < start+50; {
			if _, err := s.status(client, http.MethodGet, "/healthz", ""); err != nil {
				t.Fatal(err)
			}
		}
		next := fmt.Sprintf("secret-new-%d", i)
		writeFile(t, dir, "tokens", keep+" *\n"+next+" *\n"+scoped+" tenant-a.*\n")
		hangup(t)
		var entry map[string]any
		entry, from = s.log.waitFor(t, from, "tokens reloaded")
		if entry["client_tokens"] != 3.0 || entry["admin_tokens"] != 1.0 {
			t.Errorf("reload %d logged %v, want 3 client tokens and 1 admin", i, entry)
		}
		for _, c := range []struct {
			token string
			want  int
		}{{old, http.StatusUnauthorized}, {next, http.StatusOK}} {
			if got, err := s.status(client, http.MethodGet, "/oid", c.token); err != nil || got != c.want {
				t.Errorf("after reload %d, /oid with %s: %d, %v; want %d", i, c.token, got, err, c.want)
			}
		}
		old = next
	}

	// A file that fails to parse keeps the tokens in force, and the log says why.
	writeFile(t, dir, "tokens", keep+" *\n"+"secret-never tenant/a\n")
	hangup(t)
	entry, from := s.log.waitFor(t, from, "SIGHUP: tokens not reloaded, the tokens before stay in force")
	if msg, _ := entry["err"].(string); !strings.Contains(msg, tokensFile+" line 2") {
		t.Errorf("the failed reload logged %v, want the file and line 2", entry)
	}
	writeFile(t, dir, "admin", "secret-admin tenant-a.*\nsecret-admin-2 tenant-a.**\n")
	writeFile(t, dir, "tokens", keep+" *\n"+old+" *\n")
	hangup(t)
	entry, from = s.log.waitFor(t, from, "SIGHUP: tokens not reloaded, the tokens before stay in force")
	if msg, _ := entry["err"].(string); !strings.Contains(msg, adminFile+" line 2") {
		t.Errorf("the failed reload logged %v, want the admin file and line 2", entry)
	}
	for _, c := range []struct {
		token, path string
		want        int
	}{
		{old, "/oid", http.StatusOK},
		{keep, "/oid", http.StatusOK},
		{scoped, "/oid", http.StatusOK}, // still in force: the reload that dropped it failed
		{"secret-never", "/oid", http.StatusUnauthorized},
		{"secret-admin-2", "/oid", http.StatusUnauthorized},
	} {
		if got, err := s.status(client, http.MethodGet, c.path, c.token); err != nil || got != c.want {
			t.Errorf("after failed reloads, %s with %s: %d, %v; want %d", c.path, c.token, got, err, c.want)
		}
	}

	close(stopLoad)
	wg.Wait()
	failures.Range(func(k, _ any) bool {
		t.Errorf("under load: %s", k)
		return true
	})
	t.Logf("%d requests under load, through 7 SIGHUPs", served.Load())

	// The admin file too is read again: the admin's scope moves to tenant-b, and
	// the tokens file's last reading drops the scoped token.
	writeFile(t, dir, "admin", "secret-admin tenant-b.*\n")
	hangup(t)
	_, _ = s.log.waitFor(t, from, "tokens reloaded")
	if got, err := s.status(client, http.MethodPut, "/seq/tenant-a.orders", "secret-admin"); err != nil || got != http.StatusForbidden {
		t.Errorf("PUT outside the admin's new scope: %d, %v; want 403", got, err)
	}
	if got, err := s.status(client, http.MethodGet, "/oid", scoped); err != nil || got != http.StatusUnauthorized {
		t.Errorf("a token the file no longer holds: %d, %v; want 401", got, err)
	}

	if err := s.stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("run returned %v", err)
	}
	if log := s.log.String(); strings.Contains(log, "secret") || strings.Contains(log, "tenant-b.orders") {
		t.Errorf("the log holds a token or a name outside the caller's scope:\n%s", log)
	}
}
