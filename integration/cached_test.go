//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/internal/history"
)

// SetMode creates a new sequence at 0 and stores the mode and bounds; Current and
// List show them; a mode change keeps the value; bounds 0 are not stored.
func TestCachedSetModeStored(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{})
	t.Cleanup(func() { c.Close(context.Background()) })

	mustSetMode(t, c, "orders", seqd.ModeStrict, 0, 0)
	wantSequence(t, c, counters.Sequence{Name: "orders", Value: 0, Mode: seqd.ModeStrict})
	mustNext(t, c, "orders", 1)
	mustSetMode(t, c, "orders", seqd.ModeStrict, 10, 1000)
	wantSequence(t, c, counters.Sequence{Name: "orders", Value: 1, Mode: seqd.ModeStrict, MinBlock: 10, MaxBlock: 1000})
	mustSetMode(t, c, "orders", seqd.ModeStrict, 0, 0)
	wantSequence(t, c, counters.Sequence{Name: "orders", Value: 1, Mode: seqd.ModeStrict})

	raw, err := db.Collection(counters.CounterCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "orders"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.LookupErr("minBlock"); err == nil {
		t.Errorf("bounds 0 are stored: %v", raw)
	}

	mustSetMode(t, c, "fresh", seqd.ModeCached, 10, 20)
	wantSequence(t, c, counters.Sequence{Name: "fresh", Value: 0, Mode: seqd.ModeCached, MinBlock: 10, MaxBlock: 20})
	raw, err = db.Collection(counters.CounterCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "fresh"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if seq := raw.Lookup("seq"); seq.Type != bson.TypeInt64 || seq.Int64() != 0 {
		t.Errorf("a new sequence's seq is %v, want the long 0", seq)
	}

	page, err := c.List(ctx, counters.ListOptions{})
	list := page.Sequences
	if err != nil || len(list) != 2 || list[0].Mode != seqd.ModeCached || list[1].Mode != seqd.ModeStrict {
		t.Errorf("List = %+v, %v; want fresh cached and orders strict", list, err)
	}
}

// SetMode refuses what it cannot store, and creates nothing.
func TestCachedSetModeInvalid(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{})
	for _, tc := range []struct {
		mode     seqd.Mode
		min, max int64
	}{{"weird", 0, 0}, {seqd.ModeCached, 0, 5}, {seqd.ModeCached, 9, 3}, {seqd.ModeCached, 1, 1_000_001}} {
		if err := c.SetMode(ctx, "orders", tc.mode, tc.min, tc.max); !errors.Is(err, counters.ErrInvalidMode) {
			t.Errorf("SetMode(%q, %d, %d) = %v, want ErrInvalidMode", tc.mode, tc.min, tc.max, err)
		}
	}
	if _, err := c.Current(ctx, "orders"); !errors.Is(err, counters.ErrNotFound) {
		t.Errorf("Current after refused SetModes: %v, want ErrNotFound", err)
	}
}

