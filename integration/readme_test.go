//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seqd/seqd/internal/proc"
)

// TestReadmeAPIExamples follows the README's API examples as a new user does:
// `make run` on an empty data directory, then every command of the block that
// starts with `curl localhost:8080/oid`, top to bottom, as printed. Where the
// README prints an answer under a command (`# {…}`, continued on lines that start
// with `#  `), seqd's answer must be that JSON: the same fields, the same values,
// except the ids made at the time (oid, oids, uuid, uuids: the same form) and the
// values the README elides with `…` (any value, and an object holding one may have
// more fields). Every command must succeed (curl's exit status).
func TestReadmeAPIExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on PATH: the README's examples are curl commands")
	}
	p, root := makeRun(t, t.TempDir(), "SEQD_ADMIN_TOKEN="+adminToken)
	examples := readmeBlock(t, filepath.Join(root, "README.md"), "curl localhost:8080/oid\n")
	if len(examples) < 20 {
		t.Fatalf("the README's API block has %d commands; did its first line change from `curl localhost:8080/oid`?", len(examples))
	}
	for _, ex := range examples {
		cmd := strings.ReplaceAll(ex.command, "localhost:8080", p.Addr())
		c := exec.CommandContext(testContext(t), "bash", "-c", cmd)
		c.Env = append(os.Environ(), "SEQD_ADMIN_TOKEN="+adminToken)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("README line %d: %s: %v\n%s", ex.line, ex.command, err, out)
		}
		if ex.answer == "" {
			continue
		}
		var want, got any
		if err := json.Unmarshal([]byte(elided.ReplaceAllString(ex.answer, `:"…"`)), &want); err != nil {
			t.Fatalf("README line %d prints an answer that is not JSON: %v\n%s", ex.line, err, ex.answer)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Errorf("README line %d: %s\nanswered %q, not JSON; the README prints\n%s", ex.line, ex.command, out, ex.answer)
			continue
		}
		if diff := sameAnswer("", want, got); diff != "" {
			t.Errorf("README line %d: %s\n%s\nseqd answered: %s\nthe README prints: %s", ex.line, ex.command, diff, bytes.TrimSpace(out), ex.answer)
		}
	}
}

// elided finds the values the README leaves out with an ellipsis (`"first":…`).
var elided = regexp.MustCompile(`:\s*…`)

// madeNow are the fields whose values are made at the time of the request.
var madeNow = map[string]bool{"oid": true, "oids": true, "uuid": true, "uuids": true}

