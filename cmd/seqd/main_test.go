package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
)

// TestMain lets a test run this binary as seqd itself: with SEQD_TEST_AS_MAIN set,
// it is main, so exit statuses can be checked.
func TestMain(m *testing.M) {
	if os.Getenv("SEQD_TEST_AS_MAIN") != "" {
		lowerFileLimit()
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// envOf is os.LookupEnv over the environment kv (key, value, …).
func envOf(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig(nil, envOf("MONGODB_URI", "mongodb://db"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8080" || c.db != "seqd" || c.timeout != 2*time.Second || c.strategy != "counter" ||
		c.uri != "mongodb://db" || c.tokens.hasClients || c.tokens.hasAdmin || len(c.keys.clients)+len(c.keys.admins) != 0 || c.noCoalesce || c.rateLimit != 0 || c.modeRefresh != time.Second ||
		c.blockLease != 15*time.Second || c.writesInFlight != 1 {
		t.Errorf("defaults: %+v", c)
	}
}

func TestParseConfigFlagBeatsEnv(t *testing.T) {
	env := envOf("MONGODB_URI", "mongodb://env", "SEQD_ADDR", ":1", "SEQD_TIMEOUT", "5s",
		"SEQD_TOKENS", "a, b,c", "SEQD_STRATEGY", "optimistic", "SEQD_NO_COALESCE", "true", "SEQD_RATE_LIMIT", "100", "SEQD_MODE_REFRESH", "250ms",
		"SEQD_BLOCK_LEASE", "2s", "SEQD_WRITES_IN_FLIGHT", "3")
	c, err := parseConfig([]string{"--addr", ":2", "--mongodb-uri", "mongodb://flag"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != ":2" || c.uri != "mongodb://flag" {
		t.Errorf("flags did not win: addr %q uri %q", c.addr, c.uri)
	}
	if c.timeout != 5*time.Second || c.strategy != "optimistic" || !c.noCoalesce || c.rateLimit != 100 ||
		!slices.Equal(secrets(c.keys.clients), []string{"a", "b", "c"}) || c.modeRefresh != 250*time.Millisecond ||
		c.blockLease != 2*time.Second || c.writesInFlight != 3 {
		t.Errorf("environment not read: %+v", c)
	}
}

// TestDefaultStrategyServesFirst: --strategy picks the sequencer that serves
// requests naming no strategy, and both strategies are served.
func TestDefaultStrategyServesFirst(t *testing.T) {
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:1")) // never dialled
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	for _, strategy := range []string{counters.StrategyCounter, counters.StrategyOptimistic} {
		var got []string
		db := client.Database("seqd")
		for _, s := range sequencers(counters.NewCounter(db, counters.Options{}), counters.NewOptimistic(db, counters.Options{}), strategy) {
			got = append(got, s.Strategy())
		}
		if len(got) != 2 || got[0] != strategy || got[0] == got[1] {
			t.Errorf("--strategy %s: sequencers %q, want both with %s first", strategy, got, strategy)
		}
	}
}

func TestParseConfigTokenFiles(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	admin := filepath.Join(dir, "admin")
	os.WriteFile(tokens, []byte("# clients\nt1 *\n\nt2  tenant-a.*\n"), 0o600)
	os.WriteFile(admin, []byte("root-token *\n"), 0o600)
	c, err := parseConfig([]string{"--tokens-file", tokens, "--admin-token-file", admin},
		envOf("MONGODB_URI", "mongodb://db", "SEQD_TOKENS", "t0"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := secrets(c.keys.clients); !slices.Equal(got, []string{"t0", "t1", "t2"}) {
		t.Errorf("client tokens %q", got)
	}
	if got := secrets(c.keys.admins); !slices.Equal(got, []string{"root-token"}) {
		t.Errorf("admin tokens %q", got)
	}
	if s := c.keys.clients[2].Scope; s.Allows("tenant-b.x") || !s.Allows("tenant-a.x") {
		t.Errorf("t2's scope is not tenant-a.*")
	}
	os.WriteFile(admin, []byte("one tenant-a.*\ntwo tenant-b.*\n"), 0o600)
	if c, err := parseConfig([]string{"--admin-token-file", admin}, envOf("MONGODB_URI", "m", "SEQD_TOKENS", "t0"), io.Discard); err != nil ||
		!slices.Equal(secrets(c.keys.admins), []string{"one", "two"}) {
		t.Errorf("an admin token file of two tokens: %v", err)
	}
	if _, err := parseConfig([]string{"--tokens-file", filepath.Join(dir, "missing")}, envOf("MONGODB_URI", "m"), io.Discard); err == nil {
		t.Error("a missing tokens file was accepted")
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "MONGODB_URI"},
		{[]string{"--timeout", "0s"}, "timeout"},
		{[]string{"--timeout", "soon"}, "timeout"},
		{[]string{"--strategy", "random"}, "strategy"},
		{[]string{"--mode-refresh", "0s"}, "mode-refresh"},
		{[]string{"--block-lease", "0s"}, "block-lease"},
		{[]string{"--block-lease", "2s", "--mode-refresh", "1s"}, "more than twice mode-refresh"},
		{[]string{"--no-coalesce=perhaps"}, "no-coalesce"},
		{[]string{"--rate-limit", "-1"}, "rate-limit"},
		{[]string{"--rate-burst", "x"}, "rate-burst"},
		{[]string{"--writes-in-flight", "0"}, "writes-in-flight"},
		{[]string{"--writes-in-flight", "65"}, "writes-in-flight"},
		{[]string{"--writes-in-flight", "two"}, "writes-in-flight"},
		{[]string{"extra"}, "unexpected"},
	} {
		env := envOf("MONGODB_URI", "mongodb://db")
		if tc.want == "MONGODB_URI" {
			env = envOf()
		}
		_, err := parseConfig(tc.args, env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one naming %s", tc.args, err, tc.want)
		}
	}
	_, err := parseConfig(nil, envOf(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "make run") {
		t.Errorf("no URI: %v, want it to point at make run", err)
	}
}

// run serves without a reachable backend: /healthz answers, /readyz fails fast with
// 503, and cancelling the context stops it cleanly. Tokens never reach the log.
func TestRunServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// Port 1 on loopback: nothing listens there, so the backend is down.
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--timeout", "300ms"},
			envOf("MONGODB_URI", "mongodb://127.0.0.1:1/?connectTimeoutMS=200",
				"SEQD_TOKENS", "secret-client-token", "SEQD_ADMIN_TOKEN", "secret-admin-token"), logW, io.Discard)
		logW.Close()
	}()

	var logged strings.Builder
	lines := bufio.NewScanner(logR)
	var addr string
	for addr == "" && lines.Scan() {
		logged.WriteString(lines.Text() + "\n")
		var entry struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &entry) == nil && entry.Msg == "listening" {
			addr = entry.Addr
		}
	}
	if addr == "" {
		t.Fatalf("no listening line; log:\n%s", logged.String())
	}
	rest := make(chan string)
	go func() {
		b, _ := io.ReadAll(logR)
		rest <- string(b)
	}()

	get := func(path string) int {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz %d", got)
	}
	if got := get("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with no backend: %d, want 503", got)
	}
	if got := get("/oid"); got != http.StatusUnauthorized {
		t.Errorf("/oid without a token: %d, want 401", got)
	}

	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("run returned %v", err)
	}
	logged.WriteString(<-rest)
	if strings.Contains(logged.String(), "secret-") {
		t.Errorf("a token reached the log:\n%s", logged.String())
	}
	if !strings.Contains(logged.String(), `"msg":"stopped"`) {
		t.Errorf("no stopped line:\n%s", logged.String())
	}
}

// --no-coalesce is a boolean flag: alone it means true, and it beats the environment
// either way.
func TestParseConfigNoCoalesce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", false},
		{[]string{"--no-coalesce"}, "", true},
		{[]string{"-no-coalesce"}, "", true},
		{[]string{"--no-coalesce=false"}, "", false},
		{[]string{"--no-coalesce", "--db", "x"}, "", true},
		{nil, "true", true},
		{nil, "1", true},
		{[]string{"--no-coalesce=false"}, "true", false},
		{[]string{"--no-coalesce"}, "false", true},
	} {
		c, err := parseConfig(tc.args, envOf("MONGODB_URI", "mongodb://db", "SEQD_NO_COALESCE", tc.env), io.Discard)
		if err != nil {
			t.Errorf("%q with SEQD_NO_COALESCE=%q: %v", tc.args, tc.env, err)
			continue
		}
		if c.noCoalesce != tc.want {
			t.Errorf("%q with SEQD_NO_COALESCE=%q: noCoalesce %v, want %v", tc.args, tc.env, c.noCoalesce, tc.want)
		}
	}
	_, err := parseConfig(nil, envOf("MONGODB_URI", "mongodb://db", "SEQD_NO_COALESCE", "perhaps"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SEQD_NO_COALESCE") {
		t.Errorf("SEQD_NO_COALESCE=perhaps: %v, want an error naming it", err)
	}
}

// seqd -h prints the usage and exits 0: help was asked for, nothing failed. A flag
// it does not know still exits 1.
func TestHelpExitStatus(t *testing.T) {
	for _, tc := range []struct {
		arg      string
		wantExit int
	}{
		{"-h", 0},
		{"--help", 0},
		{"--no-such-flag", 1},
	} {
		cmd := exec.Command(os.Args[0], tc.arg)
		cmd.Env = append(os.Environ(), "SEQD_TEST_AS_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		exit := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			exit = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if exit != tc.wantExit {
			t.Errorf("seqd %s: exit %d, want %d; stderr:\n%s", tc.arg, exit, tc.wantExit, stderr.String())
		}
		if !strings.Contains(stderr.String(), "-no-coalesce") {
			t.Errorf("seqd %s: stderr does not show the usage:\n%s", tc.arg, stderr.String())
		}
	}
}
