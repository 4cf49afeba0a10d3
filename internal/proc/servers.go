package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Environ is this process's environment less any SEQD_ or MONGODB_URI setting, with
// env (KEY=value) on top: what seqd is told is only what the caller says, never what
// the caller's shell happens to hold.
func Environ(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEQD_") && !strings.HasPrefix(kv, "MONGODB_URI=") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// A Seqd is a running cmd/seqd.
type Seqd struct {
	*Process
}

// StartSeqd runs bin on a free port of 127.0.0.1 with Environ(env...) and args. It
// returns once seqd logs that it listens, which it does at log level info.
func StartSeqd(ctx context.Context, bin string, env []string, args ...string) (*Seqd, error) {
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = Environ(env...)
	p, err := Start(ctx, cmd, seqdListening)
	if err != nil {
		return nil, fmt.Errorf("seqd: %w", err)
	}
	return &Seqd{Process: p}, nil
}

// seqdListening reads seqd's JSON log line {"msg":"listening","addr":…}, which it
// writes at log level info.
func seqdListening(line []byte) (string, bool) {
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
func (s *Seqd) URL() string { return "http://" + s.Addr() }

// A DevStore is a running development store: cmd/devstore, FerretDB on SQLite behind
// a front that makes single-document writes atomic and speaks MongoDB's failCommand
// failpoint. cmd/devstore is a module of its own, so that seqd does not depend on
// FerretDB; Build("./cmd/devstore") compiles it (the first build ever takes about a
// minute).
type DevStore struct {
	*Process
	dir string
}

// StartDevStore runs bin on the address listen ("127.0.0.1:0" for a free port) with
// its data in dir and the further flags args, and returns once it accepts
// connections. A restart after Kill or Stop can pass the old Addr, so that
// clients find the store where it was.
func StartDevStore(ctx context.Context, bin, dir, listen string, args ...string) (*DevStore, error) {
	p, err := Start(ctx, exec.Command(bin, append([]string{"-listen", listen, "-dir", dir}, args...)...), ListeningOn)
	if err != nil {
		return nil, fmt.Errorf("devstore: %w", err)
	}
	return &DevStore{Process: p, dir: dir}, nil
}

// URI is a MongoDB connection string for the store.
func (s *DevStore) URI() string { return "mongodb://" + s.Addr() + "/" }

// Dir is the store's data directory.
func (s *DevStore) Dir() string { return s.dir }

// ListeningOn reads a "listening on ADDR" line, as cmd/devstore prints it.
func ListeningOn(line []byte) (string, bool) {
	addr, ok := bytes.CutPrefix(line, []byte("listening on "))
	return string(addr), ok && len(addr) > 0
}
