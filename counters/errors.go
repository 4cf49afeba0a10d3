package counters

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// ErrInTransaction is a call whose context carries a MongoDB session with a
// transaction running. It is refused before any round trip: the package
// comment (Sessions and transactions) says why. Only a library caller can
// meet it: seqd's HTTP API never runs a call in a session.
var ErrInTransaction = errors.New("a sequence cannot be used inside a MongoDB transaction")

// refuseTransaction returns an error wrapping ErrInTransaction, naming op and
// name, if ctx carries a session with a transaction running (started, and not
// yet committed or aborted); otherwise nil. It reads the session's state on
// the client: a transaction started but not yet sent a command counts.
func refuseTransaction(ctx context.Context, op, name string) error {
	if s := mongo.SessionFromContext(ctx); s != nil && s.TransactionRunning() {
		return wrap(ErrInTransaction, op, name)
	}
	return nil
}

// wrap adds the operation and the sequence name to err. If err is trouble reaching
// the backend, wrap also adds ErrUnavailable and keeps err, so that errors.Is
// matches both. name may be empty for operations on no particular sequence.
func wrap(err error, op, name string) error {
	if err == nil {
		return nil
	}
	prefix := "counters: " + op
	if name != "" {
		prefix = fmt.Sprintf("counters: %s %q", op, name)
	}
	if unavailable(err) && !errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("%s: %w: %w", prefix, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// unavailable reports whether err means that the backend could not be reached, or
// could not confirm the operation, before the context or a driver timeout ran out.
// The operation may still have taken effect (a gap, never a duplicate), so it is the
// backend's trouble for now, not the request's.
func unavailable(err error) bool {
	var server mongo.ServerError
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) ||
		errors.Is(err, mongo.ErrClientDisconnected) ||
		errors.As(err, new(topology.ServerSelectionError)) ||
		mongo.IsTimeout(err) ||
		mongo.IsNetworkError(err) ||
		writeConcernFailed(err) ||
		errors.As(err, &server) && cannotConfirm(server)
}

// cannotConfirm reports a server error that means "not now" rather than "never":
// a replica set changing primaries or a node shutting down (the codes the driver
// retries on), a mongos that lost its shard, a time limit, or a write concern that
// was not met.
func cannotConfirm(err mongo.ServerError) bool {
	if err.HasErrorLabel("RetryableWriteError") {
		return true
	}
	for _, code := range unavailableCodes {
		if err.HasErrorCode(code) {
			return true
		}
	}
	return false
}

// unavailableCodes are the server error codes cannotConfirm accepts.
var unavailableCodes = []int{
	6,     // HostUnreachable (mongos)
	7,     // HostNotFound (mongos)
	64,    // WriteConcernFailed
	89,    // NetworkTimeout (mongos)
	91,    // ShutdownInProgress
	100,   // UnsatisfiableWriteConcern
	189,   // PrimarySteppedDown
	262,   // ExceededTimeLimit, with or without the retryable label
	9001,  // SocketException (mongos)
	10107, // NotWritablePrimary
	11600, // InterruptedAtShutdown
	11602, // InterruptedDueToReplStateChange
	13435, // NotPrimaryNoSecondaryOk
	13436, // NotPrimaryOrSecondary
}

// mayHaveRun reports whether a write that failed with err may have been applied
// all the same: its write concern was not met, its connection broke or its time
// ran out after it was sent. A write the server refused with an error of its
// own, or that never left the client, was not applied.
func mayHaveRun(err error) bool {
	var server mongo.ServerError
	switch {
	case writeConcernFailed(err), mongo.IsNetworkError(err), mongo.IsTimeout(err):
		return true
	case errors.As(err, &server),
		errors.As(err, new(topology.ServerSelectionError)),
		errors.Is(err, mongo.ErrClientDisconnected):
		return false
	}
	return true // a context that ended mid-way, or an error of unknown kind
}

// writeConcernFailed reports a write whose reply carries a writeConcernError, of
// any code: the write was applied where it ran but not confirmed as asked. A
// findOneAndUpdate or insert reports it as a WriteException, an insertMany as a
// BulkWriteException.
func writeConcernFailed(err error) bool {
	var we mongo.WriteException
	if errors.As(err, &we) && we.WriteConcernError != nil {
		return true
	}
	var bwe mongo.BulkWriteException
	return errors.As(err, &bwe) && bwe.WriteConcernError != nil
}

// invalidName is the error for a name that ValidName refuses.
func invalidName(op, name string) error {
	return fmt.Errorf("counters: %s %q: %w", op, name, ErrInvalidName)
}

// checkSet returns the error for Set arguments that neither strategy takes, or nil.
func checkSet(name string, value int64) error {
	if !ValidName(name) {
		return invalidName("set", name)
	}
	if value < 0 {
		return fmt.Errorf("counters: set %q to %d: %w", name, value, ErrInvalidValue)
	}
	return nil
}
