package counters

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// TestUnavailableServerErrors checks that every error meaning "the backend cannot
// confirm now" wraps ErrUnavailable, however the driver delivers it, and that
// errors about the request itself do not.
func TestUnavailableServerErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"ExceededTimeLimit without label", mongo.CommandError{Code: 262, Message: "operation exceeded time limit"}, true},
		{"HostUnreachable", mongo.CommandError{Code: 6, Message: "host unreachable"}, true},
		{"HostNotFound", mongo.CommandError{Code: 7, Message: "host not found"}, true},
		{"NetworkTimeout", mongo.CommandError{Code: 89, Message: "network timeout"}, true},
		{"SocketException", mongo.CommandError{Code: 9001, Message: "socket exception"}, true},
		{"WriteConcernFailed as command error", mongo.CommandError{Code: 64, Message: "waiting for replication timed out"}, true},
		{"UnsatisfiableWriteConcern as command error", mongo.CommandError{Code: 100, Message: "not enough data-bearing nodes"}, true},
		{"writeConcernError 64 on findAndModify", mongo.WriteException{
			WriteConcernError: &mongo.WriteConcernError{Code: 64, Message: "waiting for replication timed out"}}, true},
		{"writeConcernError 100 on findAndModify", mongo.WriteException{
			WriteConcernError: &mongo.WriteConcernError{Code: 100, Message: "not enough data-bearing nodes"}}, true},
		{"writeConcernError of another code", mongo.WriteException{
			WriteConcernError: &mongo.WriteConcernError{Code: 79, Message: "unknown replica set tag"}}, true},
		{"writeConcernError on insertMany", mongo.BulkWriteException{
			WriteConcernError: &mongo.WriteConcernError{Code: 64, Message: "waiting for replication timed out"}}, true},
		{"duplicate key", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000, Message: "E11000"}}}, false},
		{"bad value", mongo.CommandError{Code: 2, Message: "BadValue"}, false},
		{"type mismatch", mongo.CommandError{Code: 14, Message: "TypeMismatch"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := wrap(tc.err, "next", "orders")
			if got := errors.Is(err, ErrUnavailable); got != tc.unavailable {
				t.Errorf("wrap(%v): unavailable = %v, want %v", tc.err, got, tc.unavailable)
			}
		})
	}
}

// TestMayHaveRun checks which failed writes count as possibly applied: those
// the server may have applied before the error, not those it refused or never got.
func TestMayHaveRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		ran  bool
	}{
		{"writeConcernError", mongo.WriteException{
			WriteConcernError: &mongo.WriteConcernError{Code: 64, Message: "waiting for replication timed out"}}, true},
		{"connection lost", mongo.CommandError{Code: 0, Message: "connection closed", Labels: []string{"NetworkError"}}, true},
		{"deadline", fmt.Errorf("reading the reply: %w", context.DeadlineExceeded), true},
		{"context cancelled", context.Canceled, true},
		{"unknown", errors.New("something else"), true},
		{"ShutdownInProgress", mongo.CommandError{Code: 91, Message: "shutting down"}, false},
		{"NotWritablePrimary", mongo.CommandError{Code: 10107, Message: "not primary", Labels: []string{"RetryableWriteError"}}, false},
		{"duplicate key", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000, Message: "E11000"}}}, false},
		{"no server", topology.ServerSelectionError{Wrapped: errors.New("no reachable servers")}, false},
		{"client disconnected", mongo.ErrClientDisconnected, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayHaveRun(tc.err); got != tc.ran {
				t.Errorf("mayHaveRun(%v) = %v, want %v", tc.err, got, tc.ran)
			}
		})
	}
}
