package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// An operation is one command on its way through the front: what ends the
// waits the front adds to it, and how its errors are labelled.
type operation struct {
	relay     context.Context // the relay's: its end ends the connection
	ctx       context.Context // relay, ended also by the command's maxTimeMS
	cancel    context.CancelFunc
	interrupt <-chan struct{} // closed by a stepdown; nil for commands a stepdown leaves alone
	// retryable is a retryable write (txnNumber on a replica set), whose
	// errors get RetryableWriteError.
	retryable bool
	command   string
	rs        *replSet // nil on a standalone
}

// relayOperation is an operation with no maxTimeMS that no stepdown interrupts.
func relayOperation(ctx context.Context) *operation {
	return &operation{relay: ctx, ctx: ctx, cancel: func() {}}
}

// Error codes of the replica set, as mongod names them.
const (
	codeIllegalOperation              = 20
	codeNoReplicationEnabled          = 76
	codeShutdownInProgress            = 91
	codeNotAReplicaSet                = 123
	codeExceededTimeLimit             = 262
	codeNotWritablePrimary            = 10107
	codeInterruptedDueToReplState     = 11602
	codeNotPrimaryNoSecondaryOk       = 13435
	labelRetryableWriteError          = "RetryableWriteError"
	readConcernLinearizable           = "linearizable"
	readConcernMajority               = "majority"
	transactionsUnsupportedByDevStore = "the development store runs no multi-document transactions; use MongoDB for them"
)

var (
	errNoReplication = &commandError{code: codeNoReplicationEnabled,
		msg: "not running with --replSet (the development store was started with -repl-set '')"}
	// errInterrupted ends a wait that a stepdown interrupted.
	errInterrupted = errors.New("interrupted by a stepdown")
)

// ddlCommands change collections or indexes, and so, like writeCommands, need
// a primary.
var ddlCommands = map[string]bool{
	"create": true, "drop": true, "dropDatabase": true, "createIndexes": true,
	"dropIndexes": true, "renameCollection": true, "collMod": true,
}

// anyStateCommands are answered by a secondary as by a primary: mongod's
// commands with AllowedOnSecondary::kAlways that clients send.
var anyStateCommands = map[string]bool{
	"hello": true, "isMaster": true, "ismaster": true, "ping": true, "buildInfo": true,
	"buildinfo": true, "getMore": true, "killCursors": true, "getParameter": true,
	"serverStatus": true, "whatsmyuri": true, "connectionStatus": true, "saslStart": true,
	"saslContinue": true, "logout": true, "listCommands": true, "hostInfo": true, "getLog": true,
}

// admit decides how the front treats req: the operation that carries it
// through, and the error to refuse it with, if any, as mongod refuses
// (src/mongo/db/service_entry_point_common.cpp: the not-primary checks,
// transactions and read concern):
//
//   - a transaction (startTransaction or autocommit) is refused everywhere with
//     IllegalOperation: the store runs none;
//   - on a standalone, a txnNumber is refused with IllegalOperation and read
//     concern linearizable with NotAReplicaSet;
//   - on a stepped-down member, a write or a linearizable or majority read is
//     refused with NotWritablePrimary, and any other read that asks for the
//     primary with NotPrimaryNoSecondaryOk.
//
// Writes and linearizable or majority reads admitted on a primary are
// interrupted by the next stepdown while the front holds them.
func (f *front) admit(ctx context.Context, req request) (*operation, *commandError) {
	op := &operation{relay: ctx, ctx: ctx, cancel: func() {}, command: req.command, rs: f.rs}
	if req.maxTimeMS > 0 {
		op.ctx, op.cancel = context.WithTimeout(ctx, time.Duration(req.maxTimeMS)*time.Millisecond)
	}
	if req.transaction {
		return op, &commandError{code: codeIllegalOperation, msg: transactionsUnsupportedByDevStore}
	}
	if f.rs == nil {
		if req.hasTxnNumber {
			return op, &commandError{code: codeIllegalOperation,
				msg: "Transaction numbers are only allowed on a replica set member or mongos"}
		}
		if req.readConcern == readConcernLinearizable {
			return op, &commandError{code: codeNotAReplicaSet,
				msg: "node needs to be a replica set member to use read concern"}
		}
		return op, nil
	}
	op.retryable = req.hasTxnNumber && writeCommands[req.command]
	needsPrimary := writeCommands[req.command] || ddlCommands[req.command] ||
		req.readConcern == readConcernLinearizable || req.readConcern == readConcernMajority
	primary, interrupt := f.rs.admit()
	switch {
	case primary:
		if needsPrimary {
			op.interrupt = interrupt
		}
	case anyStateCommands[req.command]:
	case needsPrimary:
		return op, notPrimary(req.command)
	case req.readPreference == "" || req.readPreference == "primary":
		return op, &commandError{code: codeNotPrimaryNoSecondaryOk, msg: "not primary and secondaryOk=false"}
	}
	return op, nil
}