// A counter document whose mode or bounds seqd cannot use: every call fails with
// ErrInvalidCounter naming what was found, and the document is not changed.
func TestCachedInvalidDocuments(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	coll := db.Collection(counters.CounterCollection)
	seq := bson.E{Key: "seq", Value: int64(5)}
	bad := map[string]struct {
		doc  bson.D
		says string
	}{
		"weird":      {bson.D{{Key: "_id", Value: "weird"}, seq, {Key: "mode", Value: "weird"}}, `the mode of "weird" is a string "weird"`},
		"mode-int":   {bson.D{{Key: "_id", Value: "mode-int"}, seq, {Key: "mode", Value: 2}}, `the mode of "mode-int" is an int 2`},
		"bound-dbl":  {bson.D{{Key: "_id", Value: "bound-dbl"}, seq, {Key: "mode", Value: "cached"}, {Key: "minBlock", Value: 1.5}, {Key: "maxBlock", Value: 9}}, `the minBlock of "bound-dbl" is a double 1.5`},
		"bound-huge": {bson.D{{Key: "_id", Value: "bound-huge"}, seq, {Key: "mode", Value: "cached"}, {Key: "minBlock", Value: 1}, {Key: "maxBlock", Value: int64(1) << 40}}, `the maxBlock of "bound-huge" is a long`},
		// A filter condition on a field matches an array holding a match: the filter
		// must refuse arrays itself.
		"mode-array":   {bson.D{{Key: "_id", Value: "mode-array"}, seq, {Key: "mode", Value: bson.A{"cached"}}}, `the mode of "mode-array" is of BSON type array`},
		"seq-array":    {bson.D{{Key: "_id", Value: "seq-array"}, {Key: "seq", Value: bson.A{int64(5)}}, {Key: "mode", Value: "cached"}}, `the seq of "seq-array" is of BSON type array`},
		"count-string": {bson.D{{Key: "_id", Value: "count-string"}, seq, {Key: "mode", Value: "cached"}, {Key: "reserved", Value: "many"}}, `the reserved of "count-string" is a string "many"`},
		"bound-array":  {bson.D{{Key: "_id", Value: "bound-array"}, seq, {Key: "mode", Value: "cached"}, {Key: "minBlock", Value: bson.A{5}}, {Key: "maxBlock", Value: bson.A{10}}}, `the minBlock of "bound-array" is of BSON type array`},
	}
	for _, b := range bad {
		if _, err := coll.InsertOne(ctx, b.doc); err != nil {
			t.Fatal(err)
		}
	}
	c := counters.NewCounter(db, counters.Options{})
	t.Cleanup(func() { c.Close(context.Background()) })
	for name, b := range bad {
		before, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for op, call := range map[string]func() error{
			"Next":            func() error { _, err := c.Next(ctx, name); return err },
			"NextN":           func() error { _, err := c.NextN(ctx, name, 3); return err },
			"Current":         func() error { _, err := c.Current(ctx, name); return err },
			"Set":             func() error { return c.Set(ctx, name, 100, false) },
			"Set(force)":      func() error { return c.Set(ctx, name, 1, true) },
			"SetMode(strict)": func() error { return c.SetMode(ctx, name, seqd.ModeStrict, 0, 0) },
		} {
			err := call()
			if !errors.Is(err, counters.ErrInvalidCounter) || !strings.Contains(err.Error(), b.says) {
				t.Errorf("%s(%s) = %v, want ErrInvalidCounter saying %s", op, name, err, b.says)
			}
		}
		after, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("%s: the document changed from %v to %v", name, before, after)
		}
	}
	page, err := c.List(ctx, counters.ListOptions{})
	list := page.Sequences
	if err != nil || len(list) != len(bad) {
		t.Fatalf("List = %+v, %v", list, err)
	}
	for _, s := range list {
		if !errors.Is(s.Err, counters.ErrInvalidCounter) {
			t.Errorf("List: %+v, want ErrInvalidCounter", s)
		}
	}
}

