package httpapi_test

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seqd/seqd/httpapi"
)

func refAllows(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if p == "*" {
			return true
		}
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

func randName(r *rand.Rand, maxLen int) string {
	const first = "ab0"
	const rest = "ab0.-_"
	n := 1 + r.IntN(maxLen)
	b := []byte{first[r.IntN(len(first))]}
	for len(b) < n {
		b = append(b, rest[r.IntN(len(rest))])
	}
	return string(b)
}

// Random scopes of names and overlapping prefixes, against a reference, for
// Allows and for every page of a listing.
func TestAttackScopeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	long := strings.Repeat("a", 64)
	s := newServer(t)
	_ = s
	var names []string
	seen := map[string]bool{}
	for range 300 {
		n := randName(r, 4)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, n := range []string{long, long[:63], long[:63] + "b", "a", "ab", "a-", "a.", "a_"} {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for iter := range 150 {
		var pats []string
		for range 1 + r.IntN(5) {
			switch r.IntN(6) {
			case 0:
				pats = append(pats, randName(r, 3)+"*")
			case 1:
				pats = append(pats, randName(r, 2)+"*")
			case 2:
				pats = append(pats, long)
			case 3:
				pats = append(pats, long[:63]+"*")
			default:
				pats = append(pats, randName(r, 3))
			}
		}
		if iter%37 == 0 {
			pats = append(pats, "*")
		}
		sc, err := httpapi.ParseScope(pats...)
		if err != nil {
			t.Fatalf("%q: %v", pats, err)
		}
		for _, n := range names {
			if got, want := sc.Allows(n), refAllows(pats, n); got != want {
				t.Fatalf("scope %q Allows(%q) = %v, want %v", pats, n, got, want)
			}
		}
		k, err := httpapi.NewKeyring([]httpapi.Token{{Secret: "tok", Scope: sc}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := newServer(t, withKeys(k))
		for _, n := range names {
			srv.counter.Store(n, 1)
		}
		for _, prefix := range []string{"", "a", "ab", "a.", "0", "b-", long[:63]} {
			var want []string
			for _, n := range names {
				if refAllows(pats, n) && strings.HasPrefix(n, prefix) {
					want = append(want, n)
				}
			}
			for _, limit := range []int{1, 2, 5, 1000} {
				if got := walkScoped(t, srv, "tok", prefix, limit); !slices.Equal(got, want) {
					t.Fatalf("scope %q prefix %q limit %d: listed %q, want %q", pats, prefix, limit, got, want)
				}
			}
		}
	}
}

// Hammer requests while keyrings swap: a token in every keyring never gets 401;
// a token removed before the request started never gets 200.
//
// The stable token must get 200 and nothing else, so the requests' Timeout is
// far above what any of them takes: on a loaded machine, under -race, with 17
// goroutines on two cores, some took 2.6 s, past the default 2 s, and a request
// past its Timeout is 503, which says nothing of keyrings.
func TestAttackKeyringSwapHammer(t *testing.T) {
	k, err := httpapi.NewKeyring([]httpapi.Token{{Secret: "stable"}, {Secret: "old"}}, []httpapi.Token{{Secret: "adm"}})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, withKeys(k), withTimeout(time.Hour))
	s.counter.Store("x", 1)
	var oldRemoved atomic.Bool
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var cl []httpapi.Token
			switch i % 3 {
			case 0:
				cl = []httpapi.Token{{Secret: "stable"}, {Secret: "rot-a"}}
			case 1:
				cl = []httpapi.Token{{Secret: "rot-b"}, {Secret: "stable", Scope: scope(t, "x")}}
			default:
				cl = []httpapi.Token{{Secret: "stable", Scope: scope(t, "*")}}
			}
			if err := k.Set(cl, []httpapi.Token{{Secret: "adm"}}); err != nil {
				t.Error(err)
				return
			}
			// A malformed set (duplicate) changes nothing.
			if err := k.Set([]httpapi.Token{{Secret: "dup"}, {Secret: "dup"}}, nil); err == nil {
				t.Error("duplicate accepted")
			}
			oldRemoved.Store(true)
		}
	})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 3000 {
				tok := "stable"
				if w%4 == 0 {
					tok = "old"
				}
				removed := oldRemoved.Load()
				path := []string{"/seq/x", "/seq/x/next", "/uuid", "/seq?limit=5"}[i%4]
				method := http.MethodGet
				rec := s.serve(t, newRequest(method, path, "", "Authorization", "Bearer "+tok))
				switch {
				case tok == "stable" && rec.Code != 200:
					t.Errorf("stable token on %s: %d %s", path, rec.Code, rec.Body)
					return
				case tok == "old" && removed && rec.Code != 401:
					t.Errorf("removed token on %s: %d", path, rec.Code)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	swapper.Wait()
}
