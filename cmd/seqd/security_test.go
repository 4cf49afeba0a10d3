//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/metrics"
)

// Tokens from the environment fail closed as a file's do: a variable set to an
// empty or blank list is an error, never "tokens off", and a token flag is
// refused with where the token goes instead. None of the errors holds a token.
func TestTokensFromEnvironmentFailClosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want []string
	}{
		{"blank list", nil, []string{"SEQD_TOKENS", " , "}, []string{"SEQD_TOKENS entry 1", "empty", "unset SEQD_TOKENS"}},
		{"empty list", nil, []string{"SEQD_TOKENS", ""}, []string{"SEQD_TOKENS entry 1", "empty"}},
		{"empty entry", nil, []string{"SEQD_TOKENS", "secret-1,,secret-2"}, []string{"SEQD_TOKENS entry 2", "empty"}},
		{"trailing comma", nil, []string{"SEQD_TOKENS", "secret-1,"}, []string{"SEQD_TOKENS entry 2"}},
		{"space inside", nil, []string{"SEQD_TOKENS", "secret 1"}, []string{"SEQD_TOKENS entry 1", "character 7"}},
		{"blank admin", nil, []string{"SEQD_ADMIN_TOKEN", "  "}, []string{"SEQD_ADMIN_TOKEN", "empty"}},
		{"empty admin", nil, []string{"SEQD_ADMIN_TOKEN", ""}, []string{"SEQD_ADMIN_TOKEN", "empty"}},
		{"admin with a newline", nil, []string{"SEQD_ADMIN_TOKEN", "secret\n"}, []string{"SEQD_ADMIN_TOKEN", "character 7"}},
		{"empty tokens file", nil, []string{"SEQD_TOKENS_FILE", ""}, []string{"SEQD_TOKENS_FILE is set but empty"}},
		{"empty admin file", nil, []string{"SEQD_ADMIN_TOKEN_FILE", " "}, []string{"SEQD_ADMIN_TOKEN_FILE is set but empty"}},
		// A launcher's unset variable: --tokens-file "$TOKENS_FILE".
		{"empty tokens-file flag", []string{"--tokens-file", ""}, nil, []string{"--tokens-file", "empty"}},
		{"empty tokens-file flag over the variable", []string{"--tokens-file="}, []string{"SEQD_TOKENS_FILE", "tokens"}, []string{"--tokens-file", "empty"}},
		{"blank admin-token-file flag", []string{"--admin-token-file", " "}, nil, []string{"--admin-token-file", "empty"}},
		{"tokens flag", []string{"--tokens", "secret-1"}, nil, []string{"--tokens", "ps", "SEQD_TOKENS", "--tokens-file"}},
		{"admin flag", []string{"--admin-token=secret-1"}, nil, []string{"--admin-token", "SEQD_ADMIN_TOKEN", "--admin-token-file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.args, envOf(append([]string{"MONGODB_URI", "mongodb://db"}, tc.env...)...), io.Discard)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%q holds a token", err)
			}
		})
	}
	// A connection cap above what the file limit allows would not protect it.
	if _, err := parseConfig(nil, envOf("MONGODB_URI", "mongodb://db", "SEQD_MAX_CONNS", "100000000"), io.Discard); err == nil || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("max-conns above the file limit: %v, want an error naming ulimit -n", err)
	}
	// Unset is off, as make run wants it.
	if c, err := parseConfig(nil, envOf("MONGODB_URI", "mongodb://db"), io.Discard); err != nil || len(c.keys.clients)+len(c.keys.admins) != 0 {
		t.Errorf("no token variable: %v, %d tokens", err, len(c.keys.clients)+len(c.keys.admins))
	}
}

