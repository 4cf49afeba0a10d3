package counters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/period"
)

// Numbering is how people read a strict sequence's values: the period after
// which it restarts at 1, the time zone in which periods begin, and the format
// its answers carry (package period has the tokens). The zero Numbering is a
// plain sequence.
type Numbering struct {
	Period   string // "" or "none", "year", "month", "day", "hour", "minute"
	TimeZone string // an IANA name ("Europe/Berlin"); "" or "UTC" for UTC
	Format   string // "" for none, else with {seq}: "INV-{yyyy}-{seq:6}"
}

// maxPastPeriods bounds the finished periods a counter document remembers
// (PeriodValue): 32 keys of at most 16 bytes and their values.
const maxPastPeriods = 32

// maxPeriodTries bounds a periodic write's attempts: each one that fails
// does so because another write changed the document since it was read.
const maxPeriodTries = 50

// numbered is a Numbering parsed: what a Counter needs to take values of a
// sequence and to answer them.
type numbered struct {
	stored Numbering // as stored: Period "" for none, TimeZone "" for UTC
	spec   period.Spec
	format period.Format
}

// Numbered is a reservation of a numbered sequence (seqd.Numbered).
type Numbered = seqd.Numbered

// numberNote is what a write of a numbered sequence tells its callers: the
// numbering it took their values under, and the start of their period.
type numberNote struct {
	nb    *numbered
	start int64 // ms since the epoch; 0 without a period
}

// label returns r read as nn says.
func (nn *numberNote) label(r Range) Numbered {
	out := Numbered{Range: r}
	if nn == nil {
		return out
	}
	start := time.UnixMilli(nn.start).In(nn.nb.spec.Zone)
	if nn.nb.spec.Unit != period.None {
		out.Period = nn.nb.spec.Key(start)
	}
	if nn.nb.stored.Format != "" {
		out.Formatted = nn.nb.format.Apply(r.Last, start)
		if r.First != r.Last {
			out.FormattedFirst = nn.nb.format.Apply(r.First, start)
		}
	}
	return out
}

// Check returns nil for a numbering SetNumbering takes, and otherwise an
// error that wraps ErrInvalidMode and package period's error, which says what
// is wrong.
func (n Numbering) Check() error {
	if n.Period == "none" {
		n.Period = ""
	}
	_, err := n.parse()
	return err
}

// parse checks n and returns it as stored and parsed. Its errors wrap
// ErrInvalidMode and say what is wrong.
func (n Numbering) parse() (*numbered, error) {
	unit := period.None
	if n.Period != "" {
		u, err := period.ParseUnit(n.Period)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidMode, err)
		}
		unit = u
	}
	zone, err := loadZone(n.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMode, err)
	}
	if unit == period.None && zone != time.UTC {
		return nil, fmt.Errorf("%w: a time zone (%s) goes with a period", ErrInvalidMode, zone)
	}
	nb := &numbered{spec: period.Spec{Unit: unit, Zone: zone}}
	if n.Format != "" {
		if nb.format, err = period.ParseFormat(n.Format); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidMode, err)
		}
		if err := nb.format.Check(nb.spec); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidMode, err)
		}
	}
	nb.stored = Numbering{Format: n.Format}
	if unit != period.None {
		nb.stored.Period = unit.String()
	}
	if zone != time.UTC {
		nb.stored.TimeZone = n.TimeZone
	}
	return nb, nil
}

// zones are the time zones loaded so far, by name: time.LoadLocation reads
// the zone database each time. There are a few hundred names.
var zones sync.Map

// loadZone is period.ParseZone, remembered.
func loadZone(name string) (*time.Location, error) {
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location), nil
	}
	z, err := period.ParseZone(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, z)
	return z, nil
}

// numberings are the numberings a Counter knows its names by, learned from
// their documents: a name with none is not here. A write of a name takes it
// from here, and its filter checks that the document still has it; when not,
// the document read tells the new one.
type numberings struct{ m sync.Map }

