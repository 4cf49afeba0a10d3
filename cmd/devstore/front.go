package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// The front is the store's public face: it accepts MongoDB clients and relays each
// connection to a connection of its own to FerretDB, message by message. It reads
// every request with the driver's wiremessage and bsoncore packages; what it
// changes is described in the package comment.
//
// A client costs the front what it has sent, not what it says it will send: a
// message's buffer grows as its bytes arrive, and FerretDB is dialed at the
// first whole message. The timeouts and the cap bound how long and how many.
type front struct {
	dial    func(context.Context) (net.Conn, error) // a new connection to FerretDB
	log     *slog.Logger
	fail    *failCommand
	writes  chan struct{} // holds a token while a write command is at FerretDB
	rs      *replSet      // nil for a standalone store (-repl-set '')
	retries *retryTable   // retryable writes, on a replica set

	// syncAfter makes what a write command (writeCommands, durableCommands)
	// wrote durable (logSync.syncAfter), before its reply goes to the client;
	// nil syncs nothing.
	syncAfter func(command, db string) error

	readTimeout time.Duration // for a message's bytes, from its first to its last
	idleTimeout time.Duration // for a message's first byte, from the last reply
	maxConns    int           // client connections at once; more are closed at accept
	// replyDelay holds each of FerretDB's replies this long before it goes to
	// the client, with no write token held: a store at a distance (-reply-delay).
	replyDelay time.Duration
}

// The front's limits, as newFront sets them.
const (
	// defaultReadTimeout is long enough for the largest message (48 MB) over
	// any link a development store is used on.
	defaultReadTimeout = 30 * time.Second
	// defaultIdleTimeout is far longer than the gaps between a working client's
	// commands. Drivers keep pooled connections with no limit unless told
	// (maxIdleTimeMS): the first command on one the front has closed fails
	// with a network error.
	defaultIdleTimeout = 10 * time.Minute
	// defaultMaxConns is far more than tests and a few seqd processes open (a
	// Go driver client pools up to 100), and bounds the FerretDB connections
	// and goroutines the front holds.
	defaultMaxConns = 1024
)

func newFront(dial func(context.Context) (net.Conn, error), log *slog.Logger) *front {
	return &front{
		dial:        dial,
		log:         log,
		fail:        newFailCommand(),
		retries:     newRetryTable(),
		writes:      make(chan struct{}, 1),
		readTimeout: defaultReadTimeout,
		idleTimeout: defaultIdleTimeout,
		maxConns:    defaultMaxConns,
	}
}

// writeCommands are the commands that run one at a time. Each changes documents,
// and FerretDB runs each as a read followed by a write with nothing between them
// to stop another client's write.
var writeCommands = map[string]bool{
	"insert":        true,
	"update":        true,
	"delete":        true,
	"findAndModify": true,
	"findandmodify": true, // mongod's alias, as the legacy shell sends it
}

// maxMessageSize is mongod's maxMessageSizeBytes; FerretDB announces the same.
const maxMessageSize = 48_000_000

// maxKeptBuffer is the largest message buffer a connection keeps between messages.
const maxKeptBuffer = 1 << 20

// minMessageBuffer is the first size of a message buffer, which then doubles as
// the message's bytes arrive.
const minMessageBuffer = 4 << 10

// serve accepts connections on l until ctx ends, then closes l and every
// connection and returns once their relays have finished. An accept error that
// is not the shutdown (too many open files, say) is retried after a pause, as
// net/http does, rather than ending the store. A connection past f.maxConns is
// closed at once, as mongod closes one past maxIncomingConnections: the client
// sees a network error rather than a wait with no end it can know.
func (f *front) serve(ctx context.Context, l net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before wg.Wait: it ends the relays
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	slots := make(chan struct{}, f.maxConns) // a token for each connection served
	pause := 5 * time.Millisecond
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("accept: %w", err)
			}
			f.log.Warn("accept failed; retrying", "err", err, "after", pause)
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 5 * time.Millisecond
		select {
		case slots <- struct{}{}:
		default:
			f.log.Warn("too many client connections; closing a new one",
				"remote", c.RemoteAddr(), "max", f.maxConns)
			c.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			f.relay(ctx, c)
		})
	}
}