// A SIGHUP that reads a file half written can't widen a scope: "tokR " alone, its
// scope not yet written, is refused, the tokens before stay in force, and the
// failure is logged at error level and counted.
func TestHalfWrittenFileKeepsScope(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "tokens", "tokR tenant-a.*\n")
	s := startSeqd(t, "--tokens-file", path, "--metrics-addr", "127.0.0.1:0")
	entry, from := s.log.waitFor(t, 0, "metrics")
	metricsURL := fmt.Sprintf("http://%s", entry["addr"])
	if got, err := s.status(http.DefaultClient, http.MethodGet, "/seq/tenant-b.secret", "tokR"); err != nil || got != http.StatusForbidden {
		t.Fatalf("before: %d, %v; want 403", got, err)
	}
	if err := os.WriteFile(path, []byte("tokR "), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup(t)
	entry, _ = s.log.waitFor(t, from, "SIGHUP: tokens not reloaded, the tokens before stay in force")
	if entry["level"] != "ERROR" {
		t.Errorf("the failed reload logged at %v, want ERROR", entry["level"])
	}
	if got, err := s.status(http.DefaultClient, http.MethodGet, "/seq/tenant-b.secret", "tokR"); err != nil || got != http.StatusForbidden {
		t.Errorf("after the half-written file: %d, %v; want 403", got, err)
	}
	failed, err := metrics.Value(t.Context(), http.DefaultClient, metricsURL, "seqd_token_reloads_total", "result", "error")
	if err != nil || failed != 1 {
		t.Errorf("seqd_token_reloads_total{result=\"error\"} = %v, %v; want 1", failed, err)
	}
	// /metrics is served on --metrics-addr, not on the API's address.
	if got, err := s.status(http.DefaultClient, http.MethodGet, "/metrics", "tokR"); err != nil || got != http.StatusNotFound {
		t.Errorf("/metrics on the API's address with --metrics-addr: %d, %v; want 404", got, err)
	}
}

// /debug/pprof/cmdline is not served: a command line may hold what its user did
// not mean to publish.
func TestProfilingHidesCommandLine(t *testing.T) {
	s := startSeqd(t, "--pprof-addr", "127.0.0.1:0")
	entry, _ := s.log.waitFor(t, 0, "profiling")
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/cmdline", entry["addr"]))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "127.0.0.1") {
		t.Errorf("/debug/pprof/cmdline: %d %q, want 404", resp.StatusCode, body)
	}
}

// With the file limit at 256 and 300 idle connections held open (each after one
// request, so idle for IdleTimeout on their own), a new client still gets its
// answer: seqd closes idle connections to make room rather than run out of
// descriptors.
func TestIdleConnectionFloodLeavesRoom(t *testing.T) {
	addr := startLimitedSeqd(t)
	const idle = 300
	for range idle {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dialling idle connection: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	}
	took, err := legitRequest(addr)
	if err != nil {
		t.Fatalf("with %d idle connections held: %v", idle, err)
	}
	t.Logf("answered in %v with %d idle connections held, file limit 256", took, idle)
}

// startLimitedSeqd runs seqd as its own process with a file limit of 256 (room
// for 128 client connections), the client token tok-legit and no store, and
// returns its address.
func startLimitedSeqd(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--addr", "127.0.0.1:0", "--timeout", "300ms")
	cmd.Env = append(os.Environ(), "SEQD_TEST_AS_MAIN=1", "SEQD_TEST_NOFILE=256", "SEQD_TOKENS=tok-legit",
		"MONGODB_URI=mongodb://127.0.0.1:1/?connectTimeoutMS=200")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		var e struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &e) == nil && e.Msg == "listening" {
			addr = e.Addr
		}
	}
	if addr == "" {
		t.Fatal("seqd did not listen")
	}
	go io.Copy(io.Discard, stdout)
	return addr
}

// legitRequest is a client's GET /oid with tok-legit on a new connection, given 5 s;
// it returns how long the answer took.
func legitRequest(addr string) (time.Duration, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/oid", nil)
	req.Header.Set("Authorization", "Bearer tok-legit")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w after %v", err, time.Since(start))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), nil
}

// Connections that are not idle but make no progress take room as idle ones
// do: a request whose body never comes (net/http reads what the handler left of
// it, before answering and after, until ReadTimeout, 10 s), and requests whose
// answers are never read (a write blocks until WriteTimeout once the socket
// buffers are full: /openapi.json is 132 KB and needs no token). 300 of either,
// held for 3 s by a client without a token, must leave room for a new client's
// request. The 3 s are the attack's length, not a wait for seqd: by then every
// write to the second kind has stalled for more than a second.
func TestStalledConnectionFloodLeavesRoom(t *testing.T) {
	for _, c := range []struct{ name, request string }{
		{"body never sent", "POST /oid HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n"},
		{"answers never read", strings.Repeat("GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n", 100)},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := startLimitedSeqd(t)
			// A small receive buffer, set before connecting (the window is agreed
			// then): little room for the answers.
			dialer := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
				return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			}}
			const stalled = 300
			for range stalled {
				conn, err := dialer.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("dialling: %v", err)
				}
				t.Cleanup(func() { conn.Close() })
				go io.WriteString(conn, c.request) // may block: seqd stops reading
			}
			time.Sleep(3 * time.Second) // the flood, held
			took, err := legitRequest(addr)
			if err != nil {
				t.Fatalf("with %d stalled connections held: %v", stalled, err)
			}
			t.Logf("answered in %v with %d stalled connections held, file limit 256", took, stalled)
		})
	}
}

