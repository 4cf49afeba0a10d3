//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/history"
	"github.com/seqd/seqd/internal/proc"
)

// A cluster is the environment of the several-instance and failpoint tests: a
// deployment of several seqd processes on one database of the backend, as behind
// a load balancer, and the clients that use it, over HTTP or, as other
// applications sharing the counters, through the driver.
type cluster struct {
	t     *testing.T
	db    string // the database every instance uses
	seqds []*proc.Seqd
	http  *http.Client
}

// seqdAppName is the application name seqd gives in its handshake. A failpoint
// aimed at it leaves the test's own driver clients alone.
const seqdAppName = "seqd"

// startCluster starts instances seqd processes on a new database, with the admin
// token and env (KEY=value), and stops them when the test ends. clients is the
// most HTTP clients the test will run at once.
func startCluster(t *testing.T, instances, clients int, env ...string) *cluster {
	t.Helper()
	c := &cluster{t: t, db: be.Database(t).Name(), http: loadClient(t, clients)}
	env = append([]string{"SEQD_ADMIN_TOKEN=" + adminToken}, env...)
	for range instances {
		c.seqds = append(c.seqds, startSeqdAt(t, seqdURI(), c.db, env...))
	}
	return c
}

// load has clients HTTP clients call /seq/{name}/next until it is stopped, spread
// evenly over the instances, each client on one. handle gets every outcome, with
// the instance that gave it, as startLoad describes.
func (c *cluster) load(ctx context.Context, name string, clients int, handle func(instance int, call nextCall)) (stop func()) {
	var loads []*load
	for i, srv := range c.seqds {
		n := clients / len(c.seqds)
		if i < clients%len(c.seqds) {
			n++
		}
		loads = append(loads, startLoad(ctx, c.t, c.http, srv.URL(), name, n, func(call nextCall) { handle(i, call) }))
	}
	return func() {
		for _, l := range loads {
			l.stop()
		}
	}
}

// op checks a 200 answer from instance and turns it into an operation of the
// history.
func (c *cluster) op(instance int, call nextCall, name string) (history.Op, error) {
	op, err := call.op(name)
	op.Client += " -> " + c.seqds[instance].Addr()
	return op, err
}

// counters returns the instances' counter collection as another application sees
// it: through a client of its own, with its own connections.
func (c *cluster) counters() *mongo.Collection {
	return be.NewClient(c.t).Database(c.db).Collection(counters.CounterCollection,
		options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// increment is what another application does to take a value of the counter
// name: the findOneAndUpdate $inc that seqd's counter documents are made for.
func increment(ctx context.Context, coll *mongo.Collection, name string) (int64, error) {
	var doc struct {
		Seq int64 `bson:"seq"`
	}
	err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: name}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: 1}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
	if err != nil {
		return 0, fmt.Errorf("findOneAndUpdate %q $inc: %w", name, err)
	}
	return doc.Seq, nil
}

// raise sets name to value through instance's admin API, as an operator does
// during the run, and returns the call as an operation of the history holding
// value: once it has returned, no allocation may get value or less. The caller
// chooses a value above any handed out before the call, so that the operation
// also holds for everything that completed before. The answer is the sequence as
// read after the change, which other writers may already have moved past value.
func (c *cluster) raise(ctx context.Context, instance int, name string, value int64) (history.Op, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.seqds[instance].URL()+"/seq/"+name,
		strings.NewReader(fmt.Sprintf(`{"value":%d}`, value)))
	if err != nil {
		return history.Op{}, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return history.Op{}, fmt.Errorf("PUT /seq/%s: %w", name, err)
	}
	defer resp.Body.Close()
	var body seqReply
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || body.Value < value {
		return history.Op{}, fmt.Errorf("PUT /seq/%s {value: %d}: status %d, %+v, %v", name, value, resp.StatusCode, body, err)
	}
	return history.Op{Client: "admin PUT -> " + c.seqds[instance].Addr(), Start: start, End: time.Now(), First: value, Last: value}, nil
}
