package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// failCommand is mongod's "failCommand" failpoint, as configured by
//
//	db.adminCommand({configureFailPoint: "failCommand", mode: …, data: {…}})
//
// It follows mongod (src/mongo/db/commands.cpp, evaluateFailCommandFailPoint):
// a command activates the failpoint when its name, or one of its aliases
// (findandmodify, isMaster), is in data.failCommands (or data.failAllCommands is
// set), data.appName (if given) is the application name of the client's handshake,
// and data.namespace (if given) is the command's namespace; configureFailPoint
// itself never does. Each activation first waits blockTimeMS (blockConnection),
// then closes the connection (closeConnection) or answers errorCode without
// running the command; with neither, the command runs, and a write command's reply
// gets data.writeConcernError. The failpoint sees the commands of OP_MSG, which is
// every command a driver sends once its connection is open; the OP_QUERY hello
// that opens a connection is never failed.
//
// The mode decides which activations fire: "alwaysOn", "off", {times: n} (the
// next n, then off) or {skip: n} (all but the next n). Like mongod's, its count
// of activations survives reconfiguration, and configureFailPoint answers the
// count before it; waitForFailPoint waits for the count to reach a number.
type failCommand struct {
	mu      sync.Mutex
	data    *failData // nil while off
	times   int64     // with data: activations left before off; < 0 for no limit
	skip    int64     // with data: activations to let pass first
	entered int64     // activations that fired, ever
	changed chan struct{}
}

// failData is a failpoint's data document, parsed.
type failData struct {
	commands          []string
	all               bool
	appName           *string // nil: any client; "" matches clients that named none
	namespace         *string
	errorCode         int32
	hasErrorCode      bool
	errorLabels       bsoncore.Array // nil: none given, or an empty array
	labelsGiven       bool           // errorLabels given, even empty: the only labels
	closeConnection   bool
	blockTime         time.Duration // > 0: blockConnection with blockTimeMS
	writeConcernError bsoncore.Document
}

// An activation is what the failpoint does to one command.
type activation struct {
	block             time.Duration
	closeConnection   bool
	errorCode         int32
	hasErrorCode      bool
	errorLabels       bsoncore.Array
	labelsGiven       bool
	writeConcernError bsoncore.Document
}

func newFailCommand() *failCommand {
	return &failCommand{changed: make(chan struct{})}
}

// A commandError is a command the store refuses, with mongod's code for it.
type commandError struct {
	code int32
	msg  string
}

func (e *commandError) Error() string { return e.msg }

func badValue(format string, args ...any) *commandError {
	return &commandError{code: codeBadValue, msg: fmt.Sprintf(format, args...)}
}

// Error codes the store answers with, as mongod names them.
const (
	codeBadValue         = 2
	codeUnauthorized     = 13
	codeMaxTimeMSExpired = 50
)

