package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The store's build leaves out the libraries of FerretDB's metrics and tracing,
// and other code it never runs (ferretdb/README.md), so that a first `make run`
// downloads and compiles less.
func TestBuildLeavesOutMetricsAndTracing(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the build's packages:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	left := []string{
		"github.com/prometheus/",
		"go.opentelemetry.io/",
		"google.golang.org/protobuf/",
		"golang.org/x/exp/",
		"net/http",
		"runtime/pprof",
	}
	for pkg := range strings.FieldsSeq(string(out)) {
		for _, prefix := range left {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("the build compiles %s", pkg)
			}
		}
	}
}
