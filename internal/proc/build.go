package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var builds struct {
	sync.Mutex
	root string
	bins map[string]string // package -> binary
	dirs []string
}

// RepoRoot is the directory of the module that the go tool finds from the working
// directory: the seqd repository, for its tests and for `go run ./cmd/seqbench`.
func RepoRoot(ctx context.Context) (string, error) {
	builds.Lock()
	defer builds.Unlock()
	return repoRoot(ctx)
}

func repoRoot(ctx context.Context) (string, error) {
	if builds.root != "" {
		return builds.root, nil
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("proc: no go.mod in the working directory or above (go env GOMOD: %q, %v)", gomod, err)
	}
	builds.root = filepath.Dir(gomod)
	return builds.root, nil
}

// Build compiles the package pkg, a path relative to RepoRoot such as "./cmd/seqd",
// the first time it is asked in a process, and returns the binary's path. A package
// with a go.mod of its own (cmd/devstore) is built in its own module. Later calls
// return the same path; Clean removes the binaries.
func Build(ctx context.Context, pkg string) (string, error) {
	return BuildTags(ctx, pkg, "")
}

// BuildTags is Build with go build -tags tags ("" for none): the robustness
// suite's deliberately broken binaries (integration/robustness). A package is
// built once for each set of tags.
func BuildTags(ctx context.Context, pkg, tags string) (string, error) {
	builds.Lock()
	defer builds.Unlock()
	key := pkg
	if tags != "" {
		key = pkg + " -tags " + tags
	}
	if bin, ok := builds.bins[key]; ok {
		return bin, nil
	}
	root, err := repoRoot(ctx)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "seqd-bin-")
	if err != nil {
		return "", fmt.Errorf("proc: build: %w", err)
	}
	bin := filepath.Join(tmp, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	if nested := filepath.Join(root, pkg); fileExists(filepath.Join(nested, "go.mod")) {
		cmd.Args[len(cmd.Args)-1], cmd.Dir = ".", nested
		cmd.Env = nestedModuleEnv(os.Environ())
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("proc: go build %s: %w\n%s", pkg, err, out)
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[key] = bin
	builds.dirs = append(builds.dirs, tmp)
	return bin, nil
}

// Clean removes the binaries Build made.
func Clean() error {
	builds.Lock()
	defer builds.Unlock()
	var errs []error
	for _, d := range builds.dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	builds.bins, builds.dirs = nil, nil
	return errors.Join(errs...)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// nestedModuleEnv drops the -mod and -modfile flags that the outer go command may
// pass down in GOFLAGS. They name seqd's go.mod, and the nested module has its own.
func nestedModuleEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		flags, ok := strings.CutPrefix(kv, "GOFLAGS=")
		if !ok {
			out = append(out, kv)
			continue
		}
		var keep []string
		for _, f := range strings.Fields(flags) {
			if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "-modfile=") {
				keep = append(keep, f)
			}
		}
		out = append(out, "GOFLAGS="+strings.Join(keep, " "))
	}
	return out
}