// A session is one client connection and its connection to FerretDB.
type session struct {
	client      net.Conn
	in          *bufio.Reader // from client
	backend     net.Conn      // nil until the client's first whole message
	out         *bufio.Reader // from backend
	stopBackend func() bool   // stops the closing of backend when the relay's ctx ends
	appName     string        // from the client's handshake
	buf         []byte        // the request being handled
	reply       []byte        // the reply being relayed
}

// relay serves one client connection until either side closes it, the client
// is idle or slow past the front's timeouts, or ctx ends.
func (f *front) relay(ctx context.Context, client net.Conn) {
	defer client.Close()
	stop := context.AfterFunc(ctx, func() { client.Close() })
	defer stop()

	s := &session{client: client, in: bufio.NewReader(client)}
	defer s.closeBackend()
	for {
		if err := f.readRequest(s); err != nil {
			switch {
			case ctx.Err() != nil, errors.Is(err, io.EOF): // the store or the client is done
			case errors.Is(err, errIdle):
				f.log.Debug("closing an idle client connection", "remote", client.RemoteAddr(), "after", f.idleTimeout)
			case errors.Is(err, os.ErrDeadlineExceeded):
				f.log.Warn("closing a client connection whose message did not arrive in time",
					"remote", client.RemoteAddr(), "timeout", f.readTimeout)
			default:
				f.log.Debug("client connection ends", "remote", client.RemoteAddr(), "err", err)
			}
			return
		}
		if s.backend == nil {
			if err := f.connectBackend(ctx, s); err != nil {
				f.log.Warn("cannot reach FerretDB", "err", err)
				return
			}
		}
		if err := f.handle(ctx, s); err != nil {
			if ctx.Err() == nil {
				f.log.Debug("client connection ends", "remote", client.RemoteAddr(), "err", err)
			}
			return
		}
		// One large message must not pin its buffer for the connection's life.
		if cap(s.buf) > maxKeptBuffer {
			s.buf = nil
		}
		if cap(s.reply) > maxKeptBuffer {
			s.reply = nil
		}
	}
}

// errIdle is a client connection on which no message began within the idle timeout.
var errIdle = errors.New("no message within the idle timeout")

// readRequest reads the client's next message into s.buf. Its first byte must
// come within f.idleTimeout, and the rest within f.readTimeout of it. The time
// the front takes to answer counts for neither: deadlines are set only here.
func (f *front) readRequest(s *session) error {
	if err := s.client.SetReadDeadline(time.Now().Add(f.idleTimeout)); err != nil {
		return err
	}
	if _, err := s.in.Peek(1); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errIdle
		}
		return err
	}
	if err := s.client.SetReadDeadline(time.Now().Add(f.readTimeout)); err != nil {
		return err
	}
	var err error
	s.buf, err = readMessage(s.in, s.buf)
	return err
}

// connectBackend dials FerretDB for s, to be closed by s.closeBackend or when
// ctx ends.
func (f *front) connectBackend(ctx context.Context, s *session) error {
	backend, err := f.dial(ctx)
	if err != nil {
		return err
	}
	s.backend, s.out = backend, bufio.NewReader(backend)
	s.stopBackend = context.AfterFunc(ctx, func() { backend.Close() })
	return nil
}

func (s *session) closeBackend() {
	if s.backend != nil {
		s.stopBackend()
		s.backend.Close()
	}
}

// errCloseConnection is a failpoint's order to close the client's connection.
var errCloseConnection = errors.New("closed by the failCommand failpoint")

