package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runAsStore, set to 1 in the environment, makes the test binary run the store
// (main) instead of the tests, so that a test can kill a store process as a crash
// would, without building the command.
const runAsStore = "DEVSTORE_TEST_RUN_STORE"

func TestMain(m *testing.M) {
	if os.Getenv(runAsStore) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startStoreProcess runs the store as a process of its own on a free port with
// its data in dir. kill ends it with SIGKILL; it is killed when t ends anyway.
func startStoreProcess(t *testing.T, dir string) (s *testStore, kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-listen", "127.0.0.1:0", "-dir", dir)
	cmd.Env = append(os.Environ(), runAsStore+"=1")
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var stderr bytes.Buffer // read only once the process has been waited for
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = sync.OnceFunc(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pw.Close()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("store's stderr:\n%s", &stderr)
		}
	})
	t.Cleanup(kill)
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) // ends when kill closes pw
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		kill()
		t.Fatalf("store did not start: %q, %v\n%s", line, err, &stderr)
	}
	return &testStore{addr: addr, dir: dir}, kill
}

// incrementFromClients makes n counter increments, as seqd makes them, from
// clients independent clients of s, each on a counter of its own in database db.
// It returns the largest size db's write-ahead log was seen at meanwhile.
func incrementFromClients(t *testing.T, s *testStore, db string, clients, n int) int64 {
	t.Helper()
	ctx := testContext(t)
	wal := filepath.Join(s.dir, db+".sqlite-wal")
	var largest int64
	look := func() {
		if fi, err := os.Stat(wal); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	stop := make(chan struct{})
	var watching sync.WaitGroup // its end makes largest safe to read
	watching.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				look()
			case <-stop:
				look()
				return
			}
		}
	})
	var wg sync.WaitGroup
	for i := range clients {
		c := connect(t, s.uri())
		defer c.Disconnect(ctx) // before the store is killed, or it would wait for it
		coll := c.Database(db).Collection("counters")
		wg.Go(func() {
			for range n / clients {
				if _, err := increment(ctx, coll, fmt.Sprint("c", i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	watching.Wait()
	return largest
}

// Under a steady load of counter writes the SQLite write-ahead log stays within
// twice SQLite's own checkpoint size (1000 pages, 4 MiB), and so it does after the
// store is killed, leaving its log behind, and started again on the same
// directory. Each write adds about 8 KB to a log, so 2000 of them take a log
// that is never reset to 16 MB, and 1000 more to 25 MB.
func TestWriteAheadLogStaysBounded(t *testing.T) {
	const (
		db      = "walgrowth"
		clients = 8
		bound   = 8 << 20 // twice SQLite's own checkpoint size
	)
	check := func(when string, largest int64) {
		t.Helper()
		msg := fmt.Sprintf("%s: the write-ahead log reached %.1f MB; the bound is %.1f MB", when, float64(largest)/1e6, bound/1e6)
		if largest > bound {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
	dir := t.TempDir()
	s, kill := startStoreProcess(t, dir)
	check("2000 writes", incrementFromClients(t, s, db, clients, 2000))
	kill()
	s, _ = startStoreProcess(t, dir)
	check("1000 writes after a SIGKILL and a restart", incrementFromClients(t, s, db, clients, 1000))
}