// configure applies a configureFailPoint command and returns the count of
// activations before it.
func (f *failCommand) configure(cmd bsoncore.Document) (int64, *commandError) {
	name, _ := cmd.Lookup("configureFailPoint").StringValueOK()
	if name != "failCommand" {
		return 0, badValue("the development store has no failpoint %q, only failCommand", name)
	}
	mode, lookupErr := cmd.LookupErr("mode")
	if lookupErr != nil {
		return 0, badValue("configureFailPoint needs a mode")
	}
	times, skip, on, err := parseMode(mode)
	if err != nil {
		return 0, err
	}
	var data *failData
	if on {
		d, _ := cmd.Lookup("data").DocumentOK()
		if data, err = parseFailData(d); err != nil {
			return 0, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data, f.times, f.skip = data, times, skip
	return f.entered, nil
}

// parseMode reads "alwaysOn", "off", {times: n} or {skip: n}.
func parseMode(v bsoncore.Value) (times, skip int64, on bool, err *commandError) {
	if s, ok := v.StringValueOK(); ok {
		switch s {
		case "alwaysOn":
			return -1, 0, true, nil
		case "off":
			return 0, 0, false, nil
		}
		return 0, 0, false, badValue("unknown failpoint mode %q", s)
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return 0, 0, false, badValue("a failpoint mode is a string or a document")
	}
	if n, ok := doc.Lookup("times").AsInt64OK(); ok {
		if n < 0 {
			return 0, 0, false, badValue("times must be non-negative")
		}
		return n, 0, n > 0, nil
	}
	if n, ok := doc.Lookup("skip").AsInt64OK(); ok {
		if n < 0 {
			return 0, 0, false, badValue("skip must be non-negative")
		}
		return -1, n, true, nil
	}
	return 0, 0, false, badValue("the development store takes the modes alwaysOn, off, {times: n} and {skip: n}")
}

func parseFailData(d bsoncore.Document) (*failData, *commandError) {
	fd := &failData{}
	if arr, ok := d.Lookup("failCommands").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, v := range vals {
			if s, ok := v.StringValueOK(); ok {
				fd.commands = append(fd.commands, canonicalCommand(s))
			}
		}
	}
	fd.all = d.Lookup("failAllCommands").Type != 0
	if v, ok := d.Lookup("appName").StringValueOK(); ok {
		fd.appName = &v
	}
	if v, ok := d.Lookup("namespace").StringValueOK(); ok {
		fd.namespace = &v
	}
	if v, err := d.LookupErr("errorCode"); err == nil {
		n, ok := v.AsInt64OK()
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, badValue("errorCode must be a 32-bit integer")
		}
		fd.errorCode, fd.hasErrorCode = int32(n), true
	}
	if arr, ok := d.Lookup("errorLabels").ArrayOK(); ok {
		fd.labelsGiven = true
		if vals, _ := arr.Values(); len(vals) > 0 { // mongod adds no empty errorLabels
			fd.errorLabels = slices.Clone(arr) // arr is in the request's buffer, which is reused
		}
	}
	fd.closeConnection, _ = d.Lookup("closeConnection").BooleanOK()
	if block, _ := d.Lookup("blockConnection").BooleanOK(); block {
		ms, ok := d.Lookup("blockTimeMS").AsInt64OK()
		if !ok {
			return nil, badValue("must specify 'blockTimeMS' when 'blockConnection' is true")
		}
		if ms < 0 {
			return nil, badValue("'blockTimeMS' must be non-negative")
		}
		fd.blockTime = time.Duration(ms) * time.Millisecond
	}
	if wce, ok := d.Lookup("writeConcernError").DocumentOK(); ok {
		fd.writeConcernError = slices.Clone(wce)
	}
	return fd, nil
}

// activate decides whether the command name on namespace ns, from a client whose
// handshake named appName, activates the failpoint, and counts it if so. write
// says whether the command takes a write concern: only those get a
// writeConcernError, as on mongod.
func (f *failCommand) activate(name, ns, appName string, write bool) *activation {
	if name == "configureFailPoint" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.data
	if d == nil || !d.matches(canonicalCommand(name), ns, appName) {
		return nil
	}
	wce := d.writeConcernError
	if !write {
		wce = nil
	}
	if d.blockTime == 0 && !d.closeConnection && !d.hasErrorCode && wce == nil {
		return nil // nothing to do: mongod does not count it either
	}
	if f.skip > 0 {
		f.skip--
		return nil
	}
	if f.times > 0 {
		f.times--
		if f.times == 0 {
			f.data = nil
		}
	}
	f.entered++
	close(f.changed)
	f.changed = make(chan struct{})
	return &activation{
		block:             d.blockTime,
		closeConnection:   d.closeConnection,
		errorCode:         d.errorCode,
		hasErrorCode:      d.hasErrorCode,
		errorLabels:       d.errorLabels,
		labelsGiven:       d.labelsGiven,
		writeConcernError: wce,
	}
}

func (d *failData) matches(name, ns, appName string) bool {
	if d.appName != nil && *d.appName != appName {
		return false
	}
	if d.namespace != nil && *d.namespace != ns {
		return false
	}
	return d.all || slices.Contains(d.commands, name)
}