// Two Counters on one database, as two instances, both serving one cached name to
// 32 goroutines each: no value twice, and each Counter's answers increase in real
// time. Once both have closed, the store's counts add up.
func TestCachedTwoInstances(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	const goroutines, perGoroutine = 32, 200
	obs := new(observer)
	opts := counters.Options{Blocks: blocks.Options{MinBlock: 10, MaxBlock: 1000}, Observer: obs}
	a := counters.NewCounter(be.NewClient(t).Database(name), opts)
	b := counters.NewCounter(be.NewClient(t).Database(name), opts)
	mustSetMode(t, a, "hot", seqd.ModeCached, 0, 0)
	mustSetMode(t, b, "hot", seqd.ModeCached, 0, 0)

	recs := loadCached(t, ctx, map[string]*counters.Counter{"a": a, "b": b}, "hot", goroutines, func(int) bool { return false }, perGoroutine)
	all := checkPerInstance(t, recs)
	if all.Values != 2*goroutines*perGoroutine {
		t.Errorf("%d values, want %d", all.Values, 2*goroutines*perGoroutine)
	}

	for _, c := range []*counters.Counter{a, b} {
		if st, ok := c.BlockStatus("hot"); !ok || st.Served == 0 {
			t.Errorf("BlockStatus = %+v, %v; want blocks served", st, ok)
		}
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	s, err := a.Current(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	// Every value came from a block: the value is what was reserved less what was
	// given back, and the served count is what the callers got.
	if s.Blocks.Served != all.Values || s.Blocks.Unaccounted() < 0 || s.Value != s.Blocks.Reserved-s.Blocks.Returned {
		t.Errorf("after Close the counts are %+v (value %d), want %d served, value = reserved - returned", s.Blocks, s.Value, all.Values)
	}
	// The Observer was told of every block: what they reserved is the stored count.
	if obs.blocks.Load() == 0 || obs.values.Load() != s.Blocks.Reserved {
		t.Errorf("Observer saw %d blocks of %d values in all, want the %d reserved", obs.blocks.Load(), obs.values.Load(), s.Blocks.Reserved)
	}
	t.Logf("%s; counts %+v, value %d", all, s.Blocks, s.Value)
}

// A busy name switched between strict and cached several times, through either
// Counter, while both serve it: no error, no value twice, each Counter in order.
func TestCachedSwitchUnderLoad(t *testing.T) {
	ctx := testContext(t)
	name := be.Database(t).Name()
	opts := counters.Options{Blocks: blocks.Options{MinBlock: 200, MaxBlock: 2000}, ModeRefresh: 20 * time.Millisecond, BlockLease: 300 * time.Millisecond}
	a := counters.NewCounter(be.NewClient(t).Database(name), opts)
	b := counters.NewCounter(be.NewClient(t).Database(name), opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	cs := map[string]*counters.Counter{"a": a, "b": b}

	const switches, perPhase = 8, 1000
	var done atomic.Int64
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	var recs map[string]*history.Recorder
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		recs = loadCached(t, ctx, cs, "busy", 16, func(int) bool {
			done.Add(1)
			select {
			case progress <- struct{}{}:
			default:
			}
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}, 0)
	}()
	waitDone := func(n int64) {
		t.Helper()
		for done.Load() < n {
			select {
			case <-progress:
			case <-ctx.Done():
				t.Fatalf("load stalled at %d answers, waiting for %d", done.Load(), n)
			}
		}
	}
	for i := range switches {
		waitDone(int64(i+1) * perPhase)
		mode := seqd.ModeCached
		if i%2 == 1 {
			mode = seqd.ModeStrict
		}
		via := []*counters.Counter{a, b}[i/2%2]
		mustSetMode(t, via, "busy", mode, 0, 0)
	}
	waitDone(int64(switches+1) * perPhase)
	close(stop)
	<-loaded
	all := checkPerInstance(t, recs)
	t.Logf("%d switches: %s", switches, all)
	s, err := a.Current(ctx, "busy")
	if err != nil || s.Blocks.Reserved == 0 {
		t.Errorf("Current = %+v, %v; want blocks reserved in the cached phases", s, err)
	}
	t.Logf("value %d, mode %s, counts %+v", s.Value, s.Mode, s.Blocks)
}

// Another instance's mode change reaches a Counter through its mode refresh: it
// stops serving from blocks, gives its tail back, and learns new bounds.
func TestCachedModeRefresh(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	opts := counters.Options{Blocks: blocks.Options{Prefetch: 1}, ModeRefresh: 20 * time.Millisecond, BlockLease: 300 * time.Millisecond}
	a := counters.NewCounter(db, opts)
	b := counters.NewCounter(db, opts)
	t.Cleanup(func() { a.Close(context.Background()); b.Close(context.Background()) })
	noBlocks := func(c *counters.Counter) func() (bool, error) {
		return func() (bool, error) { _, ok := c.BlockStatus("orders"); return !ok, nil }
	}

	mustSetMode(t, b, "orders", seqd.ModeCached, 10, 10)
	mustNext(t, b, "orders", 1) // b holds 2…10
	mustSetMode(t, a, "orders", seqd.ModeStrict, 0, 0)
	pollUntil(t, ctx, "b to leave cached mode", noBlocks(b))
	mustNext(t, a, "orders", 2) // b gave 2…10 back
	mustNext(t, b, "orders", 3) // b is strict now
	if _, ok := b.BlockStatus("orders"); ok {
		t.Error("b serves from blocks after the name went strict")
	}

	mustSetMode(t, b, "orders", seqd.ModeCached, 10, 10)
	mustNext(t, b, "orders", 4) // b holds 5…13
	mustSetMode(t, a, "orders", seqd.ModeCached, 3, 3)
	pollUntil(t, ctx, "b to drop the blocks of the old bounds", noBlocks(b))
	mustNext(t, b, "orders", 5) // strict, and learns the new bounds
	mustNext(t, b, "orders", 6)
	if st, ok := b.BlockStatus("orders"); !ok || st.Fetched != 3 {
		t.Errorf("BlockStatus = %+v, %v; want one block of 3", st, ok)
	}
}

// A slow give-back of one name does not hold back the switch of another: once
// the mode refresh has read that two names went strict, each answers in strict
// mode while the store holds the give-back of the other. Which give-back the store
// holds (the first) depends on the order the Counter retires them in, so the test
// does not name it: every answer must be strict, and at most one name may run
// out of time, the one whose give-back is held.
func TestCachedRefreshSwitchesApart(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	names := []string{"a", "b"}
	// Blocks of 1000: each name's first Next leaves 999 values to serve, and none
	// is fetched ahead.
	opts := counters.Options{Blocks: blocks.Options{MinBlock: 1000, MaxBlock: 1000}, ModeRefresh: 20 * time.Millisecond, BlockLease: time.Second}
	c := counters.NewCounter(be.NewAppClient(t, "refreshing").Database(db.Name()), opts)
	other := counters.NewCounter(db, counters.Options{})
	t.Cleanup(func() { c.Close(context.Background()); other.Close(context.Background()) })
	for _, name := range names {
		mustSetMode(t, c, name, seqd.ModeCached, 0, 0)
		mustNext(t, c, name, 1)
	}

	// The refresh must read both switches with one find: its reads fail while the
	// names switch one after the other, until one has failed after both.
	ns := db.Name() + "." + counters.CounterCollection
	noReads := bson.D{
		{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "namespace", Value: ns},
		{Key: "appName", Value: "refreshing"}, // c's reads, not the switches'
		{Key: "errorCode", Value: 8},          // UnknownError: neither retried nor a change of the server's state
	}
	be.FailCommand(t, "alwaysOn", noReads)
	for _, name := range names {
		mustSetMode(t, other, name, seqd.ModeStrict, 0, 0)
	}
	if err := be.FailCommand(t, "alwaysOn", noReads).WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The first give-back, an update, is held far longer than the callers wait.
	held := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"update"}},
		{Key: "namespace", Value: ns},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: 10_000},
	})
	if err := held.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}

	const wait = 3 * time.Second
	answers := make(map[string]chan answer, len(names))
	for _, name := range names {
		answered := make(chan answer, 1)
		answers[name] = answered
		go func() {
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			v, err := c.Next(ctx, name)
			answered <- answer{v, err}
		}()
	}
	strict, late := 0, 0
	for _, name := range names {
		a := <-answers[name]
		if a.err != nil {
			if !errors.Is(a.err, context.DeadlineExceeded) {
				t.Errorf("Next(%q): %v, want a value, or the deadline for the name whose give-back is held", name, a.err)
			}
			late++
			continue
		}
		// A strict Next leaves its value in the document; a value from the blocks
		// lies below the end of the block the document shows.
		s, err := c.Current(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Mode != seqd.ModeStrict || s.Value != a.v {
			t.Errorf("Next(%q) = %d with the document at %d, mode %s: a value from the blocks after the refresh read the switch", name, a.v, s.Value, s.Mode)
			continue
		}
		strict++
	}
	if strict == 0 || late > 1 {
		t.Errorf("%d names answered in strict mode within %v, %d ran out of time; want at most one held", strict, wait, late)
	}
}

