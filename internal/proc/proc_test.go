package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the child the lifecycle tests start: PROC_TEST_CHILD says
// how it behaves.
func TestMain(m *testing.M) {
	switch os.Getenv("PROC_TEST_CHILD") {
	case "":
		os.Exit(m.Run())
	case "serve": // says where it listens, exits 0 on SIGTERM
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println("starting\nlistening on 127.0.0.1:4242")
		<-term
		os.Exit(0)
	case "stubborn": // ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("listening on 127.0.0.1:4243")
		time.Sleep(time.Hour) // until killed; a bare select{} would end as a deadlock
	case "busy": // does some work (a fixed amount, whatever else runs) before it serves as "serve"
		x := 0
		for i := range 300_000_000 {
			x += i ^ x>>3
		}
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println("worked", x%2, "\nlistening on 127.0.0.1:4244")
		<-term
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "cannot listen")
		os.Exit(3)
	}
}

func child(t *testing.T, mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROC_TEST_CHILD="+mode)
	return cmd
}

func TestStartStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Start(ctx, child(t, "serve"), ListeningOn)
	if err != nil {
		t.Fatal(err)
	}
	if p.Addr() != "127.0.0.1:4242" || p.Exited() != nil {
		t.Errorf("Addr %q, Exited %v", p.Addr(), p.Exited())
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Errorf("exit status after SIGTERM: %v, want 0", err)
	}
	if err := p.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if !strings.Contains(p.Output(), "starting\n") || p.Exited() == nil {
		t.Errorf("output %q, Exited %v", p.Output(), p.Exited())
	}
}

func TestStopKillsAStubbornProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Start(ctx, child(t, "stubborn"), ListeningOn)
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if err := p.Stop(short); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop of a process that ignores SIGTERM: %v, want killed", err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done not closed after Stop killed the process")
	}
}

func TestStartFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Start(ctx, child(t, "fail"), ListeningOn)
	if err == nil || !strings.Contains(err.Error(), "exited before listening") || !strings.Contains(err.Error(), "cannot listen") {
		t.Errorf("got %v, want the exit and the child's output", err)
	}
}

func TestReadyWatch(t *testing.T) {
	out := &tail{max: 1 << 10}
	w := &readyWatch{ready: ListeningOn, addr: make(chan string, 1), out: out}
	chunks := []string{"starting\nlisten", "ing on 127.0.0.1:4", "242\nlistening on ignored\n"}
	for _, chunk := range chunks {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got := <-w.addr; got != "127.0.0.1:4242" {
		t.Errorf("address %q, want 127.0.0.1:4242", got)
	}
	if got, want := out.String(), strings.Join(chunks, ""); got != want {
		t.Errorf("output %q, want everything written: %q", got, want)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 4}
	tl.Write([]byte("abc"))
	tl.Write([]byte("defg"))
	if got := tl.String(); got != "defg" {
		t.Errorf("tail %q, want %q", got, "defg")
	}
}

func TestReadyLines(t *testing.T) {
	if addr, ok := ListeningOn([]byte("listening on 127.0.0.1:4242")); !ok || addr != "127.0.0.1:4242" {
		t.Errorf("ListeningOn = %q, %v", addr, ok)
	}
	for _, line := range []string{"2026/11/21 INFO Listening on TCP 127.0.0.1:4242...", "listening on "} {
		if _, ok := ListeningOn([]byte(line)); ok {
			t.Errorf("%q taken for the ready line", line)
		}
	}
	if addr, ok := seqdListening([]byte(`{"level":"INFO","msg":"listening","addr":"127.0.0.1:8080","db":"seqd"}`)); !ok || addr != "127.0.0.1:8080" {
		t.Errorf("seqdListening = %q, %v", addr, ok)
	}
	for _, line := range []string{`{"msg":"listening"}`, `{"msg":"stopped","addr":"x"}`, "listening on 127.0.0.1:1"} {
		if _, ok := seqdListening([]byte(line)); ok {
			t.Errorf("%q taken for seqd's ready line", line)
		}
	}
}

func TestNestedModuleEnv(t *testing.T) {
	got := nestedModuleEnv([]string{"HOME=/root", "GOFLAGS=-buildvcs=false -modfile=/x/go.mod -mod=mod -trimpath"})
	want := []string{"HOME=/root", "GOFLAGS=-buildvcs=false -trimpath"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("SEQD_DB", "from-the-shell")
	t.Setenv("MONGODB_URI", "mongodb://shell/")
	env := Environ("SEQD_DB=mine")
	if slices.Contains(env, "SEQD_DB=from-the-shell") || slices.Contains(env, "MONGODB_URI=mongodb://shell/") {
		t.Errorf("the shell's settings kept: %q", env)
	}
	if env[len(env)-1] != "SEQD_DB=mine" || !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("want PATH kept and SEQD_DB=mine last: %q", env)
	}
}

func TestBuildNestedModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the development store")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	defer Clean()
	bin, err := Build(ctx, "./cmd/devstore")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Build(ctx, "./cmd/devstore"); again != bin || err != nil {
		t.Errorf("second Build: %q, %v; want the same binary %q", again, err, bin)
	}
	out, _ := exec.CommandContext(ctx, bin, "-h").CombinedOutput()
	if !bytes.Contains(out, []byte("-listen")) {
		t.Errorf("%s -h: %s", bin, out)
	}
}

func TestShellJoin(t *testing.T) {
	if got := ShellJoin([]string{"test", "-run", "^$", "-bench", ".", "it's", ""}); got != `test -run '^$' -bench . 'it'\''s' ''` {
		t.Errorf("ShellJoin: %s", got)
	}
}

func TestCPUTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Start(ctx, child(t, "busy"), ListeningOn)
	if err != nil {
		t.Fatal(err)
	}
	if used := p.CPUTime(); used < 50*time.Millisecond {
		t.Errorf("CPUTime of a child that worked for a while: %v", used)
	}
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if used := p.CPUTime(); used != 0 {
		t.Errorf("CPUTime after the exit: %v, want 0", used)
	}
}
