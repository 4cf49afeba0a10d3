package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seqd/seqd/httpapi"
)

func secrets(list []httpapi.Token) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Secret)
	}
	return out
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadTokenFile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", strings.Join([]string{
		"# tenant A",
		"tok-a  tenant-a.*",
		"",
		"tok-reader *",
		"tok-b\ttenant-b.* shared.orders   # tenant B and the shared sequence",
		"tok-all * tenant-a.x",
		"tok/+=  x # a comment starts a word",
	}, "\r\n")+"\r\n") // a file's last line ends too: without it, it may be cut
	lines, _, err := readTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.secret)
	}
	if want := []string{"tok-a", "tok-reader", "tok-b", "tok-all", "tok/+="}; !slices.Equal(got, want) {
		t.Fatalf("tokens %q, want %q", got, want)
	}
	for _, tc := range []struct {
		i       int
		in, out []string
	}{
		{0, []string{"tenant-a.x", "tenant-a."}, []string{"tenant-b.x", "tenant-a", "shared.orders"}},
		{1, []string{"tenant-a.x", "anything"}, nil},
		{2, []string{"tenant-b.1", "shared.orders"}, []string{"shared.orders2", "tenant-a.x"}},
		{3, []string{"tenant-b.1", "x"}, nil},
		{4, []string{"x"}, []string{"y"}},
	} {
		for _, name := range tc.in {
			if !lines[tc.i].scope.Allows(name) {
				t.Errorf("%s (line %d) may not use %s", lines[tc.i].secret, lines[tc.i].line, name)
			}
		}
		for _, name := range tc.out {
			if lines[tc.i].scope.Allows(name) {
				t.Errorf("%s (line %d) may use %s", lines[tc.i].secret, lines[tc.i].line, name)
			}
		}
	}
	if lines[2].line != 5 {
		t.Errorf("tok-b on line %d, want 5", lines[2].line)
	}
}

// A token file that is wrong is refused with the file, the line and what is
// wrong, never a token: the tokens here all hold "secret".
func TestTokenFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, clients, admins string
		env                   []string
		want                  []string // in the error, besides the file's path
	}{
		{name: "bad character", clients: "secret-1 *\nsecret-2 tenant/a\n", want: []string{"tokens-file", "line 2", "scope 1", "A-Z a-z 0-9"}},
		{name: "star inside", clients: "secret-1 a.* b*c\n", want: []string{"line 1", "scope 2", "* may only end it"}},
		{name: "two stars", clients: "secret-1 **\n", want: []string{"line 1", "* may only end it"}},
		{name: "scope first", clients: "# note\ntenant-a.* secret+1/x=\n", want: []string{"line 2", "character 10"}},
		{name: "empty", clients: "", want: []string{"no token"}},
		{name: "comments only", clients: "# none yet\n\n", want: []string{"no token"}},
		{name: "admin file", clients: "secret-1 *\n", admins: "secret-2 a..*x\n", want: []string{"admin-token-file", "line 1"}},
		{name: "twice in a file", clients: "secret-1 *\nsecret-2 *\nsecret-1 a\n", want: []string{"line 3: the same token as tokens-file", "line 1"}},
		{name: "client and admin", clients: "secret-1 *\n", admins: "\nsecret-1 a.*\n", want: []string{"admin-token-file", "line 2: the same token as tokens-file", "line 1"}},
		{name: "file and environment", clients: "secret-1 *\n", env: []string{"SEQD_TOKENS", "secret-1"}, want: []string{"line 1: the same token as SEQD_TOKENS entry 1"}},
		// Fail closed: nothing that is not plainly TOKEN SCOPE … makes a token.
		{name: "no scope", clients: "secret-1 *\nsecret-2\n", want: []string{"line 2", "without a scope"}},
		{name: "indented continuation", clients: "secret-1 tenant-a.*\n    shared.invoices   # tenant B also\n", want: []string{"line 2", "white space"}},
		{name: "indented with tab", clients: "secret-1 *\n\tsecret-2 *\n", want: []string{"line 2", "white space"}},
		{name: "BOM and header", clients: "\ufeff##########\nsecret-1 *\n\ufeffsecret-2 *\n", want: []string{"line 3", "character 1"}},
		{name: "hash in token", clients: "secret#1 *\n", want: []string{"line 1", "character 7"}},
		{name: "control character", clients: "secret-1 *\nsecret\x0b2 *\n", want: []string{"line 2", "character 7"}},
		{name: "non-ASCII space", clients: "secret-1\u00a0*\n", want: []string{"line 1", "character 9"}},
		{name: "only =", clients: "== *\n", want: []string{"line 1", "only ="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clients := writeFile(t, dir, "tokens", tc.clients)
			args := []string{"--tokens-file", clients}
			if tc.admins != "" {
				args = append(args, "--admin-token-file", writeFile(t, dir, "admin", tc.admins))
			}
			_, err := parseConfig(args, envOf(append([]string{"MONGODB_URI", "mongodb://db"}, tc.env...)...), os.Stderr)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, dir) {
				t.Errorf("%q does not name the file", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "secret") {
				t.Errorf("%q holds a token", msg)
			}
		})
	}
}

// seqd with a malformed token file stops at start, exit status 1, and says
// where, without the token.
func TestMalformedTokenFileStopsSeqd(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", "secret-good *\nsecret-bad tenant-a.*.x\n")
	cmd := exec.Command(os.Args[0], "--tokens-file", path, "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SEQD_TEST_AS_MAIN=1", "MONGODB_URI=mongodb://127.0.0.1:1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("seqd with a malformed tokens file: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, path+" line 2") || strings.Contains(msg+stdout.String(), "secret") {
		t.Errorf("stderr %q: want the file and line 2, no token", msg)
	}
	if strings.Contains(stdout.String(), "listening") {
		t.Errorf("seqd listened:\n%s", stdout.String())
	}
}

// A byte-order mark that starts a file is a byte-order mark: the header line after
// it stays a comment, and no token is made of the mark and the header.
func TestTokenFileBOM(t *testing.T) {
	path := writeFile(t, t.TempDir(), "tokens", "\ufeff##########\ntok-a tenant-a.*\ntok-b tenant-b.*   # tenant B\n")
	lines, _, err := readTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.secret)
	}
	if want := []string{"tok-a", "tok-b"}; !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}