// handle answers the request in s.buf. An error ends the connection.
func (f *front) handle(ctx context.Context, s *session) error {
	req, ok := parseRequest(s.buf)
	if !ok {
		return fmt.Errorf("malformed %s message", req.opcode)
	}
	if req.handshake != nil {
		if name, ok := req.handshake.Lookup("client", "application", "name").StringValueOK(); ok {
			s.appName = name
		}
	}
	if req.opcode != wiremessage.OpMsg {
		if req.handshake != nil && f.rs != nil {
			return f.forwardThen(relayOperation(ctx), s, req, f.helloEdit(req), nil)
		}
		return f.forward(ctx, s, req)
	}
	switch req.command {
	case "configureFailPoint":
		if req.db != "admin" {
			return s.answer(req, errorDocument(&commandError{code: codeUnauthorized,
				msg: "configureFailPoint may only be run against the admin database."}, nil))
		}
		count, err := f.fail.configure(req.body)
		if err != nil {
			return s.answer(req, errorDocument(err, nil))
		}
		return s.answer(req, okDocument(bsoncore.AppendInt64Element(nil, "count", count)))
	case "waitForFailPoint":
		return s.answer(req, f.waitForFailPoint(ctx, req.body))
	case "endSessions":
		// FerretDB keeps no server sessions, so there is nothing to end; drivers send
		// this as they disconnect, and an error would only be logged.
		return s.answer(req, okDocument())
	case "replSetStepDown":
		if f.rs == nil {
			return s.answer(req, errorDocument(errNoReplication, nil))
		}
		return s.answer(req, f.rs.stepDownCommand(req))
	case "replSetGetStatus":
		if f.rs == nil {
			return s.answer(req, errorDocument(errNoReplication, nil))
		}
		return s.answer(req, f.rs.status())
	}

	op, refusal := f.admit(ctx, req)
	defer op.cancel()
	if refusal != nil {
		return s.answer(req, op.errorReply(refusal))
	}
	act := f.fail.activate(req.command, req.namespace(), s.appName, writeCommands[req.command])
	var edit func(bsoncore.Document) bsoncore.Document
	if act != nil {
		if err := f.await(op, op.relay, nil, act.block); err != nil {
			return f.answerWaitError(op, s, req, err)
		}
		switch {
		case act.closeConnection:
			return errCloseConnection
		case act.hasErrorCode:
			return s.answer(req, op.labelled(act.errorReply(), act.labelsGiven))
		case act.writeConcernError != nil:
			edit = func(body bsoncore.Document) bsoncore.Document {
				return op.labelled(act.withWriteConcernError(body), act.labelsGiven)
			}
		}
	}
	if edit == nil {
		edit = func(body bsoncore.Document) bsoncore.Document { return op.labelled(body, false) }
	}
	switch {
	case req.handshake != nil && f.rs != nil:
		gone, stopWatch := s.watchClient()
		err := f.rs.awaitHello(ctx, req.body, gone)
		stopWatch()
		if err != nil {
			return err
		}
		return f.forwardThen(op, s, req, f.helloEdit(req), nil)
	case op.retryable:
		return f.retryableWrite(op, s, req, edit)
	}
	return f.forwardThen(op, s, req, edit, nil)
}

// helloEdit makes FerretDB's answer to a hello the replica set member's.
func (f *front) helloEdit(req request) func(bsoncore.Document) bsoncore.Document {
	command := "hello"
	if elem, err := req.handshake.IndexErr(0); err == nil && elem.Key() != "hello" {
		command = "isMaster"
	}
	return func(body bsoncore.Document) bsoncore.Document { return f.rs.editHello(body, command) }
}

