package sqlite

// seqd change: this file is new: the transaction of database.InTransaction,
// which Query, InsertAll and UpdateAll join when their context carries it.

import (
	"context"
	"database/sql"

	"github.com/FerretDB/FerretDB/internal/util/fsql"
)

// txKey is the context key of an openTx.
type txKey struct{}

// openTx is a transaction InTransaction opened on db.
type openTx struct {
	db *fsql.DB
	tx *fsql.Tx
}

// txFor returns the transaction that ctx carries on db, or nil.
func txFor(ctx context.Context, db *fsql.DB) *fsql.Tx {
	if t, ok := ctx.Value(txKey{}).(*openTx); ok && t.db == db {
		return t.tx
	}

	return nil
}

// querier is what Query and the writes need of a *fsql.DB or a *fsql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*fsql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// querierFor returns the transaction that ctx carries on db, or else db.
func querierFor(ctx context.Context, db *fsql.DB) querier {
	if tx := txFor(ctx, db); tx != nil {
		return tx
	}

	return db
}

// inTransaction runs f in the transaction that ctx carries on db, or else in
// a transaction of its own, committed when f returns nil.
func inTransaction(ctx context.Context, db *fsql.DB, f func(*fsql.Tx) error) error {
	if tx := txFor(ctx, db); tx != nil {
		return f(tx)
	}

	return db.InTransaction(ctx, f)
}

// InTransaction implements backends.Database interface.
//
// Its transaction begins with SQLite's BEGIN IMMEDIATE (main.go's _txlock): it
// holds the database's write lock from the start, so a write after a read in
// it never finds that another connection wrote in between (SQLITE_BUSY_SNAPSHOT).
func (db *database) InTransaction(ctx context.Context, f func(ctx context.Context) error) error {
	d := db.r.DatabaseGetExisting(ctx, db.name)
	if d == nil || txFor(ctx, d) != nil {
		return f(ctx)
	}

	return d.InTransaction(ctx, func(tx *fsql.Tx) error {
		return f(context.WithValue(ctx, txKey{}, &openTx{db: d, tx: tx}))
	})
}