// lowerFileLimit sets this process's file limit to SEQD_TEST_NOFILE, when set,
// before it runs as seqd.
func lowerFileLimit() {
	n, err := strconv.ParseUint(os.Getenv("SEQD_TEST_NOFILE"), 10, 64)
	if err != nil {
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
}

// A connection on which no request passed the token checks is closed after 5 s
// idle; one that authenticated keeps the server's IdleTimeout (2 minutes).
func TestUnauthenticatedConnectionsIdleShort(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", "tok-legit *\n")
	s := startSeqd(t, "--tokens-file", path)
	open := func(request string) (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, request)
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return c, r
	}
	stranger, strangerR := open("GET /oid HTTP/1.1\r\nHost: localhost\r\n\r\n") // 401
	member, memberR := open("GET /oid HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer tok-legit\r\n\r\n")

	start := time.Now()
	stranger.SetReadDeadline(start.Add(20 * time.Second))
	if _, err := strangerR.ReadByte(); err != io.EOF {
		t.Fatalf("the unauthenticated connection: %v after %v, want EOF (closed by seqd)", err, time.Since(start))
	}
	closedAfter := time.Since(start)
	if closedAfter > 7*time.Second {
		t.Errorf("the unauthenticated connection closed after %v, want about 5 s", closedAfter)
	}
	member.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := memberR.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the authenticated connection, %v after the other closed: %v, want it still open", closedAfter, err)
	}
}

// DNS rebinding reaches --metrics-addr and --pprof-addr as it reaches the API:
// a page under the attacker's name, rebound to the private address README says
// to keep them on, reads every tenant's totals, which the API's address gives
// only to an admin token of every name, and the process's goroutine stacks. They
// answer only the Host names the API serves, as the API does; and with
// --allowed-hosts '*', which turns the API's check off for a proxy in front of
// it, they keep theirs: that proxy is not in front of them.
func TestSideListenersCheckHost(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", "tokR tenant-a.*\n")
	for _, extra := range [][]string{nil, {"--allowed-hosts", "*"}} {
		t.Run(fmt.Sprintf("args %q", extra), func(t *testing.T) {
			s := startSeqd(t, append([]string{"--tokens-file", path, "--metrics-addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0"}, extra...)...)
			metricsAt, _ := s.log.waitFor(t, 0, "metrics")
			pprofAt, _ := s.log.waitFor(t, 0, "profiling")
			for _, target := range []string{
				fmt.Sprintf("http://%s/metrics", metricsAt["addr"]),
				fmt.Sprintf("http://%s/debug/pprof/goroutine?debug=2", pprofAt["addr"]),
			} {
				req, err := http.NewRequest(http.MethodGet, target, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "rebind.attacker.example"
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusMisdirectedRequest {
					t.Errorf("%s with Host rebind.attacker.example: %d, want 421", target, resp.StatusCode)
				}
			}
		})
	}
}

// A SIGHUP that reads a file half written can't move a scope to another name: a
// line cut inside its scope ("tokR tenant-b.secret" of "tokR
// tenant-b.secret-archive\n") names a sequence the token was never given. The
// tokens before stay in force.
func TestCutScopeKeepsScope(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", "tokR tenant-a.*\n")
	s := startSeqd(t, "--tokens-file", path)
	if got, err := s.status(http.DefaultClient, http.MethodGet, "/seq/tenant-b.secret", "tokR"); err != nil || got != http.StatusForbidden {
		t.Fatalf("before: %d, %v; want 403", got, err)
	}
	full := "tokR tenant-b.secret-archive\n"
	if err := os.WriteFile(path, []byte(full[:len("tokR tenant-b.secret")]), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup(t)
	// The reload ends in one of two lines; wait for either.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.log.String(), `"msg":"tokens reloaded"`) && !strings.Contains(s.log.String(), `"msg":"SIGHUP: tokens not reloaded`) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload in the log:\n%s", s.log)
		}
		time.Sleep(10 * time.Millisecond) // polling the log, with a deadline
	}
	if got, err := s.status(http.DefaultClient, http.MethodGet, "/seq/tenant-b.secret", "tokR"); err != nil || got != http.StatusForbidden {
		t.Errorf("after the cut file: %d, %v; want 403 (tokR was given tenant-b.secret)", got, err)
	}
}

