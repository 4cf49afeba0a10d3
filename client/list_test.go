package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/counters"
)

// names collects what a List loop yields until its first error.
func names(t *testing.T, c *client.Client, prefix string) ([]string, error) {
	t.Helper()
	var out []string
	for s, err := range c.List(t.Context(), prefix) {
		if err != nil {
			return out, err
		}
		out = append(out, s.Name)
	}
	return out, nil
}

// TestList walks seqd's pages through the client: every name once and in order,
// a page a request, prefixes (one ending in "z", the largest name character),
// an unusable record in its place, and a loop left early asks for no more.
func TestList(t *testing.T) {
	s := newSeqd(t)
	c := newClient(t, s.URL)
	var all []string
	for i := range 250 {
		name := fmt.Sprintf("t%03d.z", i)
		s.seq.Store(name, int64(i))
		all = append(all, name)
	}
	for _, name := range []string{"az", "azz", "az.z", "b"} {
		s.seq.Store(name, 1)
	}
	all = append([]string{"az", "az.z", "azz", "b"}, all...)
	s.seq.StoreInvalid("t100.z", fmt.Errorf("memseq: %w: the seq is a double", counters.ErrInvalidCounter))

	before := s.requests.Load()
	got, err := names(t, c, "")
	if err != nil || !slices.Equal(got, all) {
		t.Fatalf("List(\"\") = %d names, %v; want the %d stored, in order", len(got), err, len(all))
	}
	if pages := s.requests.Load() - before; pages != 3 {
		t.Errorf("%d requests for 254 sequences, want 3 pages of 100", pages)
	}
	for s, err := range c.List(t.Context(), "t100") {
		if err != nil || s.Name != "t100.z" || !errors.Is(s.Err, seqd.ErrInvalidCounter) || !strings.Contains(s.Err.Error(), "double") {
			t.Errorf("the unusable record = %+v, %v; want its name and an error wrapping ErrInvalidCounter", s, err)
		}
	}
	for prefix, want := range map[string][]string{
		"az": {"az", "az.z", "azz"}, "azz": {"azz"}, "t24": all[len(all)-10:], "c": nil, "t249.z": {"t249.z"},
	} {
		if got, err := names(t, c, prefix); err != nil || !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, %v; want %q", prefix, got, err, want)
		}
	}

	before = s.requests.Load()
	for s := range c.List(t.Context(), "") {
		if s.Name == "t010.z" {
			break
		}
	}
	if n := s.requests.Load() - before; n != 1 {
		t.Errorf("a loop left on the first page made %d requests, want 1", n)
	}

	before = s.requests.Load()
	if _, err := names(t, c, "_x"); !errors.Is(err, seqd.ErrInvalidName) || s.requests.Load() != before {
		t.Errorf("List(_x) = %v, after %d requests; want ErrInvalidName and none", err, s.requests.Load()-before)
	}

	// A failed page ends the loop with its error, after what came before it.
	var calls atomic.Int64
	s.seq.FailFunc(func(context.Context) error {
		if calls.Add(1) == 2 {
			return fmt.Errorf("memseq: %w", counters.ErrInvalidCount)
		}
		return nil
	})
	got, err = names(t, c, "")
	var e *client.Error
	if len(got) != 100 || !errors.As(err, &e) || e.Code != "invalid_count" {
		t.Errorf("a walk whose second page fails: %d names, %v; want 100 and the page's error", len(got), err)
	}
}

// TestListRefusesAnswersThatDoNotPage checks that a walk ends with an error,
// never loops, on answers that are not pages: a next that is not the page's last
// name, an empty page with a next, names out of order or without the prefix.
func TestListRefusesAnswersThatDoNotPage(t *testing.T) {
	for _, body := range []string{
		`{"sequences":[],"next":"a"}`,
		`{"sequences":[{"name":"a","value":1,"mode":"strict"}],"next":"0"}`,
		`{"sequences":[{"name":"b","value":1,"mode":"strict"},{"name":"a","value":1,"mode":"strict"}]}`,
		`{"sequences":[{"name":"zz","value":1,"mode":"strict"}]}`,
		`{"sequences":[{"name":"a"}]}`,
	} {
		var requests atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}))
		c := newClient(t, srv.URL)
		prefix := ""
		if strings.Contains(body, "zz") {
			prefix = "a"
		}
		_, err := names(t, c, prefix)
		if !errors.Is(err, seqd.ErrUnavailable) || requests.Load() != 1 {
			t.Errorf("answer %s: %v after %d requests; want ErrUnavailable after one", body, err, requests.Load())
		}
		srv.Close()
	}
}
