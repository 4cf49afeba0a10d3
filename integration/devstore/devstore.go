//go:build integration

// Package devstore builds and runs the development store for tests. The store is
// cmd/devstore, FerretDB on SQLite behind a front that makes single-document
// writes atomic and speaks MongoDB's failCommand failpoint. It speaks the MongoDB
// wire protocol on machines where mongod cannot run.
//
// cmd/devstore is a separate module, so that seqd does not depend on FerretDB.
// This package does not import it either. Build compiles the binary with the go
// tool, and Start runs it as a child process:
//
//	bin, err := devstore.Build(ctx) // once per test binary; Clean removes it
//	srv, err := devstore.Start(ctx, bin, t.TempDir())
//	defer srv.Stop(ctx)
//	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
//
// A Server is one process on one data directory. Fault tests can Kill it and
// StartAt the same directory and address again.
package devstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/seqd/seqd/integration/proc"
)

// Build compiles cmd/devstore, the first time it is called in a process, and
// returns the binary's path. Later calls return the same path. The go build cache
// makes a rebuild in a later test run fast. The first build ever takes about a
// minute.
func Build(ctx context.Context) (string, error) {
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	return proc.Build(ctx, src, ".", nestedModuleEnv(os.Environ()))
}

// sourceDir finds cmd/devstore in the repository.
func sourceDir() (string, error) {
	root, err := proc.RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "cmd", "devstore")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("devstore: no nested module at %s: %w", dir, err)
	}
	return dir, nil
}

// nestedModuleEnv drops the -mod and -modfile flags that the outer go command may
// pass down in GOFLAGS. They name seqd's go.mod, and the nested module has its own.
func nestedModuleEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
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

// A Server is a running dev store process.
type Server struct {
	*proc.Process
	dir string
}

// Start runs bin on a free port of 127.0.0.1 with its data in dir. It returns once
// the server accepts connections.
func Start(ctx context.Context, bin, dir string) (*Server, error) {
	return StartAt(ctx, bin, dir, "127.0.0.1:0")
}

// StartAt is Start on the address listen. A restart after Kill or Stop can pass
// the old Addr, so that clients find the server where it was.
func StartAt(ctx context.Context, bin, dir, listen string) (*Server, error) {
	p, err := proc.Start(ctx, exec.Command(bin, "-listen", listen, "-dir", dir), listeningOn)
	if err != nil {
		return nil, fmt.Errorf("devstore: %w", err)
	}
	return &Server{Process: p, dir: dir}, nil
}

// listeningOn reads cmd/devstore's "listening on ADDR" line.
func listeningOn(line []byte) (string, bool) {
	addr, ok := bytes.CutPrefix(line, []byte("listening on "))
	return string(addr), ok
}

// URI is a MongoDB connection string for the server.
func (s *Server) URI() string { return "mongodb://" + s.Addr() + "/" }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Stderr returns the end of the server's log, for failure messages.
func (s *Server) Stderr() string { return s.Output() }
