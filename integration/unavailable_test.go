//go:build integration

package integration

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd/counters"
)

// A backend that is down must give ErrUnavailable quickly, whether the caller's
// deadline or the driver's server selection timeout runs out first. The HTTP layer
// turns that into 503.
func TestBackendDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now

	client, err := mongo.Connect(options.Client().
		ApplyURI("mongodb://" + addr + "/").
		SetDirect(true).
		SetServerSelectionTimeout(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	db := client.Database("down")

	for _, st := range strategies {
		for _, tc := range []struct {
			name string
			ctx  func() (context.Context, context.CancelFunc)
		}{
			{"caller deadline", func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 200*time.Millisecond)
			}},
			{"server selection timeout", func() (context.Context, context.CancelFunc) {
				return context.WithCancel(context.Background())
			}},
		} {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				s := st.new(db, counters.Options{})
				ctx, cancel := tc.ctx()
				defer cancel()
				start := time.Now()
				_, err := s.Next(ctx, "orders")
				elapsed := time.Since(start)
				if !errors.Is(err, counters.ErrUnavailable) {
					t.Fatalf("Next: %v, want ErrUnavailable", err)
				}
				if elapsed > 3*time.Second {
					t.Errorf("Next took %v to give up", elapsed)
				}
				t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
			})
		}
	}
}