func (k *numberings) lookup(name string) *numbered {
	if v, ok := k.m.Load(name); ok {
		return v.(*numbered)
	}
	return nil
}

// learn records the numbering s shows for name and returns it, nil for none.
// Its error wraps ErrInvalidCounter: a numbering seqd would not have stored.
func (k *numberings) learn(name string, s counterState) (*numbered, error) {
	if s.numbering == (Numbering{}) {
		if _, ok := k.m.Load(name); ok { // a Load, not a Delete, on every plain write: no lock
			k.m.Delete(name)
		}
		return nil, nil
	}
	if err := s.strictNumbering(name); err != nil {
		return nil, err
	}
	if nb := k.lookup(name); nb != nil && nb.stored == s.numbering {
		return nb, nil
	}
	nb, err := s.numbered(name)
	if err != nil {
		return nil, err
	}
	k.m.Store(name, nb)
	return nb, nil
}

// numbered returns s's numbering parsed, nil for none. Its error wraps
// ErrInvalidCounter: a numbering seqd would not have stored.
func (s counterState) numbered(name string) (*numbered, error) {
	if s.numbering == (Numbering{}) {
		return nil, nil
	}
	if err := s.strictNumbering(name); err != nil {
		return nil, err
	}
	nb, err := s.numbering.parse()
	if err != nil {
		return nil, fmt.Errorf("%w: the numbering of %q: %w", ErrInvalidCounter, cut(name, 40), errors.Unwrap(err))
	}
	if nb.stored != s.numbering {
		// Every write's filter asks for the numbering as seqd stores it.
		return nil, fmt.Errorf("%w: the numbering of %q has period %q and zone %q, which seqd stores as %q and %q (leaving out an empty one)",
			ErrInvalidCounter, cut(name, 40), s.numbering.Period, s.numbering.TimeZone, nb.stored.Period, nb.stored.TimeZone)
	}
	return nb, nil
}

// strictNumbering returns an error that wraps ErrInvalidCounter for s with a
// numbering and a mode other than strict: seqd stores none on a cached or
// draining sequence (SetNumbering and SetMode refuse it).
func (s counterState) strictNumbering(name string) error {
	if s.numbering != (Numbering{}) && (s.mode == seqd.ModeCached || s.draining) {
		return fmt.Errorf("%w: %q is cached or leaving cached mode and has a period, time zone or format, which seqd does not store together",
			ErrInvalidCounter, cut(name, 40))
	}
	return nil
}

// parseNumbering reads the numbered sequence's fields of doc into s: strings,
// and a periodStart and periods of the types seqd writes. Whether the strings
// name a period, a zone and a format is checked where they are used (learn).
func parseNumbering(name string, doc bson.Raw, s *counterState) error {
	for _, f := range []struct {
		field string
		to    *string
	}{{fieldPeriod, &s.numbering.Period}, {fieldZone, &s.numbering.TimeZone}, {fieldFormat, &s.numbering.Format}} {
		v, err := doc.LookupErr(f.field)
		if err != nil {
			continue
		}
		str, ok := v.StringValueOK()
		if !ok || str == "" { // seqd leaves out what it has not
			return fmt.Errorf("%w: the %s of %q is %s %s, want a string that is not empty",
				ErrInvalidCounter, f.field, cut(name, 40), bsonTypeName(v.Type), valueText(v))
		}
		*f.to = str
	}
	for _, f := range []struct {
		field string
		to    *int64
		has   *bool
	}{{fieldPeriodStart, &s.periodStart, &s.hasStart}, {fieldNext, &s.nextStart, &s.hasNext}} {
		v, err := doc.LookupErr(f.field)
		if err != nil {
			continue
		}
		n, ok := v.AsInt64OK()
		if !ok || v.Type == bson.TypeDouble {
			return fmt.Errorf("%w: the %s of %q is %s %s, want an integer",
				ErrInvalidCounter, f.field, cut(name, 40), bsonTypeName(v.Type), valueText(v))
		}
		*f.to, *f.has = n, true
	}
	if v, err := doc.LookupErr(fieldPast); err == nil {
		d, ok := v.DocumentOK()
		if !ok {
			return fmt.Errorf("%w: the %s of %q is %s, want a document",
				ErrInvalidCounter, fieldPast, cut(name, 40), bsonTypeName(v.Type))
		}
		s.past = string(d)
	}
	return nil
}

