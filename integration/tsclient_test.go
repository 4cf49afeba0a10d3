//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// tsClientDir holds the TypeScript client's program and its packages
// (openapi-typescript, openapi-fetch, typescript, @types/node), installed with
// `npm ci --prefix integration/testdata/tsclient`.
const tsClientDir = "testdata/tsclient"

// TestTypeScriptClient is a TypeScript developer's first hour with seqd: generate
// the types from the document the server serves with openapi-typescript, compile a
// program that calls every operation through openapi-fetch with tsc --strict, and
// run it with Node against the real seqd. The program takes and sets values past
// 2^53 with ?int64=string and checks they come back exact (see client.ts).
func TestTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	modules, err := filepath.Abs(filepath.Join(tsClientDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "openapi-fetch")); err != nil {
		t.Skipf("no packages in %s: install them with `npm ci --prefix integration/%s`", modules, tsClientDir)
	}
	srv := startSeqd(t, "SEQD_ADMIN_TOKEN="+adminToken)
	base := "http://" + srv.Addr()

	// The program and the types generated from the served document, in a directory
	// of the test's own, with the packages linked in.
	dir := t.TempDir()
	for _, f := range []string{"client.ts", "tsconfig.json", "package.json"} {
		b, err := os.ReadFile(filepath.Join(tsClientDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	run := func(name string, env []string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(testContext(t), node, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", name, err, stdout.Bytes(), stderr.Bytes())
		}
		return stdout.Bytes()
	}
	run("openapi-typescript", nil, "node_modules/openapi-typescript/bin/cli.js", base+"/openapi.json", "-o", "seqd.ts")
	run("tsc --strict", nil, "node_modules/typescript/bin/tsc", "-p", ".")
	out := run("client.js", []string{"SEQD_URL=" + base, "SEQD_ADMIN_TOKEN=" + adminToken}, "out/client.js")

	var got struct {
		Operations []string
		Values     []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the program printed %q: %v", out, err)
	}
	doc := do(t, base, call{path: "/openapi.json"})
	var spec struct {
		Paths map[string]map[string]struct{ OperationID string }
	}
	doc.want(t, 200, &spec)
	for _, ops := range spec.Paths {
		for _, op := range ops {
			if !slices.Contains(got.Operations, op.OperationID) {
				t.Errorf("the TypeScript client did not call %s", op.OperationID)
			}
		}
	}
	want := []string{"9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995"}
	if !slices.Equal(got.Values, want) {
		t.Errorf("the TypeScript client took %v past 2^53, want %v", got.Values, want)
	}
	t.Logf("TypeScript client (tsc --strict, openapi-fetch): %d operations; values past 2^53 exact: %v", len(got.Operations), got.Values)
}
