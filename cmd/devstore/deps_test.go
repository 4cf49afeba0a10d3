package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The store's build leaves out the libraries of FerretDB's metrics and tracing,
// and other code it never runs (ferretdb/README.md), so that a first `make run`
// downloads and compiles less.
func TestBuildLeavesOutMetricsAndTracing(t *testing.T) {
	repoRoot(t) // skips without a go command
	out := goListDeps(t, ".", "off", "{{.ImportPath}}", ".")
	left := []string{
		"github.com/prometheus/",
		"go.opentelemetry.io/",
		"google.golang.org/protobuf/",
		"golang.org/x/exp/",
		"net/http",
		"runtime/pprof",
	}
	for pkg := range strings.FieldsSeq(out) {
		for _, prefix := range left {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("the build compiles %s", pkg)
			}
		}
	}
}

// make run builds seqd and the store in one go command, in the workspace run.work
// (build-both in the Makefile), so that what the two share is compiled once. A
// workspace takes each module at the highest version any of its modules requires;
// this checks that every package of the two programs still comes at the version
// its own module's build gives it, so that make run serves the same code as
// `go build` in each module.
func TestRunWorkspaceBuildsWhatEachModuleDoes(t *testing.T) {
	root := repoRoot(t)
	list := func(dir, gowork string, pkgs ...string) map[string]bool {
		t.Helper()
		set := map[string]bool{}
		for line := range strings.Lines(goListDeps(t, dir, gowork, "{{.ImportPath}} {{with .Module}}{{.Path}} {{.Version}}{{end}}", pkgs...)) {
			set[strings.TrimSpace(line)] = true
		}
		return set
	}
	want := list(".", "off", ".")
	for pkg := range list(root, "off", "./cmd/seqd") {
		want[pkg] = true
	}
	got := list(root, filepath.Join(root, "run.work"), "./cmd/devstore", "./cmd/seqd")
	for pkg := range got {
		if !want[pkg] {
			t.Errorf("in run.work: %s; not so in its own module's build", pkg)
		}
	}
	for pkg := range want {
		if !got[pkg] {
			t.Errorf("in its own module's build: %s; not so in run.work", pkg)
		}
	}
}

// make run's first build compiles RUN_STD (the Makefile) while it fetches the
// modules: the standard packages the two programs import, as those that no other
// package of theirs in the standard library imports, so that go build of the list
// compiles every standard package they need, and no other. runtime/cgo is left
// out of both: a build without cgo has none.
func TestRunStdIsWhatTheProgramsImport(t *testing.T) {
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(strings.ReplaceAll(string(makefile), "\\\n", " "), "\nRUN_STD = ")
	if !ok {
		t.Fatal("no RUN_STD = in the Makefile")
	}
	list, _, _ = strings.Cut(list, "\n")
	got := strings.Fields(list)

	out := goListDeps(t, root, filepath.Join(root, "run.work"), `{{if .Standard}}{{.ImportPath}} {{join .Imports " "}}{{end}}`, "./cmd/devstore", "./cmd/seqd")
	imported := map[string]bool{}
	var std []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		std = append(std, f[0])
		for _, p := range f[1:] {
			imported[p] = true
		}
	}
	var want []string
	for _, p := range std {
		if !imported[p] && p != "runtime/cgo" {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("RUN_STD = %s\nwant RUN_STD = %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// repoRoot is seqd's checkout, which holds this module; the test skips without a
// go command to list packages with.
func repoRoot(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to list the builds' packages:", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goListDeps runs go list -deps -f format on pkgs in dir, with GOWORK=gowork
// ("off", or a workspace file) and no GOFLAGS, and returns what it printed.
func goListDeps(t *testing.T, dir, gowork, format string, pkgs ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", format}, pkgs...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK="+gowork, "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("GOWORK=%s go list in %s: %v\n%s", gowork, dir, err, stderr)
	}
	return string(out)
}
