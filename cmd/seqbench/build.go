package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// modulePath is the module seqbench measures.
const modulePath = "github.com/seqd/seqd"

// findModuleRoot returns the nearest directory, from the working directory up, whose
// go.mod declares modulePath. cmd/devstore's own go.mod is a different module and is
// passed over.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if moduleOf(filepath.Join(dir, "go.mod")) == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s in the working directory or above: run seqbench in the repository, or give -root", modulePath)
		}
		dir = parent
	}
}

// moduleOf returns the module path a go.mod declares, or "".
func moduleOf(gomod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// binaries are the programs a run needs.
type binaries struct {
	seqd, seqload, devstore string
	self                    string // seqbench, re-executed as the bare server
}

// build compiles seqd, seqload and the dev store into dir. The dev store is a nested
// module, so it is built from its own directory.
func build(ctx context.Context, root, dir string) (binaries, error) {
	self, err := os.Executable()
	if err != nil {
		return binaries{}, fmt.Errorf("locating seqbench itself: %w", err)
	}
	bins := binaries{
		seqd:     filepath.Join(dir, "seqd"),
		seqload:  filepath.Join(dir, "seqload"),
		devstore: filepath.Join(dir, "devstore"),
		self:     self,
	}
	for _, b := range []struct{ dir, pkg, out string }{
		{root, "./cmd/seqd", bins.seqd},
		{root, "./cmd/seqload", bins.seqload},
		{filepath.Join(root, "cmd", "devstore"), ".", bins.devstore},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return binaries{}, fmt.Errorf("go build %s in %s: %w\n%s", b.pkg, b.dir, err, out)
		}
	}
	return bins, nil
}