// sameAnswer says how got differs from want, the README's answer, at path; "" if
// it does not.
func sameAnswer(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v where the README prints an object", path, got)
		}
		sketch := false
		for k, wv := range w {
			sketch = sketch || wv == "…"
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if wv == "…" {
				continue
			}
			if madeNow[k] {
				if fmt.Sprint(gv) == fmt.Sprint(wv) || sameForm(wv, gv) {
					continue
				}
				return fmt.Sprintf("%s.%s: %v is not of the form of %v", path, k, gv, wv)
			}
			if d := sameAnswer(path+"."+k, wv, gv); d != "" {
				return d
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok && !sketch {
				return fmt.Sprintf("%s.%s: answered, not in the README", path, k)
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v where the README prints %d items", path, got, len(w))
		}
		for i := range w {
			if d := sameAnswer(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: %v, the README prints %v", path, got, want)
		}
		return ""
	}
}

// sameForm reports whether got is an id of the form of want: a string of the same
// length and the same places of its dashes, or a list of as many such ids.
func sameForm(want, got any) bool {
	if w, ok := want.([]any); ok {
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameForm(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	w, ok1 := want.(string)
	g, ok2 := got.(string)
	return ok1 && ok2 && len(w) == len(g) && hexDigit.ReplaceAllString(w, "x") == hexDigit.ReplaceAllString(g, "x")
}

var hexDigit = regexp.MustCompile(`[0-9a-f]`)

// An example is a command of a README code block and the answer printed under it.
type example struct {
	line    int    // the command's first line in the README
	command string // lines ending in \ joined
	answer  string // the first `# {` line after it with its `#  ` continuations; "" if none
}

// readmeBlock returns the commands of the first fenced code block of the README at
// path that contains marker.
func readmeBlock(t *testing.T, path, marker string) []example {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start, end := -1, -1
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		if strings.Contains(strings.Join(lines[i+1:j], "\n")+"\n", marker) {
			start, end = i+1, j
			break
		}
		i = j
	}
	if start < 0 {
		t.Fatalf("%s: no code block holds %q", path, marker)
	}
	var out []example
	answering := false // the last line was the answer or one of its continuations
	for i := start; i < end; i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			answering = false
		case strings.HasPrefix(strings.TrimSpace(l), "#"):
			text := strings.TrimSpace(l)
			if len(out) == 0 {
				continue
			}
			ex := &out[len(out)-1]
			switch {
			case ex.answer == "" && strings.HasPrefix(text, "# {"):
				ex.answer, answering = strings.TrimPrefix(text, "# "), true
			case answering && strings.HasPrefix(text, "#  "):
				ex.answer += strings.TrimPrefix(text, "#")
			default:
				answering = false
			}
		default:
			ex := example{line: i + 1, command: l}
			for strings.HasSuffix(strings.TrimSpace(lines[i]), `\`) && i+1 < end {
				i++
				ex.command += "\n" + lines[i]
			}
			out = append(out, ex)
			answering = false
		}
	}
	return out
}

// makeRun starts `make run` in the repository as a user does, with the
// development store on a free port and its data in dataDir, seqd on a free port
// and env (NAME=value) besides; it returns the running make and the repository's
// root. Cleanup stops it as Ctrl-C does.
func makeRun(t *testing.T, dataDir string, env ...string) (*proc.Process, string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	root, err := proc.RepoRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "run", "DEVSTORE_ADDR="+freeAddr(t), "DEVSTORE_DIR="+dataDir)
	cmd.Dir = root
	cmd.Env = append(append(withoutEnv(os.Environ(), "MONGODB_URI", "SEQD_"), "SEQD_ADDR="+freeAddr(t)), env...)
	p, err := proc.Start(ctx, cmd, seqdListeningLine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { interrupt(t, p) })
	return p, root
}

// TestReadmeTenants follows the README's Tenants example: the block that writes
// the token files runs in a directory of its own (as the checkout), make run
// starts with them, the requests get the statuses the README prints beside them,
// `kill -HUP "$(cat data/seqd.pid)"` reaches this seqd, which reads the files again,
// and what the block writes is ignored by git, so that following it leaves `git
// status` clean.
func TestReadmeTenants(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on PATH: the README's examples are curl commands")
	}
	dir := t.TempDir()
	root, err := proc.RepoRoot(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	files := readmeText(t, readme, "mkdir -p data && (umask 077")
	files, found := strings.CutSuffix(strings.TrimSpace(files), "SEQD_TOKENS_FILE=data/tokens SEQD_ADMIN_TOKEN_FILE=data/admin make run")
	if !found {
		t.Fatalf("the README's token files block no longer ends with make run:\n%s", files)
	}
	sh := exec.CommandContext(testContext(t), "bash", "-e", "-c", files)
	sh.Dir = dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the README's token files block: %v\n%s", err, out)
	}
	for _, f := range []string{"data/tokens", "data/admin"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s after the README's block: %v, %v; want mode 0600", f, st.Mode(), err)
		}
		if err := exec.Command("git", "-C", root, "check-ignore", "-q", f).Run(); err != nil {
			t.Errorf("git does not ignore %s, which the README has you write (git check-ignore: %v)", f, err)
		}
	}
	if err := exec.Command("git", "-C", root, "check-ignore", "-q", "data/seqd.pid").Run(); err != nil {
		t.Errorf("git does not ignore data/seqd.pid (git check-ignore: %v)", err)
	}

	data := filepath.Join(dir, "data")
	p, _ := makeRun(t, data, "SEQD_TOKENS_FILE="+filepath.Join(data, "tokens"), "SEQD_ADMIN_TOKEN_FILE="+filepath.Join(data, "admin"))
	status := regexp.MustCompile(`# (\d{3})\b`)
	examples := readmeBlock(t, readme, `kill -HUP "$(cat data/seqd.pid)"`)
	for _, ex := range examples {
		cmd := strings.ReplaceAll(ex.command, "localhost:8080", p.Addr())
		var want string
		switch {
		case strings.HasPrefix(cmd, "curl "):
			m := status.FindStringSubmatch(cmd)
			if m == nil {
				continue // a listing: its answer is shown in words
			}
			want, cmd = m[1], "curl -s -o /dev/null -w '%{http_code}' "+strings.TrimPrefix(cmd, "curl ")
		case strings.HasPrefix(cmd, "git "):
			continue // checked above with git check-ignore
		}
		c := exec.CommandContext(testContext(t), "bash", "-c", cmd)
		c.Dir = dir
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("README line %d: %s: %v\n%s", ex.line, ex.command, err, out)
		}
		if want != "" && string(out) != want {
			t.Errorf("README line %d: %s: status %s, the README prints %s", ex.line, ex.command, out, want)
		}
	}
	waitForOutput(t, p, `"msg":"tokens reloaded"`)
}

// readmeText returns the text of the first fenced code block of the README at
// path that contains marker.
func readmeText(t *testing.T, path, marker string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "\n```")[1:] {
		if _, body, ok := strings.Cut(block, "\n"); ok && strings.Contains(body, marker) {
			return body
		}
	}
	t.Fatalf("%s: no code block holds %q", path, marker)
	return ""
}