// await waits until ready is closed or d has passed (d < 0: no limit; d == 0
// and ready nil: no wait), or until ctx ends, or op is interrupted. It returns
// nil, errInterrupted or ctx's error.
func (f *front) await(op *operation, ctx context.Context, ready <-chan struct{}, d time.Duration) error {
	if d == 0 && ready == nil {
		return nil
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ready:
		return nil
	case <-timeout:
		return nil
	case <-op.interrupt:
		return errInterrupted
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerWaitError answers the client whose wait err ended: a stepdown with
// InterruptedDueToReplStateChange, the command's maxTimeMS with
// MaxTimeMSExpired. The end of the relay ends the connection.
func (f *front) answerWaitError(op *operation, s *session, req request, err error) error {
	switch {
	case op.relay.Err() != nil:
		return op.relay.Err()
	case errors.Is(err, errInterrupted):
		return s.answer(req, op.errorReply(&commandError{code: codeInterruptedDueToReplState,
			msg: fmt.Sprintf("operation was interrupted because a node stepped down: %s", req.command)}))
	case errors.Is(err, context.DeadlineExceeded):
		return s.answer(req, op.errorReply(&commandError{code: codeMaxTimeMSExpired,
			msg: "operation exceeded time limit"}))
	}
	return err
}

// errorReply is the reply refusing op with err, labelled as mongod labels it.
func (op *operation) errorReply(err *commandError) bsoncore.Document {
	return op.labelled(errorDocument(err, nil), false)
}

// retryableWriteCodes are the codes the Retryable Writes specification
// (source/retryable-writes, "Determining Retryable Errors") lists, which mongod
// labels RetryableWriteError on a retryable write (src/mongo/db/error_labels.cpp,
// isRetryableWriteError), in the reply's code or its writeConcernError's.
var retryableWriteCodes = map[int32]bool{
	6: true, 7: true, 89: true, 91: true, 189: true, 262: true, 9001: true, 10107: true,
	11600: true, 11602: true, 13435: true, 13436: true,
}

// labelled returns reply with the label RetryableWriteError added when op is a
// retryable write and the reply's code, or its writeConcernError's, is one of
// retryableWriteCodes. A failpoint that gave errorLabels (given), even none,
// decides the labels itself, as on mongod (errorLabelsOverride).
//
// A not-primary error also gets the member's topologyVersion, as mongod
// appends it (appendErrorLabelsAndTopologyVersion): a driver ignores such an
// error when its topologyVersion is not newer than the one it has
// (server-discovery-and-monitoring, "Error handling"), so that a failpoint's
// error does not make it think the primary is gone, while a stepdown's does.
func (op *operation) labelled(reply bsoncore.Document, given bool) bsoncore.Document {
	code, _ := reply.Lookup("code").AsInt64OK()
	wceCode, _ := reply.Lookup("writeConcernError", "code").AsInt64OK()
	_, hasLabels := reply.Lookup("errorLabels").ArrayOK()
	label := op.retryable && !given && !hasLabels &&
		(retryableWriteCodes[int32(code)] || retryableWriteCodes[int32(wceCode)])
	topology := op.rs != nil && notPrimaryCodes[int32(code)] && reply.Lookup("topologyVersion").Type == 0
	if !label && !topology {
		return reply
	}
	idx, dst := bsoncore.AppendDocumentStart(nil)
	elems, _ := reply.Elements()
	for _, e := range elems {
		dst = append(dst, e...)
	}
	if label {
		labels := bsoncore.NewArrayBuilder().AppendString(labelRetryableWriteError).Build()
		dst = bsoncore.AppendArrayElement(dst, "errorLabels", labels)
	}
	if topology {
		dst = bsoncore.AppendDocumentElement(dst, "topologyVersion", op.rs.topologyVersion())
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// notPrimaryCodes are mongod's NotPrimaryError category (src/mongo/base/error_codes.yml).
var notPrimaryCodes = map[int32]bool{
	189: true, 10107: true, 11602: true, 13435: true, 13436: true,
}
