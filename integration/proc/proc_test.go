//go:build integration

package proc

import (
	"bytes"
	"testing"
)

func TestReadyWatch(t *testing.T) {
	out := &tail{max: 1 << 10}
	w := &readyWatch{
		ready: func(line []byte) (string, bool) {
			addr, ok := bytes.CutPrefix(line, []byte("listening on "))
			return string(addr), ok
		},
		addr: make(chan string, 1),
		out:  out,
	}
	chunks := []string{"starting\nlisten", "ing on 127.0.0.1:4", "242\nlistening on ignored\n"}
	for _, chunk := range chunks {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got := <-w.addr; got != "127.0.0.1:4242" {
		t.Errorf("address %q, want 127.0.0.1:4242", got)
	}
	if got, want := out.String(), chunks[0]+chunks[1]+chunks[2]; got != want {
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
