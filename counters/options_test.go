package counters

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

func resolve(t *testing.T, b *options.CollectionOptionsBuilder) options.CollectionOptions {
	t.Helper()
	var o options.CollectionOptions
	for _, set := range b.List() {
		if err := set(&o); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// TestReadsPinnedToPrimary: whatever the client's readPreference, the strategies'
// collections read from the primary, and the reads that only show a value use
// read concern majority.
func TestReadsPinnedToPrimary(t *testing.T) {
	opts := Options{}.withDefaults()
	for what, b := range map[string]*options.CollectionOptionsBuilder{
		"collectionOptions": opts.collectionOptions(),
		"peekOptions":       opts.peekOptions(),
	} {
		o := resolve(t, b)
		if o.ReadPreference == nil || o.ReadPreference.Mode() != readpref.PrimaryMode {
			t.Errorf("%s: read preference %v, want primary", what, o.ReadPreference)
		}
		if o.WriteConcern == nil || o.WriteConcern.W != "majority" {
			t.Errorf("%s: write concern %+v, want majority", what, o.WriteConcern)
		}
	}
	if o := resolve(t, opts.peekOptions()); o.ReadConcern == nil || o.ReadConcern.Level != "majority" {
		t.Errorf("peekOptions: read concern %+v, want majority", o.ReadConcern)
	}
	if o := resolve(t, opts.collectionOptions()); o.ReadConcern != nil {
		t.Errorf("collectionOptions: read concern %+v, want the server's default (local on the primary sees the latest write)", o.ReadConcern)
	}
}
