// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package handler

import (
	"context"
	"errors"
	"fmt"

	"github.com/FerretDB/wire"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/handler/common"
	"github.com/FerretDB/FerretDB/internal/handler/handlererrors"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// MsgUpdate implements `update` command.
//
// The passed context is canceled when the client connection is closed.
func (h *Handler) MsgUpdate(connCtx context.Context, msg *wire.OpMsg) (*wire.OpMsg, error) {
	document, err := opMsgDocument(msg)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	params, err := common.GetUpdateParams(document, h.L)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	matched, modified, upserted, writeErrors, err := h.updateDocument(connCtx, params)
	if err != nil {
		return nil, handleUpdateError(params.DB, params.Collection, "update", err)
	}

	res := must.NotFail(types.NewDocument(
		"n", matched,
	))

	if upserted.Len() != 0 {
		res.Set("upserted", upserted)
	}

	res.Set("nModified", modified)

	// seqd change: each statement's write error at its own index, beside the
	// counts of the statements that ran (see updateDocument).
	if len(writeErrors) > 0 {
		array := types.MakeArray(len(writeErrors))
		for _, we := range writeErrors {
			array.Append(WriteErrorDocument(we))
		}

		res.Set("writeErrors", array)
	}

	res.Set("ok", float64(1))

	return documentOpMsg(
		res,
	)
}

// updateDocument iterate through all documents in collection and update them.
func (h *Handler) updateDocument(ctx context.Context, params *common.UpdateParams) (int32, int32, *types.Array, []*WriteError, error) {
	var matched, modified int32
	var upserted types.Array

	db, err := h.b.Database(params.DB)
	if err != nil {
		if backends.ErrorCodeIs(err, backends.ErrorCodeDatabaseNameIsInvalid) {
			msg := fmt.Sprintf("Invalid namespace specified '%s.%s'", params.DB, params.Collection)
			return 0, 0, nil, nil, handlererrors.NewCommandErrorMsgWithArgument(handlererrors.ErrInvalidNamespace, msg, "update")
		}

		return 0, 0, nil, nil, lazyerrors.Error(err)
	}

	err = db.CreateCollection(ctx, &backends.CreateCollectionParams{Name: params.Collection})

	switch {
	case err == nil:
		// nothing
	case backends.ErrorCodeIs(err, backends.ErrorCodeCollectionAlreadyExists):
		// nothing
	case backends.ErrorCodeIs(err, backends.ErrorCodeCollectionNameIsInvalid):
		msg := fmt.Sprintf("Invalid collection name: %s", params.Collection)
		return 0, 0, nil, nil, handlererrors.NewCommandErrorMsgWithArgument(handlererrors.ErrInvalidNamespace, msg, "insert")
	default:
		return 0, 0, nil, nil, lazyerrors.Error(err)
	}

	// seqd change: all the statements run in one transaction
	// (backends.Database.InTransaction), not one each: an update of 50
	// statements made 50 commits, each writing the log. And a statement's
	// write error is reported as mongod reports it (mongodb/specifications,
	// source/server_write_commands/server_write_commands.md: ordered, default
	// true; n; writeErrors with the item's index; "Mixed failures"), at the
	// statement's index, beside the counts of the statements that ran: an ordered command stops
	// at it, an unordered one runs the others (FerretDB stopped either way and
	// answered the error alone, at index 0, with no counts, though the
	// statements before it were applied). The statements that ran stay
	// applied (the transaction is committed). An error that is not a
	// statement's (a command error) is the answer, as FerretDB's.
	var stmtErr error
	var writeErrors []*WriteError

	err = db.InTransaction(ctx, func(ctx context.Context) error {
		for i, u := range params.Updates {
			err := h.updateStatement(ctx, db, params.Collection, &u, int32(i), &matched, &modified, &upserted)
			if err == nil {
				continue
			}

			var we *handlererrors.WriteErrors
			if !errors.As(handleUpdateError(params.DB, params.Collection, "update", err), &we) {
				stmtErr = err
				return nil
			}

			code, msg := we.First()
			writeErrors = append(writeErrors, &WriteError{Index: i, Code: int(code), Message: msg})

			if params.Ordered {
				return nil
			}
		}

		return nil
	})

	switch {
	case stmtErr != nil:
		return 0, 0, nil, nil, stmtErr
	case err != nil:
		return 0, 0, nil, nil, lazyerrors.Error(err)
	}

	return matched, modified, &upserted, writeErrors, nil
}

// updateStatement runs one statement of an update command, adding to the
// command's counts.
//
// seqd change: the loop's body of updateDocument, moved here to run in its
// transaction. The statement's query is read to its end and closed before the
// first write: the query and the writes share the transaction's connection,
// and SQLite leaves undefined what a query still being read sees of writes to
// its table. The query sees what it saw before, the state before the
// statement's writes.
func (h *Handler) updateStatement(ctx context.Context, db backends.Database, collection string, u *common.Update, index int32, matched, modified *int32, upserted *types.Array) error {
	c, err := db.Collection(collection)
	if err != nil {
		if backends.ErrorCodeIs(err, backends.ErrorCodeCollectionNameIsInvalid) {
			msg := fmt.Sprintf("Invalid collection name: %s", collection)
			return handlererrors.NewCommandErrorMsgWithArgument(handlererrors.ErrInvalidNamespace, msg, "insert")
		}

		return lazyerrors.Error(err)
	}

	var qp backends.QueryParams
	if !h.DisablePushdown {
		qp.Filter = u.Filter
	}

	res, err := c.Query(ctx, &qp)
	if err != nil {
		return lazyerrors.Error(err)
	}

	closer := iterator.NewMultiCloser(res.Iter)
	iter := common.FilterIterator(res.Iter, closer, u.Filter)

	if !u.Multi {
		iter = common.LimitIterator(iter, closer, 1)
	}

	docs, err := iterator.ConsumeValues(iter)
	closer.Close()

	if err != nil {
		return lazyerrors.Error(err)
	}

	matches := iterator.Values(iterator.ForSlice(docs))
	defer matches.Close()

	result, err := common.UpdateDocument(ctx, c, "update", matches, u)
	if err != nil {
		return lazyerrors.Error(err)
	}

	*matched += result.Matched.Count
	*modified += result.Modified.Count

	if result.Upserted.Doc != nil {
		doc := result.Upserted.Doc
		upserted.Append(must.NotFail(types.NewDocument(
			"index", index, // seqd change: the statement's index, not the count of upserts before it
			"_id", must.NotFail(doc.Get("_id")),
		)))

		// in case of upsert, MongoDB sets the matched count to 1
		*matched++
	}

	return nil
}