// periodValue is a finished period of a sequence (its key, "2026-11") and the
// last value handed out in it.
type periodValue struct {
	key   string
	value int64
}

// pastPeriods returns s's finished periods, oldest first; the values that are
// not integers are left out.
func (s counterState) pastPeriods() []periodValue {
	elems, _ := bson.Raw(s.past).Elements()
	var past []periodValue
	for _, e := range elems {
		if n, ok := e.Value().AsInt64OK(); ok && e.Value().Type != bson.TypeDouble {
			past = append(past, periodValue{key: e.Key(), value: n})
		}
	}
	slices.SortFunc(past, func(a, b periodValue) int { return strings.Compare(a.key, b.key) })
	return past
}

// PeriodValue returns the last value of name in the period key ("2026-11"):
// the current period's value, or that of one of the latest 32 finished ones.
// It returns ErrNotFound for a period the sequence does not remember (one
// before those, one that had no value, or one yet to come), and for a
// sequence without a period.
func (c *Counter) PeriodValue(ctx context.Context, name, key string) (int64, error) {
	if !ValidName(name) {
		return 0, invalidName("period value", name)
	}
	if err := c.ready(ctx, "period value", name); err != nil {
		return 0, err
	}
	s, err := readCounter(ctx, c.peek, name)
	if err != nil {
		return 0, wrap(err, "period value", name)
	}
	var seq Sequence
	if err := s.showNumbering(name, &seq); err != nil {
		return 0, wrap(err, "period value", name)
	}
	if s.numbering.Period == "" {
		return 0, wrap(fmt.Errorf("%w: %q has no period", ErrNotFound, cut(name, 40)), "period value", name)
	}
	if s.hasStart && key == seq.PeriodKey { // no key is "": before its first value a period has none
		return s.seq, nil
	}
	for _, p := range s.pastPeriods() {
		if p.key == key {
			return p.value, nil
		}
	}
	return 0, wrap(fmt.Errorf("%w: no period %.20q remembered", ErrNotFound, key), "period value", name)
}

// showNumbering adds s's numbering to seq, as Current and List show it. Its
// error wraps ErrInvalidCounter: a numbering seqd would not have stored.
func (s counterState) showNumbering(name string, seq *Sequence) error {
	seq.Period, seq.TimeZone, seq.Format = s.numbering.Period, s.numbering.TimeZone, s.numbering.Format
	nb, err := s.numbered(name)
	if err != nil || nb == nil || nb.spec.Unit == period.None || !s.hasStart {
		return err
	}
	seq.PeriodKey = nb.spec.Key(time.UnixMilli(s.periodStart))
	return nil
}

// plain keeps a write that takes or sets values without a period to a
// document whose numbering is nb (nil: none; else a format alone): not one
// with a period, nor one with a time zone (seqd stores one only with a
// period), nor one with another format or a format seqd would not have
// written. The writer that misses reads the document and learns its
// numbering (ErrInvalidCounter for one seqd would not have written, which
// stays as it is), then writes again.
func plain(nb *numbered) bson.D {
	var format any = bson.D{{Key: "$exists", Value: false}}
	if nb != nil && nb.stored.Format != "" {
		format = nb.stored.Format // a string: counterFilter refuses arrays
	}
	f := bson.D{
		{Key: fieldPeriod, Value: bson.D{{Key: "$exists", Value: false}}},
		{Key: fieldZone, Value: bson.D{{Key: "$exists", Value: false}}},
		{Key: fieldFormat, Value: format},
	}
	if nb != nil {
		// A format goes with mode strict only (strictNumbering).
		f = append(f, absentOr(fieldMode, bson.D{{Key: "$eq", Value: string(seqd.ModeStrict)}})...)
	}
	return f
}

