//go:build integration

package integration

import (
	"net/url"
	"strings"
	"testing"

	"github.com/seqd/seqd/integration/relay"
)

// startSlowProxy starts a relay to upstream (package relay) until the test ends:
// a slow backend, or one cut off and healed, as its client sees it.
func startSlowProxy(t *testing.T, upstream string) *relay.Relay {
	t.Helper()
	return relay.Start(t, upstream)
}

// startStoreRelay starts a relay to the backend and returns it with a
// connection string that reaches the backend through it only: direct, so that
// the driver does not discover the replica set's members and go around it.
func startStoreRelay(t *testing.T) (*relay.Relay, string) {
	t.Helper()
	u, err := url.Parse(seqdURI())
	if err != nil || u.Scheme != "mongodb" || u.Host == "" || strings.Contains(u.Host, ",") {
		t.Skipf("the relay needs a mongodb:// URI with one host, not %s", be.Kind)
	}
	p := relay.Start(t, u.Host)
	uri, err := p.Through(seqdURI())
	if err != nil {
		t.Fatal(err)
	}
	return p, uri
}