// A token file that is no file (a named pipe, a device) is refused, at start and
// at SIGHUP, rather than waited on: reading a pipe blocks until something writes
// to it, and seqd then neither starts, nor reads the tokens again on a later
// SIGHUP, nor stops on SIGTERM (it waits for the reload to end), all without a
// word in the log.
func TestTokenFileThatIsNoFile(t *testing.T) {
	// unblock ends a read of the pipe path, if one is waiting, so that a failing
	// test ends.
	unblock := func(path string) {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	mkfifo := func(t *testing.T, path string) {
		t.Helper()
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("start", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tokens")
		mkfifo(t, path)
		done := make(chan error, 1)
		go func() {
			_, err := parseConfig([]string{"--tokens-file", path}, envOf("MONGODB_URI", "mongodb://127.0.0.1:1"), io.Discard)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("a named pipe as --tokens-file: %v, want an error naming it", err)
			}
		case <-time.After(5 * time.Second):
			unblock(path)
			<-done
			t.Errorf("a named pipe as --tokens-file: no answer in 5 s (reading it waits for a writer)")
		}
	})

	t.Run("SIGHUP", func(t *testing.T) {
		dir := t.TempDir()
		path := writeFile(t, dir, "tokens", "tokR tenant-a.*\n")
		s := startSeqd(t, "--tokens-file", path)
		pipe := filepath.Join(dir, "pipe")
		mkfifo(t, pipe)
		if err := os.Rename(pipe, path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unblock(path) }) // before seqd stops (cleanups run last first)
		hangup(t)
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(s.log.String(), `"msg":"SIGHUP: tokens not reloaded`) {
			if time.Now().After(deadline) {
				t.Fatalf("a named pipe in place of the tokens file: no \"tokens not reloaded\" in 5 s:\n%s", s.log)
			}
			time.Sleep(10 * time.Millisecond) // polling the log, with a deadline
		}
	})
}

// A request's header is bounded at 32 KB (nginx's default, 4 buffers of 8 KB):
// net/http's default, 1 MB, let a client without a token make each connection
// it holds cost seqd a megabyte while the header comes (400 connections sending
// 1 MB headers took seqd from 19 to 444 MB), where the connection cap counts
// connections at about 20 KB each. A longer header gets 431; one of 16 KB (a
// browser's cookies for localhost, say) is served.
func TestRequestHeaderBounded(t *testing.T) {
	s := startSeqd(t)
	for _, c := range []struct {
		size int
		want int
	}{
		{16 << 10, http.StatusOK},
		{64 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+s.addr+"/oid", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", "c="+strings.Repeat("a", c.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET /oid with a header of %d KB: %d, want %d", c.size>>10, resp.StatusCode, c.want)
		}
	}
}