// A strict write still in flight when the name turns cached in this Counter lands
// below the first block: a caller that starts after it returned gets a larger
// value. The failpoint holds the strict write on the server while the block fetch
// is asked for; were the fetch not queued behind it, the block would be reserved
// first and lie below the strict value.
func TestCachedSwitchOrder(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{})
	t.Cleanup(func() { c.Close(context.Background()) })
	strict := heldStrictNext(t, ctx, c, db)
	cached := make(chan answer, 1)
	mustSetMode(t, c, "orders", seqd.ModeCached, 10, 10)
	go func() { v, err := c.Next(ctx, "orders"); cached <- answer{v, err} }()

	s := <-strict
	if s.err != nil {
		t.Fatalf("the held strict Next: %v", s.err)
	}
	if v, err := c.Next(ctx, "orders"); err != nil || v <= s.v {
		t.Errorf("Next after the strict Next returned %d: %d, %v; want a larger value", s.v, v, err)
	}
	if b := <-cached; b.err != nil || b.v <= s.v {
		t.Errorf("the first cached Next: %d, %v; want a value above the strict write's %d", b.v, b.err, s.v)
	}
}

// The same with callers who write alone (NoCoalesce): nothing queues the block
// fetch behind the held strict write, which lands above the first block. Its
// caller must not get that value, or a later caller of the same Counter, served
// from the block, would get a smaller one.
func TestCachedSwitchOrderAlone(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{NoCoalesce: true})
	t.Cleanup(func() { c.Close(context.Background()) })
	strict := heldStrictNext(t, ctx, c, db)
	mustSetMode(t, c, "orders", seqd.ModeCached, 10, 10)
	first, err := c.Next(ctx, "orders") // the first block, fetched while the strict write is held
	if err != nil {
		t.Fatal(err)
	}
	s := <-strict
	if s.err != nil || s.v == first {
		t.Fatalf("the held strict Next: %d, %v; want a value other than the first cached one, %d", s.v, s.err, first)
	}
	if v, err := c.Next(ctx, "orders"); err != nil || v <= s.v {
		t.Errorf("Next after the strict Next returned %d: %d, %v; want a larger value", s.v, v, err)
	}
}