// plainMissed reports whether a write filtered by plain(nb) misses s for its
// numbering: a period, another format, a zone, or a numbering on a cached or
// draining document. The writer then learns the numbering or refuses it.
func (s counterState) plainMissed(name string, nb *numbered) bool {
	var want Numbering
	if nb != nil {
		want = nb.stored
	}
	return s.numbering != want || s.strictNumbering(name) != nil
}

// errRelearn is a write that found name's numbering other than it was told:
// it has learned the stored one, and the caller writes again.
var errRelearn = errors.New("the numbering changed")

// takeOptions are a periodic write's: no upsert (SetNumbering created the
// document), the document after.
var takeOptions = options.FindOneAndUpdate().SetReturnDocument(options.After)

// reservePeriodic takes n values of name, whose numbering nb has a period:
// from the stored period if it is the one this Counter's clock reads or a
// newer one, else from a new period, the clock's, at 1. It returns the first
// value, and leaves its callers a numberNote. The stored period's start only
// grows, since a new period is written only over an older one: periods never
// go back.
//
// A new period begins with a write that matches the document as read (its
// period, value and announcement). While instances whose clocks are still in
// the stored period keep taking values of it, that write can miss every time;
// after one miss the writer announces the new period (nextPeriodStart), which
// stops every write that joins the stored one, and the next write, its own or
// any other instance's, begins the announced period over a value no one moves.
func (c *Counter) reservePeriodic(ctx context.Context, name string, n int64, nb *numbered) (int64, error) {
	start := nb.spec.Start(c.clock()).UnixMilli()
	same := numberingFilter(nb)
	// Join the stored period, if it is the clock's or newer and no newer one is announced.
	join := counterFilter(name, math.MaxInt64-n, append(same,
		bson.D{{Key: fieldPeriodStart, Value: bson.D{{Key: "$gte", Value: start}}}}, noNext)...)
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: fieldSeq, Value: n}}}}
	missed := false
	for range maxPeriodTries {
		doc, err := c.coll.FindOneAndUpdate(ctx, join, inc, takeOptions).Raw()
		if err == nil {
			return c.tookPeriodic(ctx, name, doc, n)
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return 0, err
		}
		cur, err := c.readPeriodic(ctx, name, nb)
		switch {
		case err != nil:
			return 0, err
		case cur.hasNext:
			// Begin the announced period (or the clock's, if newer): whoever
			// announced it may be gone.
		case cur.hasStart && cur.periodStart >= start && cur.seq > math.MaxInt64-n:
			return 0, periodExhausted{fmt.Errorf("%w: at %d, %d requested", ErrExhausted, cur.seq, n)}
		case cur.hasStart && cur.periodStart >= start:
			continue // a newer period began since the write
		case missed:
			// Announce the clock's period; the next pass begins it.
			if _, err := c.announce(ctx, name, cur, nb, start); err != nil {
				return 0, err
			}
			continue
		}
		filter, update := beginPeriod(name, cur, nb, max(start, cur.nextStart), n)
		doc, err = c.coll.FindOneAndUpdate(ctx, filter, update, takeOptions).Raw()
		if err == nil {
			return c.tookPeriodic(ctx, name, doc, n)
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return 0, err
		}
		missed = true
	}
	return 0, fmt.Errorf("%w: the period changed %d times during one write", ErrContention, maxPeriodTries)
}

// announce announces the period starting at start (ms) on name's document,
// read as cur, if it is still in the period read and announces none: from
// then on no write joins the stored period, and the next write of name begins
// the announced one (reservePeriodic, writeNumbering). It returns whether it
// announced: false when the document changed since it was read.
func (c *Counter) announce(ctx context.Context, name string, cur counterState, nb *numbered, start int64) (bool, error) {
	filter := counterFilter(name, math.MaxInt64, append(numberingFilter(nb), equalOrAbsent(fieldPeriodStart, cur.periodStart), noNext)...)
	r, err := c.coll.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: fieldNext, Value: start}}}})
	if err != nil {
		return false, err
	}
	return r.MatchedCount > 0, nil
}