// retryableWrite runs a write that carries lsid and txnNumber at most once, as
// retryTable describes, answering a retry from the record of the first execution.
func (f *front) retryableWrite(op *operation, s *session, req request, edit func(bsoncore.Document) bsoncore.Document) error {
	for {
		step := f.retries.begin(req.lsid, req.txnNumber)
		switch {
		case step.err != nil:
			return s.answer(req, op.errorReply(step.err))
		case step.reply != nil:
			return s.answer(req, edit(step.reply))
		case step.wait != nil:
			if err := f.await(op, op.ctx, step.wait, -1); err != nil {
				return f.answerWaitError(op, s, req, err)
			}
			continue
		}
		finished := false
		record := func(reply bsoncore.Document) {
			f.retries.finish(req.lsid, step.run, reply)
			finished = true
		}
		err := f.forwardThen(op, s, req, edit, record)
		if !finished {
			f.retries.finish(req.lsid, step.run, nil)
		}
		return err
	}
}

// waitForFailPoint answers {waitForFailPoint: "failCommand", timesEntered: n, maxTimeMS: m}.
func (f *front) waitForFailPoint(ctx context.Context, cmd bsoncore.Document) bsoncore.Document {
	if name, _ := cmd.Lookup("waitForFailPoint").StringValueOK(); name != "failCommand" {
		return errorDocument(badValue("the development store has no failpoint %q, only failCommand", name), nil)
	}
	n, ok := cmd.Lookup("timesEntered").AsInt64OK()
	if !ok {
		return errorDocument(badValue("waitForFailPoint needs timesEntered"), nil)
	}
	ms, ok := cmd.Lookup("maxTimeMS").AsInt64OK()
	if !ok || ms <= 0 {
		return errorDocument(badValue("waitForFailPoint needs a positive maxTimeMS"), nil)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	defer cancel()
	if err := f.fail.waitFor(ctx, n); err != nil {
		return errorDocument(err, nil)
	}
	return okDocument()
}

// forward sends the request to FerretDB and relays its replies to the client.
func (f *front) forward(ctx context.Context, s *session, req request) error {
	return f.forwardThen(relayOperation(ctx), s, req, nil, nil)
}

// forwardThen is forward with the final reply's body changed by edit, if edit is
// not nil, and FerretDB's final reply given to record first, if record is not
// nil. A write command holds f.writes from sending to its last reply from
// FerretDB, so that write commands reach FerretDB one at a time, and so does a
// command that changes collections or indexes (ddlCommands): it holds
// FerretDB's catalog of collections while it waits for SQLite's write lock,
// and an update command holds that lock for all its statements while each
// reads the catalog, so the two waited for each other until SQLite gave up
// (10 s, "database is locked"; TestDDLBesideUpdates). The token is
// given back before the reply goes to the client, so that a client that does not
// read cannot hold up the other writers. The waits for the token and for the
// reply delay end with op's maxTimeMS or a stepdown that interrupts op: the
// client is then answered with the error.
func (f *front) forwardThen(op *operation, s *session, req request, edit func(bsoncore.Document) bsoncore.Document, record func(bsoncore.Document)) error {
	release := func() {}
	if writeCommands[req.command] || ddlCommands[req.command] {
		select {
		case f.writes <- struct{}{}:
			var once sync.Once
			release = func() { once.Do(func() { <-f.writes }) }
			defer release()
		case <-op.interrupt:
			return f.answerWaitError(op, s, req, errInterrupted)
		case <-op.ctx.Done():
			return f.answerWaitError(op, s, req, op.ctx.Err())
		}
	}
	if _, err := s.backend.Write(s.buf); err != nil {
		return fmt.Errorf("to FerretDB: %w", err)
	}
	for {
		var err error
		if s.reply, err = readMessage(s.out, s.reply); err != nil {
			return fmt.Errorf("from FerretDB: %w", err)
		}
		more := wiremessage.IsMsgMoreToCome(s.reply) // an exhaust stream goes on
		if !more {
			// Before the token goes back: one sync for all the command's
			// statements, and none while another write is at FerretDB.
			var syncErr error
			if f.syncAfter != nil && (writeCommands[req.command] || durableCommands[req.command]) {
				syncErr = f.syncAfter(req.command, req.db)
			}
			release()
			// A retryable write is recorded even if its sync failed: it ran,
			// and a retry must get this reply, not run it again.
			if record != nil {
				if body, ok := msgBody(s.reply); ok {
					record(body)
				}
			}
			if syncErr != nil {
				// The client does not know whether the write took effect, as
				// after any network error.
				f.log.Error("cannot make a write durable; closing its connection", "command", req.command, "db", req.db, "err", syncErr)
				return fmt.Errorf("syncing after %s: %w", req.command, syncErr)
			}
		}
		if req.moreToCome {
			// The client asked for no reply (w: 0), but FerretDB answers every
			// OP_MSG: the answer is dropped here, or it would answer the client's
			// next request.
			if !more {
				return nil
			}
			continue
		}
		if edit != nil && !more {
			s.reply = editReply(s.reply, edit)
		}
		if err := f.await(op, op.relay, nil, f.replyDelay); err != nil {
			return f.answerWaitError(op, s, req, err)
		}
		if _, err := s.client.Write(s.reply); err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answer replies to req with body, without asking FerretDB.
func (s *session) answer(req request, body bsoncore.Document) error {
	if req.moreToCome {
		return nil
	}
	s.reply = appendMsg(s.reply[:0], req.requestID, body)
	_, err := s.client.Write(s.reply)
	return err
}

// A request is what the front reads of a client's message.
type request struct {
	opcode     wiremessage.OpCode
	requestID  int32
	moreToCome bool              // OP_MSG: no reply expected
	command    string            // OP_MSG: the first key of the body
	db         string            // OP_MSG: $db
	body       bsoncore.Document // OP_MSG: the section-0 document
	handshake  bsoncore.Document // hello or isMaster, by OP_MSG or OP_QUERY

	// OP_MSG: what the replica set looks at.
	lsid           string // the lsid document's bytes, if any
	txnNumber      int64
	hasTxnNumber   bool
	transaction    bool   // startTransaction or autocommit given
	readConcern    string // readConcern.level
	readPreference string // $readPreference.mode
	maxTimeMS      int64
}

// namespace is "db.collection" for commands whose first value names a collection.
func (r request) namespace() string {
	coll, _ := r.body.Index(0).Value().StringValueOK()
	return r.db + "." + coll
}

// parseRequest reads a client message. Opcodes other than OP_MSG and OP_QUERY are
// relayed unread.
func parseRequest(msg []byte) (request, bool) {
	var req request
	_, reqID, _, opcode, rem, ok := wiremessage.ReadHeader(msg)
	if !ok {
		return req, false
	}
	req.opcode, req.requestID = opcode, reqID
	switch opcode {
	case wiremessage.OpMsg:
		flags, rem, ok := wiremessage.ReadMsgFlags(rem)
		if !ok {
			return req, false
		}
		req.moreToCome = flags&wiremessage.MoreToCome != 0
		if flags&wiremessage.ChecksumPresent != 0 {
			if len(rem) < 4 {
				return req, false
			}
			rem = rem[:len(rem)-4]
		}
		for len(rem) > 0 {
			var stype wiremessage.SectionType
			if stype, rem, ok = wiremessage.ReadMsgSectionType(rem); !ok {
				return req, false
			}
			switch stype {
			case wiremessage.SingleDocument:
				if req.body, rem, ok = wiremessage.ReadMsgSectionSingleDocument(rem); !ok {
					return req, false
				}
			case wiremessage.DocumentSequence:
				if _, _, rem, ok = wiremessage.ReadMsgSectionRawDocumentSequence(rem); !ok {
					return req, false
				}
			default:
				return req, false
			}
		}
		if req.body == nil || req.body.Validate() != nil {
			return req, false
		}
		elem, err := req.body.IndexErr(0)
		if err != nil {
			return req, false
		}
		req.command = elem.Key()
		req.db, _ = req.body.Lookup("$db").StringValueOK()
		if isHandshake(req.command) {
			req.handshake = req.body
		}
		if lsid, ok := req.body.Lookup("lsid").DocumentOK(); ok {
			req.lsid = string(lsid)
		}
		req.txnNumber, req.hasTxnNumber = req.body.Lookup("txnNumber").AsInt64OK()
		req.transaction = req.body.Lookup("startTransaction").Type != 0 || req.body.Lookup("autocommit").Type != 0
		req.readConcern, _ = req.body.Lookup("readConcern", "level").StringValueOK()
		req.readPreference, _ = req.body.Lookup("$readPreference", "mode").StringValueOK()
		req.maxTimeMS, _ = req.body.Lookup("maxTimeMS").AsInt64OK()
	case wiremessage.OpQuery:
		// Drivers open a connection with a legacy hello by OP_QUERY on admin.$cmd.
		// The driver deprecates its OP_QUERY readers for building messages, but
		// reading what clients still send is what they are for here.
		_, rem, ok := wiremessage.ReadQueryFlags(rem)
		if !ok {
			return req, false
		}
		if _, rem, ok = wiremessage.ReadQueryFullCollectionName(rem); !ok {
			return req, false
		}
		if _, rem, ok = wiremessage.ReadQueryNumberToSkip(rem); !ok {
			return req, false
		}
		if _, rem, ok = wiremessage.ReadQueryNumberToReturn(rem); !ok {
			return req, false
		}
		query, _, ok := wiremessage.ReadQueryQuery(rem)
		if !ok || query.Validate() != nil {
			return req, false
		}
		if elem, err := query.IndexErr(0); err == nil && isHandshake(elem.Key()) {
			req.handshake = query
		}
	}
	return req, true
}

func isHandshake(command string) bool {
	return command == "hello" || command == "isMaster" || command == "ismaster"
}

// readMessage reads one whole wire message into buf's storage, which grows as the
// message's bytes arrive: a new buffer holds at most twice the bytes read so far,
// or minMessageBuffer. A message's declared length is only a claim.
func readMessage(r *bufio.Reader, buf []byte) ([]byte, error) {
	head, err := r.Peek(4)
	if err != nil {
		if errors.Is(err, io.EOF) && len(head) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return buf, err
	}
	n := int(int32(binary.LittleEndian.Uint32(head)))
	if n < 16 || n > maxMessageSize {
		return buf, fmt.Errorf("message length %d out of range", n)
	}
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, max(2*cap(buf), minMessageBuffer)))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// msgBody is the section-0 document of an OP_MSG reply.
func msgBody(msg []byte) (bsoncore.Document, bool) {
	_, _, _, opcode, rem, ok := wiremessage.ReadHeader(msg)
	if !ok || opcode != wiremessage.OpMsg {
		return nil, false
	}
	if _, rem, ok = wiremessage.ReadMsgFlags(rem); !ok {
		return nil, false
	}
	stype, rem, ok := wiremessage.ReadMsgSectionType(rem)
	if !ok || stype != wiremessage.SingleDocument {
		return nil, false
	}
	doc, _, ok := wiremessage.ReadMsgSectionSingleDocument(rem)
	return doc, ok
}

func responseTo(msg []byte) int32 {
	_, _, respTo, _, _, _ := wiremessage.ReadHeader(msg)
	return respTo
}

// appendMsg appends an OP_MSG reply to the request respTo, with body as its only section.
func appendMsg(dst []byte, respTo int32, body bsoncore.Document) []byte {
	idx, dst := wiremessage.AppendHeaderStart(dst, wiremessage.NextRequestID(), respTo, wiremessage.OpMsg)
	dst = wiremessage.AppendMsgFlags(dst, 0)
	dst = wiremessage.AppendMsgSectionType(dst, wiremessage.SingleDocument)
	dst = append(dst, body...)
	return bsoncore.UpdateLength(dst, idx, int32(len(dst[idx:])))
}
