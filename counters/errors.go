package counters

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

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
// did not answer, before the context or a driver timeout ran out.
func unavailable(err error) bool {
	var server mongo.ServerError
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) ||
		errors.Is(err, mongo.ErrClientDisconnected) ||
		errors.As(err, new(topology.ServerSelectionError)) ||
		mongo.IsTimeout(err) ||
		mongo.IsNetworkError(err) ||
		errors.As(err, &server) && failingOver(server)
}

// failingOver reports a server error of a replica set changing primaries or a node
// shutting down: the write may go through on the next primary, so it is the
// backend's trouble for now, not the request's. The codes are those the driver
// retries on.
func failingOver(err mongo.ServerError) bool {
	if err.HasErrorLabel("RetryableWriteError") {
		return true
	}
	for _, code := range []int{
		91,    // ShutdownInProgress
		189,   // PrimarySteppedDown
		10107, // NotWritablePrimary
		11600, // InterruptedAtShutdown
		11602, // InterruptedDueToReplStateChange
		13435, // NotPrimaryNoSecondaryOk
		13436, // NotPrimaryOrSecondary
	} {
		if err.HasErrorCode(code) {
			return true
		}
	}
	return false
}

// invalidName is the error for a name that ValidName refuses.
func invalidName(op, name string) error {
	return fmt.Errorf("counters: %s %q: %w", op, name, ErrInvalidName)
}
