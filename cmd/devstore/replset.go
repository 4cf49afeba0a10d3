package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// A replSet is the store as the one member of a replica set (-repl-set NAME):
// what hello says of it, whether it is primary, and the stepdowns that make it
// a secondary for a while.
//
// hello follows mongod's (src/mongo/db/repl/replication_info.cpp and
// topology_version_observer) and what the Server Discovery and Monitoring
// specification needs of it (mongodb/specifications, source/server-discovery-and-monitoring):
// setName, hosts [me], me, primary, isWritablePrimary (ismaster for isMaster),
// secondary, setVersion, electionId (new at every election) and topologyVersion
// {processId, counter}, where processId is new each time the store starts and
// counter grows at every change of state. A topologyVersion makes drivers
// monitor by awaitable hello (source/server-monitoring, "Streaming protocol"):
// a hello carrying the client's topologyVersion and maxAwaitTimeMS is answered
// when the counter moves past it or maxAwaitTimeMS has passed, as mongod does
// (src/mongo/db/repl/replication_coordinator_impl.cpp, awaitTopologyChanges). The
// answer never has moreToCome: the driver then sends its next hello itself.
//
// replSetStepDown (src/mongo/db/repl/repl_set_commands.cpp) makes the node a
// secondary for the seconds asked, with a new topologyVersion that wakes every
// awaitable hello, and closes the channel interrupt gives out, which ends the
// waits the front holds for operations that need a primary. When the seconds
// are up it is elected again: a new electionId and topologyVersion.
type replSet struct {
	name      string
	me        string        // the front's listen address, as clients reach it
	processID bson.ObjectID // topologyVersion.processId, one per process

	mu         sync.Mutex
	primary    bool
	counter    int64         // topologyVersion.counter
	electionID bson.ObjectID // the latest election's
	changed    chan struct{} // closed when counter moves
	interrupt  chan struct{} // closed at each stepdown
	election   *time.Timer   // while stepped down: the next election
	stopped    bool
}

// setVersion is the replica set configuration's version, which never changes here.
const setVersion = 1

// logicalSessionTimeout is logicalSessionTimeoutMinutes, as mongod and FerretDB say.
const logicalSessionTimeout = 30 * time.Minute

func newReplSet(name, me string) *replSet {
	return &replSet{
		name:       name,
		me:         me,
		processID:  bson.NewObjectID(),
		primary:    true,
		electionID: bson.NewObjectID(),
		changed:    make(chan struct{}),
		interrupt:  make(chan struct{}),
	}
}

// bump moves topologyVersion on and wakes the awaitable hellos. rs.mu is held.
func (rs *replSet) bump() {
	rs.counter++
	close(rs.changed)
	rs.changed = make(chan struct{})
}

// admit reports whether the node is primary now, and returns the channel that
// the next stepdown closes, both at the same instant.
func (rs *replSet) admit() (primary bool, interrupt <-chan struct{}) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.primary, rs.interrupt
}

// stepDown makes the node a secondary for d, then primary again.
func (rs *replSet) stepDown(d time.Duration) *commandError {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.primary {
		return &commandError{code: codeNotWritablePrimary, msg: "not primary so can't step down"}
	}
	if rs.stopped {
		return &commandError{code: codeShutdownInProgress, msg: "the development store is shutting down"}
	}
	rs.primary = false
	close(rs.interrupt)
	rs.interrupt = make(chan struct{})
	rs.bump()
	rs.election = time.AfterFunc(d, rs.elect)
	return nil
}

// elect makes the node primary again, as its own election would.
func (rs *replSet) elect() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.stopped || rs.primary {
		return
	}
	rs.primary = true
	rs.electionID = bson.NewObjectID()
	rs.election = nil
	rs.bump()
}

// stop cancels a pending election, as the store stops.
func (rs *replSet) stop() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.stopped = true
	if rs.election != nil {
		rs.election.Stop()
	}
}