// answer is what one Next returned.
type answer struct {
	v   int64
	err error
}

// heldStrictNext makes c's first Next of "orders", then starts a second whose
// write the store holds for 300ms, and returns once the store holds it. The
// answer comes on the channel.
func heldStrictNext(t *testing.T, ctx context.Context, c *counters.Counter, db *mongo.Database) <-chan answer {
	t.Helper()
	mustNext(t, c, "orders", 1)
	f := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: 300},
	})
	strict := make(chan answer, 1)
	go func() { v, err := c.Next(ctx, "orders"); strict <- answer{v, err} }()
	if err := f.WaitEntered(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return strict
}

// Near the end a block fetch reserves what is left, and then the cached name is
// exhausted like a strict one.
func TestCachedExhaustion(t *testing.T) {
	ctx := testContext(t)
	c := counters.NewCounter(be.Database(t), counters.Options{})
	t.Cleanup(func() { c.Close(context.Background()) })
	mustSet(t, c, "end", math.MaxInt64-5, false)
	mustSetMode(t, c, "end", seqd.ModeCached, 100, 100)
	for left := int64(4); left >= 0; left-- {
		mustNext(t, c, "end", math.MaxInt64-left)
	}
	for range 2 {
		if v, err := c.Next(ctx, "end"); !errors.Is(err, counters.ErrExhausted) {
			t.Fatalf("Next past MaxInt64 = %d, %v; want ErrExhausted", v, err)
		}
	}
	if s, err := c.Current(ctx, "end"); err != nil || s.Value != math.MaxInt64 || s.Blocks.Reserved != 5 {
		t.Errorf("Current = %+v, %v; want MaxInt64, 5 reserved", s, err)
	}
}