// canonicalCommand is the name mongod knows a command by: failCommands naming an
// alias matches the command under any of its names, as mongod's hasAlias does.
func canonicalCommand(name string) string {
	switch name {
	case "findandmodify":
		return "findAndModify"
	case "isMaster", "ismaster":
		return "hello"
	}
	return name
}

// waitFor blocks until the failpoint has fired at least n times in all, or ctx ends.
func (f *failCommand) waitFor(ctx context.Context, n int64) *commandError {
	for {
		f.mu.Lock()
		entered, changed := f.entered, f.changed
		f.mu.Unlock()
		if entered >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return &commandError{code: codeMaxTimeMSExpired,
				msg: fmt.Sprintf("failCommand entered %d times, waited for %d", entered, n)}
		}
	}
}

// errorReply is the reply mongod gives a command that the failpoint fails.
func (a *activation) errorReply() bsoncore.Document {
	return errorDocument(&commandError{code: a.errorCode, msg: "Failing command via 'failCommand' failpoint"}, a.errorLabels)
}

// errorDocument is a command's reply for err: {ok: 0, errmsg, code[, codeName][, errorLabels]}.
func errorDocument(err *commandError, labels bsoncore.Array) bsoncore.Document {
	elems := [][]byte{
		bsoncore.AppendDoubleElement(nil, "ok", 0),
		bsoncore.AppendStringElement(nil, "errmsg", err.msg),
		bsoncore.AppendInt32Element(nil, "code", err.code),
	}
	if name, ok := codeNames[err.code]; ok {
		elems = append(elems, bsoncore.AppendStringElement(nil, "codeName", name))
	}
	if labels != nil {
		elems = append(elems, bsoncore.AppendArrayElement(nil, "errorLabels", labels))
	}
	return bsoncore.BuildDocument(nil, elems...)
}

// codeNames names the codes that seqd's tests and MongoDB's driver tests fail
// commands with; mongod names every code, drivers need only the number.
var codeNames = map[int32]string{
	codeBadValue:         "BadValue",
	6:                    "HostUnreachable",
	7:                    "HostNotFound",
	codeUnauthorized:     "Unauthorized",
	codeMaxTimeMSExpired: "MaxTimeMSExpired",
	59:                   "CommandNotFound",
	64:                   "WriteConcernFailed",
	89:                   "NetworkTimeout",
	91:                   "ShutdownInProgress",
	100:                  "UnsatisfiableWriteConcern",
	189:                  "PrimarySteppedDown",
	262:                  "ExceededTimeLimit",
	9001:                 "SocketException",
	10107:                "NotWritablePrimary",
	11000:                "DuplicateKey",
	11600:                "InterruptedAtShutdown",
	11602:                "InterruptedDueToReplStateChange",
	13435:                "NotPrimaryNoSecondaryOk",
	13436:                "NotPrimaryOrSecondary",
}

// withWriteConcernError returns reply with the failpoint's writeConcernError (and
// errorLabels, if given) added, as mongod adds them after the command has run.
func (a *activation) withWriteConcernError(reply bsoncore.Document) bsoncore.Document {
	idx, dst := bsoncore.AppendDocumentStart(nil)
	elems, _ := reply.Elements()
	for _, e := range elems {
		if k := e.Key(); k == "writeConcernError" || k == "errorLabels" && a.errorLabels != nil {
			continue
		}
		dst = append(dst, e...)
	}
	dst = bsoncore.AppendDocumentElement(dst, "writeConcernError", a.writeConcernError)
	if a.errorLabels != nil {
		dst = bsoncore.AppendArrayElement(dst, "errorLabels", a.errorLabels)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// okDocument is {ok: 1} after the given elements.
func okDocument(elems ...[]byte) bsoncore.Document {
	return bsoncore.BuildDocument(nil, append(elems, bsoncore.AppendDoubleElement(nil, "ok", 1))...)
}
