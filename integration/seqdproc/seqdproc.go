//go:build integration

// Package seqdproc builds cmd/seqd and runs it as a child process, the way a user
// does, for end-to-end and fault tests.
//
//	bin, err := seqdproc.Build(ctx)
//	srv, err := seqdproc.Start(ctx, bin, "MONGODB_URI="+uri, "SEQD_DB=test")
//	defer srv.Stop(ctx)
//	resp, err := http.Get(srv.URL() + "/oid")
package seqdproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/seqd/seqd/integration/proc"
)

// Build compiles cmd/seqd once per test process and returns the binary's path.
func Build(ctx context.Context) (string, error) {
	root, err := proc.RepoRoot()
	if err != nil {
		return "", err
	}
	return proc.Build(ctx, root, "./cmd/seqd", nil)
}

// A Server is a running seqd.
type Server struct {
	*proc.Process
}

// Start runs bin on a free port of 127.0.0.1 with env (KEY=value) on top of the
// test's environment less any SEQD_ or MONGODB_URI setting, and args. It returns once
// seqd logs that it listens.
func Start(ctx context.Context, bin string, env []string, args ...string) (*Server, error) {
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEQD_") && !strings.HasPrefix(kv, "MONGODB_URI=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p, err := proc.Start(ctx, cmd, listening)
	if err != nil {
		return nil, fmt.Errorf("seqdproc: %w", err)
	}
	return &Server{Process: p}, nil
}

// listening reads seqd's JSON log line {"msg":"listening","addr":…}.
func listening(line []byte) (string, bool) {
	var entry struct {
		Msg  string `json:"msg"`
		Addr string `json:"addr"`
	}
	if json.Unmarshal(line, &entry) != nil || entry.Msg != "listening" || entry.Addr == "" {
		return "", false
	}
	return entry.Addr, true
}

// URL is the base URL of the API, without a trailing slash.
func (s *Server) URL() string { return "http://" + s.Addr() }