// noNext keeps a write that takes values of the stored period off a document
// that announces a newer one.
var noNext = bson.D{{Key: fieldNext, Value: bson.D{{Key: "$exists", Value: false}}}}

// numberingFilter matches a strict sequence numbered as nb is.
func numberingFilter(nb *numbered) []bson.D {
	return []bson.D{notDraining, {{Key: fieldPeriod, Value: nb.stored.Period}}, equalOrAbsentString(fieldZone, nb.stored.TimeZone)}
}

// readPeriodic reads name's counter document for a write of a periodic
// sequence numbered as nb. It returns errRelearn when the document has
// another numbering (learned) or is gone.
func (c *Counter) readPeriodic(ctx context.Context, name string, nb *numbered) (counterState, error) {
	cur, err := readCounter(ctx, c.coll, name)
	switch {
	case errors.Is(err, ErrNotFound):
		c.numbering.m.Delete(name)
		return cur, errRelearn
	case err != nil:
		return cur, err
	case cur.numbering != nb.stored:
		if _, err := c.numbering.learn(name, cur); err != nil {
			return cur, err
		}
		return cur, errRelearn
	case cur.draining || cur.mode != seqd.ModeStrict:
		return cur, fmt.Errorf("%w: a %s sequence with a period", ErrInvalidCounter, cur.mode)
	}
	return cur, nil
}

// beginPeriod returns the write that begins the period starting at start
// (ms) with seq at value, over cur, name's document as read: it matches only
// while the document is as read (the same period, value and announcement),
// keeps the last value of the period that ends, and counts itself in forced,
// as a forced Set does, since it moves seq back: no give-back of a block
// reserved before it matches after it.
func beginPeriod(name string, cur counterState, nb *numbered, start, value int64) (bson.Raw, bson.D) {
	filter := counterFilter(name, math.MaxInt64, append(numberingFilter(nb),
		equalOrAbsent(fieldPeriodStart, cur.periodStart),
		equalOrAbsent(fieldNext, cur.nextStart),
		bson.D{{Key: fieldSeq, Value: cur.seq}})...)
	set, unset := periodFields(cur, nb, start, value)
	update := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: fieldForced, Value: int64(1)}}}}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	return filter, update
}

// periodFields returns the fields that begin the period starting at start
// (ms) with seq at value over cur: the period start and value, the last value
// of the period that ends (if one was stored), no announcement, and at most
// the latest 32 finished periods.
func periodFields(cur counterState, nb *numbered, start, value int64) (set, unset bson.D) {
	set = bson.D{{Key: fieldSeq, Value: value}, {Key: fieldPeriodStart, Value: start}}
	if cur.hasNext {
		unset = append(unset, bson.E{Key: fieldNext, Value: ""})
	}
	if cur.hasStart {
		key := nb.spec.Key(time.UnixMilli(cur.periodStart))
		set = append(set, bson.E{Key: fieldPast + "." + key, Value: cur.seq})
		if past := cur.pastPeriods(); len(past) >= maxPastPeriods {
			for _, p := range past[:len(past)-maxPastPeriods+1] {
				unset = append(unset, bson.E{Key: fieldPast + "." + p.key, Value: ""})
			}
		}
	}
	return set, unset
}

// tookPeriodic reads doc, the document after a write that took n values of a
// periodic sequence, and returns the first value.
func (c *Counter) tookPeriodic(ctx context.Context, name string, doc bson.Raw, n int64) (int64, error) {
	s, err := parseCounter(name, doc)
	if err != nil {
		return 0, err
	}
	nb, err := c.numbering.learn(name, s)
	if err != nil {
		return 0, err
	}
	setNote(ctx, &numberNote{nb: nb, start: s.periodStart})
	return s.seq - n + 1, nil
}