// awaitHello waits as mongod does before answering an awaitable hello: while
// the client's topologyVersion is the current one, until maxAwaitTimeMS or ctx
// ends. A hello without both fields, or with another process's topologyVersion
// or an older counter, is answered at once.
func (rs *replSet) awaitHello(ctx context.Context, cmd bsoncore.Document) error {
	tv, ok := cmd.Lookup("topologyVersion").DocumentOK()
	if !ok {
		return nil
	}
	ms, ok := cmd.Lookup("maxAwaitTimeMS").AsInt64OK()
	if !ok || ms <= 0 {
		return nil
	}
	pid, _ := tv.Lookup("processId").ObjectIDOK()
	counter, _ := tv.Lookup("counter").AsInt64OK()
	rs.mu.Lock()
	current, changed := rs.counter, rs.changed
	rs.mu.Unlock()
	if pid != rs.processID || counter != current {
		return nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// editHello returns FerretDB's hello reply as this member's: the fields of
// the replica set replace FerretDB's, and the rest (wire versions, sizes,
// logicalSessionTimeoutMinutes, connectionId) stays. command is the request's
// command name: isMaster answers ismaster, hello answers isWritablePrimary.
func (rs *replSet) editHello(reply bsoncore.Document, command string) bsoncore.Document {
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		return reply
	}
	rs.mu.Lock()
	primary, counter, electionID := rs.primary, rs.counter, rs.electionID
	rs.mu.Unlock()

	mine := map[string]bool{"isWritablePrimary": true, "ismaster": true, "secondary": true,
		"setName": true, "setVersion": true, "hosts": true, "primary": true, "me": true,
		"electionId": true, "topologyVersion": true, "ok": true}
	idx, dst := bsoncore.AppendDocumentStart(nil)
	if command == "hello" {
		dst = bsoncore.AppendBooleanElement(dst, "isWritablePrimary", primary)
	} else {
		dst = bsoncore.AppendBooleanElement(dst, "ismaster", primary)
	}
	dst = bsoncore.AppendBooleanElement(dst, "secondary", !primary)
	dst = bsoncore.AppendStringElement(dst, "setName", rs.name)
	dst = bsoncore.AppendInt32Element(dst, "setVersion", setVersion)
	hosts := bsoncore.NewArrayBuilder().AppendString(rs.me).Build()
	dst = bsoncore.AppendArrayElement(dst, "hosts", hosts)
	if primary {
		dst = bsoncore.AppendStringElement(dst, "primary", rs.me)
		dst = bsoncore.AppendObjectIDElement(dst, "electionId", electionID)
	}
	dst = bsoncore.AppendStringElement(dst, "me", rs.me)
	dst = bsoncore.AppendDocumentElement(dst, "topologyVersion", rs.topologyVersionOf(counter))
	elems, _ := reply.Elements()
	for _, e := range elems {
		if !mine[e.Key()] {
			dst = append(dst, e...)
		}
	}
	dst = bsoncore.AppendDoubleElement(dst, "ok", 1)
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// topologyVersion is {processId, counter} now.
func (rs *replSet) topologyVersion() bsoncore.Document {
	rs.mu.Lock()
	counter := rs.counter
	rs.mu.Unlock()
	return rs.topologyVersionOf(counter)
}

func (rs *replSet) topologyVersionOf(counter int64) bsoncore.Document {
	return bsoncore.NewDocumentBuilder().
		AppendObjectID("processId", rs.processID).
		AppendInt64("counter", counter).
		Build()
}

// status answers replSetGetStatus, with the fields drivers and tools read.
func (rs *replSet) status() bsoncore.Document {
	rs.mu.Lock()
	primary := rs.primary
	rs.mu.Unlock()
	state, stateStr := int32(1), "PRIMARY"
	if !primary {
		state, stateStr = 2, "SECONDARY"
	}
	member := bsoncore.NewDocumentBuilder().
		AppendInt32("_id", 0).
		AppendString("name", rs.me).
		AppendDouble("health", 1).
		AppendInt32("state", state).
		AppendString("stateStr", stateStr).
		AppendBoolean("self", true).
		Build()
	return okDocument(
		bsoncore.AppendStringElement(nil, "set", rs.name),
		bsoncore.AppendInt32Element(nil, "myState", state),
		bsoncore.AppendArrayElement(nil, "members", bsoncore.NewArrayBuilder().AppendDocument(member).Build()),
	)
}

// stepDownCommand answers {replSetStepDown: secs, force: true} on admin. Without
// force, mongod waits for a secondary to catch up, and a one-node set has none.
func (rs *replSet) stepDownCommand(req request) bsoncore.Document {
	if req.db != "admin" {
		return errorDocument(&commandError{code: codeUnauthorized,
			msg: "replSetStepDown may only be run against the admin database."}, nil)
	}
	secs, ok := req.body.Index(0).Value().AsFloat64OK()
	if !ok || secs <= 0 {
		return errorDocument(badValue("replSetStepDown needs a positive number of seconds"), nil)
	}
	if force, _ := req.body.Lookup("force").BooleanOK(); !force {
		return errorDocument(&commandError{code: codeExceededTimeLimit,
			msg: "No electable secondaries caught up: the development store is a one-node replica set; use force: true"}, nil)
	}
	if err := rs.stepDown(time.Duration(secs * float64(time.Second))); err != nil {
		return errorDocument(err, nil)
	}
	return okDocument()
}

// editReply returns msg, an OP_MSG or OP_REPLY with one document, with that
// document changed by edit. Other messages are returned as they are.
func editReply(msg []byte, edit func(bsoncore.Document) bsoncore.Document) []byte {
	_, _, respTo, opcode, rem, ok := wiremessage.ReadHeader(msg)
	if !ok {
		return msg
	}
	switch opcode {
	case wiremessage.OpMsg:
		if body, ok := msgBody(msg); ok {
			return appendMsg(nil, respTo, edit(body))
		}
	case wiremessage.OpReply:
		flags, rem, ok := wiremessage.ReadReplyFlags(rem)
		if !ok {
			return msg
		}
		cursorID, rem, ok := wiremessage.ReadReplyCursorID(rem)
		if !ok {
			return msg
		}
		from, rem, ok := wiremessage.ReadReplyStartingFrom(rem)
		if !ok {
			return msg
		}
		if n, rem, ok := wiremessage.ReadReplyNumberReturned(rem); ok && n == 1 {
			if doc, _, ok := wiremessage.ReadReplyDocument(rem); ok {
				idx, dst := wiremessage.AppendHeaderStart(nil, wiremessage.NextRequestID(), respTo, wiremessage.OpReply)
				dst = wiremessage.AppendReplyFlags(dst, flags)
				dst = wiremessage.AppendReplyCursorID(dst, cursorID)
				dst = wiremessage.AppendReplyStartingFrom(dst, from)
				dst = wiremessage.AppendReplyNumberReturned(dst, 1)
				dst = append(dst, edit(doc)...)
				return bsoncore.UpdateLength(dst, idx, int32(len(dst[idx:])))
			}
		}
	}
	return msg
}

// notPrimary is the error a secondary gives a command that needs a primary.
func notPrimary(command string) *commandError {
	return &commandError{code: codeNotWritablePrimary, msg: fmt.Sprintf("not primary: %s needs the primary", command)}
}
