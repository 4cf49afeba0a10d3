//go:build integration

package backend

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// MongoDB's failCommand failpoint makes the server fail or slow down chosen
// commands, the way mongod does for its own tests and the drivers' spec tests:
//
//	{configureFailPoint: "failCommand", mode: "alwaysOn" | "off" | {times: N} | {skip: N},
//	 data: {failCommands: [...], errorCode, errorLabels, closeConnection,
//	        blockConnection, blockTimeMS, writeConcernError, appName, namespace}}
//
// mongod accepts it only with --setParameter enableTestCommands=1; the dev store
// always does. A failpoint is one per server, so tests that use it must not run in
// parallel with each other.

// codeCommandNotFound is the server's answer to a command it does not know.
const codeCommandNotFound = 59

// RequireFailCommand skips tb unless the server accepts configureFailPoint for
// failCommand. It asks by turning the failpoint off, which changes nothing.
func (b *Backend) RequireFailCommand(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := b.configureFailCommand(ctx, "off", nil)
	var refused mongo.CommandError
	switch {
	case err == nil:
	case errors.As(err, &refused) && refused.Code == codeCommandNotFound:
		tb.Skipf("server does not accept configureFailPoint (mongod needs --setParameter enableTestCommands=1): %v", err)
	default:
		tb.Fatalf("asking %s for the failCommand failpoint: %v", b.Kind, err)
	}
}

// RequireReplicaSet skips tb unless the server is a replica set member, which
// retryable writes and transactions need. It asks hello for setName.
func (b *Backend) RequireReplicaSet(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var hello struct {
		SetName string `bson:"setName"`
	}
	if err := b.Client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		tb.Fatalf("hello to %s: %v", b.Kind, err)
	}
	if hello.SetName == "" {
		tb.Skipf("server is not a replica set member (hello has no setName): %s", b)
	}
}

// A FailCommand is the failCommand failpoint, switched on by a test.
type FailCommand struct {
	b     *Backend
	since int64 // times the failpoint had been entered when it was switched on
}

// FailCommand switches the failCommand failpoint on with mode ("alwaysOn",
// bson.D{{"times", N}}, ...) and data, and switches it off when tb ends. Call
// RequireFailCommand first.
func (b *Backend) FailCommand(tb testing.TB, mode any, data bson.D) *FailCommand {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	since, err := b.configureFailCommand(ctx, mode, data)
	if err != nil {
		tb.Fatalf("configureFailPoint failCommand %v %v: %v", mode, data, err)
	}
	f := &FailCommand{b: b, since: since}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.Off(ctx); err != nil {
			tb.Errorf("switching failCommand off: %v", err)
		}
	})
	return f
}

// Off switches the failpoint off. Commands already past it are not undone: a
// blocked one still runs when its time is up.
func (f *FailCommand) Off(ctx context.Context) error {
	_, err := f.b.configureFailCommand(ctx, "off", nil)
	return err
}

// WaitEntered waits until the failpoint has acted n times since it was switched
// on: n commands that matched it have failed, closed their connection or waited.
// It waits on the server, with waitForFailPoint, until ctx ends.
func (f *FailCommand) WaitEntered(ctx context.Context, n int64) error {
	maxTime := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		maxTime = time.Until(d)
	}
	cmd := bson.D{
		{Key: "waitForFailPoint", Value: "failCommand"},
		{Key: "timesEntered", Value: f.since + n},
		{Key: "maxTimeMS", Value: max(maxTime.Milliseconds(), 1)},
	}
	if err := f.b.Client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("waitForFailPoint failCommand entered %d times: %w", n, err)
	}
	return nil
}

// configureFailCommand sets the failpoint and returns how many times it had been
// entered before, as the server counts (since it started).
func (b *Backend) configureFailCommand(ctx context.Context, mode any, data bson.D) (int64, error) {
	cmd := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}}
	if data != nil {
		cmd = append(cmd, bson.E{Key: "data", Value: data})
	}
	var reply struct {
		Count int64 `bson:"count"`
	}
	if err := b.Client.Database("admin").RunCommand(ctx, cmd).Decode(&reply); err != nil {
		return 0, err
	}
	return reply.Count, nil
}