// equalOrAbsentString matches a document whose field is v, or, for v = "",
// absent.
func equalOrAbsentString(field, v string) bson.D {
	if v == "" {
		return bson.D{{Key: field, Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	return bson.D{{Key: field, Value: v}}
}

// NextNumbered reserves n contiguous values of name, as NextN does, and says
// how people read them: the period they belong to and their formatted text.
// For a sequence without a numbering it returns NextN's values alone.
func (c *Counter) NextNumbered(ctx context.Context, name string, n int64) (Numbered, error) {
	r, note, err := c.nextN(ctx, name, n)
	nn, _ := note.(*numberNote)
	return nn.label(r), err
}

// SetNumbering stores name's numbering (SetMode's companion), creating the
// sequence at 0 if it is new. A period or time zone takes effect with the
// next value, which is 1 of the period the taking instance's clock reads; once
// values of a period were handed out, another period or time zone (or none) is
// ErrInvalidMode, since it would number a period from 1 again under a key
// already used. A new format alone keeps the period and the value. No period
// continues from the value stored.
// Set on a periodic sequence sets the value of the current period: of the
// one the setter's clock reads, or of a newer one stored. To continue a
// numbering mid-period, set the period, then the value (PUT with both does).
//
// It returns ErrInvalidMode for a numbering that does not parse (the error
// says what is wrong) and for a cached sequence: a period needs every value
// to come from a write to the store, so that no instance answers a period
// older than one another instance has begun. On a sequence leaving cached
// mode (draining) it waits for the drain's end, as a value taken does, or
// returns ErrDraining when ctx ends first. A document whose numbering seqd
// would not have written is ErrInvalidCounter, as for Next, and stays as it
// is. Optimistic has no numbering.
func (c *Counter) SetNumbering(ctx context.Context, name string, nb Numbering) error {
	return c.setNumbering(ctx, name, nb, nil)
}

// SetNumberingValue is SetNumbering and Set in one write: name's numbering
// becomes nb and its value value, which is, with a period, the value of the
// current period under nb (as Set takes it). Moving an invoice numbering that
// stands at 4211 this year to seqd is one call, and no value is taken between
// the numbering and the value: none is INV-2026-000001. Without force it
// refuses to move a value back (ErrBackwards) and changes nothing.
func (c *Counter) SetNumberingValue(ctx context.Context, name string, nb Numbering, value int64, force bool) error {
	if err := checkSet(name, value); err != nil {
		return err
	}
	return c.setNumbering(ctx, name, nb, &valueSet{value: value, force: force})
}

// valueSet is the value a SetNumberingValue write sets.
type valueSet struct {
	value int64
	force bool
}

func (c *Counter) setNumbering(ctx context.Context, name string, nb Numbering, v *valueSet) error {
	if !ValidName(name) {
		return invalidName("set numbering", name)
	}
	if nb.Period == "none" {
		nb.Period = ""
	}
	want, err := nb.parse()
	if err != nil {
		return fmt.Errorf("counters: set numbering %q: %w", name, err)
	}
	if err := c.ready(ctx, "set numbering", name); err != nil {
		return err
	}
	err = c.retry.do(ctx, func() (bool, error) {
		for {
			cur, err := readCounter(ctx, c.coll, name)
			exists := err == nil
			if err != nil && !errors.Is(err, ErrNotFound) {
				return false, err
			}
			if !exists || !cur.draining || want.stored == (Numbering{}) {
				return c.writeNumbering(ctx, name, cur, exists, want, v)
			}
			// Leaving cached mode: a numbering waits for strict values,
			// as a value taken does, or is ErrDraining if ctx ends first.
			d, err := c.drainSeen(ctx, name, cur)
			if err != nil {
				return false, err
			}
			if err := c.awaitDrain(ctx, d); err != nil {
				return false, err
			}
		}
	})
	if err == nil {
		// As after a forced Set, bigger counts may fit again: a value
		// forced, or a period that begins (with the value, or at 1 with the
		// next write), moves seq back.
		c.coalescer.forget(name)
	}
	return wrap(err, "set numbering", name)
}

// writeNumbering makes one attempt of setNumbering's write over name's
// document as read (cur, if it exists): the numbering want, and the value v
// if not nil, which with a period is the current period's (Set on a periodic
// sequence takes this way too). It returns true when the document changed
// since it was read, or it announced a period: read again and write again.
func (c *Counter) writeNumbering(ctx context.Context, name string, cur counterState, exists bool, want *numbered, v *valueSet) (bool, error) {
	if exists && cur.numbering != (Numbering{}) {
		// A numbering seqd would not have written is refused, as Next
		// refuses it (ErrInvalidCounter), and left as it is.
		if _, err := c.numbering.learn(name, cur); err != nil {
			return false, err
		}
	}
	if exists && want.stored == (Numbering{}) && cur.numbering == (Numbering{}) && (cur.mode == seqd.ModeCached || cur.draining) {
		// A cached sequence has no numbering to turn off (SetMode keeps
		// its mode and gen), and a value with none is a Set.
		if v == nil {
			return false, nil
		}
		return false, c.set(ctx, name, v.value, v.force)
	}
	if exists && want.stored != (Numbering{}) && (cur.mode == seqd.ModeCached || cur.draining) {
		return false, fmt.Errorf("%w: a cached sequence has no period or format (its instances hand out blocks with no order between them): set mode strict first", ErrInvalidMode)
	}
	// kept: the period and zone stay, and so does the period stored.
	kept := exists && cur.numbering.Period == want.stored.Period && cur.numbering.TimeZone == want.stored.TimeZone
	// Another period or zone would start the clock's period again at 1,
	// under a key that may be one already handed out: numbers would repeat.
	if exists && cur.hasStart && !kept {
		return false, fmt.Errorf("%w: the period and time zone of a sequence that has handed out values of a period stay as they are (another would number a period again from 1); a new format alone may change, or take a new name", ErrInvalidMode)
	}
	var set, unset bson.D
	for _, f := range []struct{ field, v string }{
		{fieldPeriod, want.stored.Period}, {fieldZone, want.stored.TimeZone}, {fieldFormat, want.stored.Format},
	} {
		if f.v == "" {
			unset = append(unset, bson.E{Key: f.field, Value: ""})
		} else {
			set = append(set, bson.E{Key: f.field, Value: f.v})
		}
	}
	inc := bson.D{{Key: fieldGen, Value: int64(1)}}
	var also []bson.D // more conditions on the document as read
	if v != nil {
		start := want.spec.Start(c.clock()).UnixMilli()
		if kept && cur.hasStart && cur.periodStart < start && !cur.hasNext {
			// Announce the clock's period first, as reservePeriodic does
			// after a miss: instances still in the stored one keep moving
			// its value, which the write that ends it keeps.
			announced, err := c.announce(ctx, name, cur, want, start)
			if err != nil || !announced {
				return err == nil, err // not announced: the document changed
			}
			cur.hasNext, cur.nextStart = true, start
		}
		vset, vunset, cond, forced, err := numberingValue(cur, exists, kept, want, start, v)
		if err != nil {
			return false, err
		}
		set, unset = append(set, vset...), append(unset, vunset...)
		if forced {
			inc = append(inc, bson.E{Key: fieldForced, Value: int64(1)})
		}
		if exists {
			also = append(also, equalOrAbsent(fieldNext, cur.nextStart))
			if cond != nil {
				also = append(also, cond)
			}
		}
	}
	if exists && !kept {
		for _, f := range []string{fieldPeriodStart, fieldNext, fieldPast} {
			if !slices.ContainsFunc(set, func(e bson.E) bool { return e.Key == f }) {
				unset = append(unset, bson.E{Key: f, Value: ""})
			}
		}
	}
	update := bson.D{{Key: "$inc", Value: inc}}
	if len(set) > 0 {
		update = append(update, bson.E{Key: "$set", Value: set})
	}
	var filter any
	opts := options.FindOneAndUpdate().SetReturnDocument(options.After)
	if exists {
		// The gen and mode as read: a concurrent SetMode to cached moves
		// the gen, and this write then reads again and refuses.
		// And the period as read: beginning one does not move the gen,
		// and a period begun since would be numbered from 1 again.
		begun := bson.D{{Key: fieldPeriodStart, Value: bson.D{{Key: "$exists", Value: false}}}}
		if cur.hasStart {
			begun = bson.D{{Key: fieldPeriodStart, Value: cur.periodStart}}
		}
		filter = counterFilter(name, math.MaxInt64, append(also, equalOrAbsent(fieldGen, cur.gen),
			absentOr(fieldMode, bson.D{{Key: "$eq", Value: string(seqd.ModeStrict)}}), begun)...)
		if len(unset) > 0 {
			update = append(update, bson.E{Key: "$unset", Value: unset})
		}
	} else {
		filter = bson.D{{Key: "_id", Value: name}, {Key: "$and", Value: bson.A{bson.D{{Key: fieldSeq, Value: bson.D{{Key: "$exists", Value: false}}}}}}}
		if v == nil {
			update = append(update, bson.E{Key: "$setOnInsert", Value: bson.D{{Key: fieldSeq, Value: int64(0)}}})
		}
		opts.SetUpsert(true)
	}
	doc, err := c.coll.FindOneAndUpdate(ctx, filter, update, opts).Raw()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments) || mongo.IsDuplicateKeyError(err):
		return true, nil // the document changed (or was created) since it was read
	case err != nil:
		return false, err
	}
	s, err := parseCounter(name, doc)
	if err != nil {
		return false, err
	}
	_, err = c.numbering.learn(name, s)
	return false, err
}

// numberingValue returns what a SetNumberingValue write sets and unsets to
// give name, read as cur (if it exists), the value v under the numbering
// want (kept: the period and zone stay, and the period stored with them),
// with the clock's period starting at start (ms); the condition on seq its
// write needs (nil for none); and whether it counts in forced: as Set does,
// the stored period's value or a plain one (not below the value stored,
// without force), else a period that begins at v (the clock's, or one
// announced if newer), over the stored one's last value as read.
func numberingValue(cur counterState, exists, kept bool, want *numbered, start int64, v *valueSet) (set, unset bson.D, cond bson.D, forced bool, err error) {
	backwards := func(at string) error {
		return fmt.Errorf("%w: at %d%s, asked for %d", ErrBackwards, cur.seq, at, v.value)
	}
	// notAbove keeps a value taken since the read from being moved back.
	notAbove := bson.D{{Key: fieldSeq, Value: bson.D{{Key: "$lte", Value: v.value}}}}
	if v.force {
		notAbove = nil
	}
	if want.spec.Unit == period.None {
		if !v.force && cur.seq > v.value {
			return nil, nil, nil, false, backwards("")
		}
		return bson.D{{Key: fieldSeq, Value: v.value}, {Key: fieldFloor, Value: v.value}}, nil, notAbove, v.force, nil
	}
	if kept && cur.hasStart && cur.periodStart >= start {
		if !v.force && cur.seq > v.value {
			return nil, nil, nil, false, backwards(" of period " + want.spec.Key(time.UnixMilli(cur.periodStart)))
		}
		return bson.D{{Key: fieldSeq, Value: v.value}}, nil, notAbove, v.force, nil
	}
	if kept && cur.hasStart {
		// The stored period ends at the value read (announced, so that
		// no value of it is taken after it).
		cond = bson.D{{Key: fieldSeq, Value: cur.seq}}
	}
	if !kept {
		cur = counterState{} // no period stored under want
	}
	set, unset = periodFields(cur, want, max(start, cur.nextStart), v.value)
	return set, unset, cond, true, nil
}