// Close gives back the unused tail: the next Counter goes on from the last value
// handed out, and the store counts what was served and returned.
func TestCachedCloseGivesBack(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	a := counters.NewCounter(db, counters.Options{})
	mustSetMode(t, a, "orders", seqd.ModeCached, 10, 10)
	for want := int64(1); want <= 3; want++ {
		mustNext(t, a, "orders", want)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s, err := a.Current(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if s.Value != 3 || s.Blocks.Served != 3 || s.Blocks.Returned != s.Blocks.Reserved-3 || s.Blocks.Unaccounted() != 0 {
		t.Errorf("after Close: %+v; want value 3, 3 served, the rest returned", s)
	}
	if _, ok := a.BlockStatus("orders"); ok {
		t.Error("BlockStatus after Close reports blocks")
	}
	mustNext(t, a, "orders", 4) // a closed Counter serves in strict mode

	b := counters.NewCounter(db, counters.Options{})
	t.Cleanup(func() { b.Close(context.Background()) })
	mustNext(t, b, "orders", 5)
	mustNext(t, b, "orders", 6) // from a block now
	if _, ok := b.BlockStatus("orders"); !ok {
		t.Error("a Counter that found the name cached at its strict write serves no blocks")
	}
}

// Close when another Counter has reserved past this one's blocks: nothing is given
// back, and the value and the returned count are unchanged.
func TestCachedCloseNoGiveBack(t *testing.T) {
	ctx := testContext(t)
	db := be.Database(t)
	// Neither fetches a block ahead: b's block is the last one reserved, and the
	// document changes only when asked.
	opts := counters.Options{Blocks: blocks.Options{Prefetch: 1}}
	a := counters.NewCounter(db, opts)
	b := counters.NewCounter(db, opts)
	t.Cleanup(func() { b.Close(context.Background()) })
	mustSetMode(t, a, "orders", seqd.ModeCached, 10, 10)
	mustSetMode(t, b, "orders", seqd.ModeCached, 10, 10)
	mustNext(t, a, "orders", 1)
	if r, err := b.NextN(ctx, "orders", 5); err != nil || r.First <= 10 {
		t.Fatalf("b.NextN(5) = %v, %v; want values of a block above a's", r, err)
	}
	before, err := a.Current(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	after, err := a.Current(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if after.Value != before.Value || after.Blocks.Returned != before.Blocks.Returned || after.Blocks.Reserved != before.Blocks.Reserved {
		t.Errorf("Close changed %+v to %+v; want no give-back", before, after)
	}
}

// The store refuses findAndModify: a cached name serves the values its blocks
// hold, then fails with ErrUnavailable from the store's answer, not from the
// caller's deadline, and so do the callers that follow (within the cooldown, the
// failed fetch's error without a new fetch).
func TestCachedStoreDown(t *testing.T) {
	be.RequireFailCommand(t)
	ctx := testContext(t)
	db := be.Database(t)
	c := counters.NewCounter(db, counters.Options{Blocks: blocks.Options{Prefetch: 1, Cooldown: time.Minute}})
	t.Cleanup(func() { c.Close(context.Background()) })
	mustSetMode(t, c, "orders", seqd.ModeCached, 20, 20)
	mustNext(t, c, "orders", 1)

	f := be.FailCommand(t, "alwaysOn", bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify"}},
		{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
		{Key: "errorCode", Value: 91}, // ShutdownInProgress
		// No labels: on a replica set, mongod labels 91 RetryableWriteError and
		// the driver retries it as long as the caller's context lasts.
		{Key: "errorLabels", Value: bson.A{}},
	})
	for want := int64(2); want <= 20; want++ {
		mustNext(t, c, "orders", want)
	}
	for i := range 3 {
		deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
		v, err := c.Next(deadline, "orders")
		cancel()
		if !errors.Is(err, counters.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d past the blocks: %d, %v; want ErrUnavailable from the store, not the deadline", i, v, err)
		}
	}
	if err := f.Off(ctx); err != nil {
		t.Fatal(err)
	}
}

// A block fetch that fails reports what the instance had served at most once:
// the store's served count never exceeds what callers got. A fetch the store
// applied but answered with a write concern error is not sent again (its block is
// lost, unaccounted); one the store refused is; one whose connection broke may
// have been applied, so its report is taken as in (unless the driver retried
// the write, as it does on a replica set), and the lost report shows as
// unaccounted, overstating the loss rather than hiding one.
func TestCachedServedReportedOnce(t *testing.T) {
	be.RequireFailCommand(t)
	for _, tc := range []struct {
		name   string
		fail   bson.E
		value  int64   // the value after the failed fetch
		served []int64 // what the store may count, of the 11 values handed out
		counts seqd.BlockCounts
	}{
		{"write concern error", bson.E{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}},
			21, []int64{11}, seqd.BlockCounts{Reserved: 30, Returned: 9}},
		{"refused", bson.E{Key: "errorCode", Value: 91},
			11, []int64{11}, seqd.BlockCounts{Reserved: 20, Returned: 9}},
		{"connection closed", bson.E{Key: "closeConnection", Value: true},
			11, []int64{1, 11}, seqd.BlockCounts{Reserved: 20, Returned: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			db := be.Database(t)
			// The next block is fetched when the current one is used up; a failed
			// fetch leaves no cooldown, so the next caller fetches again. The
			// Counter has a client of its own: a closed connection clears its
			// pool, which must not fail the test's own commands.
			c := counters.NewCounter(be.NewClient(t).Database(db.Name()), counters.Options{Blocks: blocks.Options{Prefetch: 1, Cooldown: time.Nanosecond}})
			t.Cleanup(func() { c.Close(context.Background()) })
			mustSetMode(t, c, "orders", seqd.ModeCached, 10, 10)
			for want := int64(1); want <= 9; want++ {
				mustNext(t, c, "orders", want)
			}
			f := be.FailCommand(t, bson.D{{Key: "times", Value: 1}}, bson.D{
				{Key: "failCommands", Value: bson.A{"findAndModify"}},
				{Key: "namespace", Value: db.Name() + "." + counters.CounterCollection},
				tc.fail,
			})
			mustNext(t, c, "orders", 10) // uses the block up: the fetch of 11…20 fails
			if err := f.WaitEntered(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for attempt := 0; ; attempt++ {
				v, err := c.Next(ctx, "orders")
				if err == nil {
					if v != tc.value {
						t.Fatalf("Next after the failed fetch = %d, want %d", v, tc.value)
					}
					break
				}
				if !errors.Is(err, counters.ErrUnavailable) || attempt == 2 {
					t.Fatalf("Next after the failed fetch: %v", err)
				}
			}
			if err := c.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			s, err := c.Current(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			got := s.Blocks
			got.Served = 0
			if got != tc.counts || !slices.Contains(tc.served, s.Blocks.Served) || s.Value != tc.value {
				t.Errorf("after Close: value %d, counts %+v; want value %d, counts %+v with served one of %v", s.Value, s.Blocks, tc.value, tc.counts, tc.served)
			}
		})
	}
}

// loadCached runs goroutines callers of Next on name in each Counter, each
// making perGoroutine calls, or, with perGoroutine 0, calls until after returns
// true. It records each Counter's answers, and fails the test on any error.
func loadCached(t *testing.T, ctx context.Context, cs map[string]*counters.Counter, name string, goroutines int, after func(int) bool, perGoroutine int) map[string]*history.Recorder {
	recs := make(map[string]*history.Recorder, len(cs))
	var wg sync.WaitGroup
	for id, c := range cs {
		rec := &history.Recorder{}
		recs[id] = rec
		for g := range goroutines {
			wg.Go(func() {
				for i := 0; perGoroutine == 0 || i < perGoroutine; i++ {
					start := time.Now()
					v, err := c.Next(ctx, name)
					end := time.Now()
					if err != nil {
						t.Errorf("%s-%d: %v", id, g, err)
						return
					}
					rec.Add(history.Op{Client: fmt.Sprintf("%s-%d", id, g), Start: start, End: end, First: v, Last: v})
					if after(i) {
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return recs
}

// checkPerInstance checks that each instance's answers increase in real time and
// that no value was handed out twice over all of them (there is no order across
// instances), and returns the check of all answers.
func checkPerInstance(t *testing.T, recs map[string]*history.Recorder) history.Result {
	t.Helper()
	var all []history.Op
	for id, rec := range recs {
		ops := rec.Ops()
		if r := history.Check(ops, history.Options{}); r.Err() != nil {
			t.Errorf("instance %s: %v", id, r.Err())
		}
		all = append(all, ops...)
	}
	r := history.Check(all, history.Options{})
	if r.Duplicates != 0 || r.Invalid != 0 {
		t.Errorf("over all instances: %s; %v", r, r.Examples)
	}
	return r
}

func mustSetMode(t *testing.T, c *counters.Counter, name string, mode seqd.Mode, min, max int64) {
	t.Helper()
	if err := c.SetMode(testContext(t), name, mode, min, max); err != nil {
		t.Fatalf("SetMode(%q, %s, %d, %d): %v", name, mode, min, max, err)
	}
}

func wantSequence(t *testing.T, c *counters.Counter, want counters.Sequence) {
	t.Helper()
	if got, err := c.Current(testContext(t), want.Name); err != nil || got != want {
		t.Errorf("Current(%q) = %+v, %v; want %+v", want.Name, got, err, want)
	}
}