// A scoped admin token says that tenants share seqd; with no client token in
// force the client routes take any request, so anyone would list every
// tenant's names and spend their values while the admin tokens stay in their
// scopes. seqd refuses that combination, at start (a SIGHUP reads the same
// sources, and a tokens file never reads as empty), and says what to do; an
// admin token of every name alone stays allowed (SEQD_ADMIN_TOKEN=… make run).
func TestScopedAdminWithoutClientTokens(t *testing.T) {
	dir := t.TempDir()
	scoped := filepath.Join(dir, "admin-scoped")
	every := filepath.Join(dir, "admin-every")
	clients := filepath.Join(dir, "clients")
	for path, text := range map[string]string{
		scoped:  "secret-adm-a tenant-a.*\n",
		every:   "secret-adm-all *\n",
		clients: "secret-client-a tenant-a.*\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := func(kv ...string) func(string) (string, bool) {
		return envOf(append([]string{"MONGODB_URI", "mongodb://db"}, kv...)...)
	}
	c, err := parseConfig([]string{"--admin-token-file", scoped}, env(), io.Discard)
	if err == nil {
		t.Errorf("a scoped admin token and no client token: accepted (%d client tokens: the client routes open to anyone), want an error", len(c.keys.clients))
	} else {
		for _, w := range []string{"admin-token-file", "line 1", "no client token", "--tokens-file"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q holds a token", err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"admin of every name alone", []string{"--admin-token-file", every}, nil},
		{"SEQD_ADMIN_TOKEN alone", nil, []string{"SEQD_ADMIN_TOKEN", "secret-adm-env"}},
		{"scoped admin with a client file", []string{"--admin-token-file", scoped, "--tokens-file", clients}, nil},
		{"scoped admin with SEQD_TOKENS", []string{"--admin-token-file", scoped}, []string{"SEQD_TOKENS", "secret-client-env"}},
	} {
		if _, err := parseConfig(tc.args, env(tc.env...), io.Discard); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A token file other users may read or change, and SEQD_TOKENS (tokens of every
// name) beside a file of scoped client tokens, widen nothing by themselves but are
// likely mistakes: seqd starts, and says so at warning level, at start and at
// SIGHUP. They are not refused: a container platform mounts secrets 0644.
func TestTokenSourcesWarn(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "tokens", "tokA tenant-a.*\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSeqd(t, "--tokens-file", path)
	entry, from := s.log.waitFor(t, 0, "tokens read with a warning")
	if w, _ := entry["warning"].(string); entry["level"] != "WARN" || !strings.Contains(w, path) || !strings.Contains(w, "0644") || !strings.Contains(w, "chmod 600") {
		t.Errorf("a token file of mode 0644: %v, want a warning naming the file, its mode and chmod 600", entry)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	hangup(t)
	_, after := s.log.waitFor(t, from, "tokens reloaded")
	s.log.mu.Lock()
	for _, line := range s.log.lines[from:after] {
		if strings.Contains(line, "tokens read with a warning") {
			t.Errorf("read again at mode 0600: %s", line)
		}
	}
	s.log.mu.Unlock()
	if err := os.Chmod(path, 0o620); err != nil {
		t.Fatal(err)
	}
	hangup(t)
	entry, _ = s.log.waitFor(t, after, "tokens read with a warning")
	if w, _ := entry["warning"].(string); !strings.Contains(w, "0620") {
		t.Errorf("read again at mode 0620 (others in the group may write it): %v, want a warning", entry)
	}

	every := writeFile(t, dir, "every", "tokAll *\n")
	for _, tc := range []struct {
		file string
		warn bool
	}{{path, true}, {every, false}} {
		ws, warned := tokenWarnings(t, []string{"--tokens-file", tc.file}, []string{"SEQD_TOKENS", "tokEnv"}, "tokEnv", "SEQD_TOKENS gives tokens of every name", "line 1")
		if warned != tc.warn {
			t.Errorf("SEQD_TOKENS beside %s: warnings %q, want a warning about SEQD_TOKENS %v", tc.file, ws, tc.warn)
		}
	}
}

// SEQD_ADMIN_TOKEN, an admin token of every name, beside an --admin-token-file
// of scoped admin tokens is the same likely mistake as SEQD_TOKENS beside scoped
// client tokens (a variable left from before tenants), with more at stake: it
// may set every tenant's sequences. seqd warns of it, naming the line, never the
// token; an admin file of every name alone gets no warning.
func TestAdminTokenBesideScopedAdminsWarns(t *testing.T) {
	dir := t.TempDir()
	clients := writeFile(t, dir, "tokens", "tokA tenant-a.*\ntokB tenant-b.*\n")
	scoped := writeFile(t, dir, "admins", "admA tenant-a.*\n")
	every := writeFile(t, dir, "every", "admAll *\n")
	for _, tc := range []struct {
		file string
		warn bool
	}{{scoped, true}, {every, false}} {
		ws, warned := tokenWarnings(t, []string{"--tokens-file", clients, "--admin-token-file", tc.file}, []string{"SEQD_ADMIN_TOKEN", "admEnvSecret"}, "admEnvSecret", "SEQD_ADMIN_TOKEN", "line 1")
		if warned != tc.warn {
			t.Errorf("SEQD_ADMIN_TOKEN beside %s: warnings %q, want a warning about SEQD_ADMIN_TOKEN naming line 1: %v", tc.file, ws, tc.warn)
		}
	}
}

// A token file in a directory other users may write can be replaced by them
// (rename a file of their own tokens into place, then wait for a SIGHUP), which
// changes it as surely as a mode of 0666: seqd warns of it as of the file's mode,
// naming the directory. In a sticky directory they may replace only files of
// their own, which TestTokenFileOfAnotherUserWarns covers.
func TestTokenFileInWritableDirectoryWarns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, dir, "tokens", "tokA tenant-a.*\n")
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o700, false}, {0o755, false}, {0o777, true}, {0o770, true}, {0o777 | os.ModeSticky, false}} {
		if err := os.Chmod(dir, tc.mode); err != nil {
			t.Fatal(err)
		}
		ws, warned := tokenWarnings(t, []string{"--tokens-file", path}, nil, "", dir, "directory")
		if warned != tc.warn {
			t.Errorf("a token file in a directory of mode %v: warnings %q, want a warning naming the directory: %v", tc.mode, ws, tc.warn)
		}
	}
}

// A token file named through a symbolic link lives in the link's target's
// directory: other users who may write that one may replace the file, wherever
// the link is. A directory above it that they may write is theirs too: they may
// rename the token file's directory away and put one of their own in its place.
func TestTokenFileThroughLinkInWritableDirectoryWarns(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(shared, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	target := writeFile(t, own, "tokens", "tokA tenant-a.*\n")
	conf := filepath.Join(root, "conf")
	if err := os.Mkdir(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(conf, "tokens")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		dir  string // made 0777
		warn bool
	}{
		{"no directory others may write", "", false},
		{"the link's target's directory", own, true},
		{"a directory above the target's", shared, true},
	} {
		for _, d := range []string{shared, own} {
			mode := os.FileMode(0o700)
			if d == tc.dir {
				mode = 0o777
			}
			if err := os.Chmod(d, mode); err != nil {
				t.Fatal(err)
			}
		}
		ws, warned := tokenWarnings(t, []string{"--tokens-file", link}, nil, "", link, "directory")
		if warned != tc.warn {
			t.Errorf("a token file through a link, %s of mode 0777: warnings %q, want a warning naming the directory: %v", tc.what, ws, tc.warn)
		}
	}
}

// A token file of mode 0600 that another user owns is theirs to change: seqd,
// run as root or as a user that may read it through its group, warns of it,
// naming the owner's uid. A file of root's or of seqd's own user is not warned of.
func TestTokenFileOfAnotherUserWarns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	dir := t.TempDir()
	path := writeFile(t, dir, "tokens", "tokA tenant-a.*\n")
	for _, tc := range []struct {
		uid  int
		warn bool
	}{{0, false}, {65534, true}} {
		if err := os.Chown(path, tc.uid, -1); err != nil {
			t.Fatal(err)
		}
		ws, warned := tokenWarnings(t, []string{"--tokens-file", path}, nil, "", path, fmt.Sprintf("uid %d", tc.uid))
		if warned != tc.warn {
			t.Errorf("a token file of mode 0600 owned by uid %d: warnings %q, want a warning naming the owner: %v", tc.uid, ws, tc.warn)
		}
	}
}

// SEQD_TOKENS beside scoped admin tokens and no --tokens-file: the admins keep
// to their tenants while every client token may use every tenant's names, the
// same likely mistake as SEQD_TOKENS beside scoped client tokens (a variable
// left from before tenants, a --tokens-file forgotten): seqd warns of it.
func TestClientTokensBesideScopedAdminsWarn(t *testing.T) {
	dir := t.TempDir()
	scoped := writeFile(t, dir, "admins", "admA tenant-a.*\nadmB tenant-b.*\n")
	every := writeFile(t, dir, "every", "admAll *\n")
	for _, tc := range []struct {
		file string
		warn bool
	}{{scoped, true}, {every, false}} {
		ws, warned := tokenWarnings(t, []string{"--admin-token-file", tc.file}, []string{"SEQD_TOKENS", "tokEnvSecret"}, "tokEnvSecret", "SEQD_TOKENS", "line 1")
		if warned != tc.warn {
			t.Errorf("SEQD_TOKENS beside the admin file %s: warnings %q, want a warning about SEQD_TOKENS naming line 1: %v", tc.file, ws, tc.warn)
		}
	}
}

// tokenWarnings parses args and env (beside a MONGODB_URI) as seqd does, and
// returns the token sources' warnings and whether one holds every string of
// want. A warning that holds secret, a token, is an error.
func tokenWarnings(t *testing.T, args, env []string, secret string, want ...string) ([]string, bool) {
	t.Helper()
	c, err := parseConfig(args, envOf(append([]string{"MONGODB_URI", "mongodb://db"}, env...)...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, w := range c.keys.warnings {
		if secret != "" && strings.Contains(w, secret) {
			t.Errorf("a warning holds the token: %q", w)
		}
		all := true
		for _, s := range want {
			all = all && strings.Contains(w, s)
		}
		warned = warned || all
	}
	return c.keys.warnings, warned
}
