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

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// prepareSelectClause returns SELECT clause for default column of provided table name.
//
// For capped collection with onlyRecordIDs, it returns select clause for recordID column.
//
// For capped collection, it returns select clause for recordID column and default column.
func prepareSelectClause(table, comment string, capped, onlyRecordIDs bool) string {
	if comment != "" {
		comment = strings.ReplaceAll(comment, "/*", "/ *")
		comment = strings.ReplaceAll(comment, "*/", "* /")
		comment = `/* ` + comment + ` */`
	}

	if capped && onlyRecordIDs {
		return fmt.Sprintf(`SELECT %s %s FROM %q`, comment, metadata.RecordIDColumn, table)
	}

	if capped {
		return fmt.Sprintf(`SELECT %s %s, %s FROM %q`, comment, metadata.RecordIDColumn, metadata.DefaultColumn, table)
	}

	return fmt.Sprintf(`SELECT %s %s FROM %q`, comment, metadata.DefaultColumn, table)
}

// prepareOrderByClause returns ORDER BY clause for given sort document.
//
// The provided sort document should be already validated.
// Provided document should only contain a single value.
func prepareOrderByClause(sort *types.Document) string {
	if sort.Len() != 1 {
		return ""
	}

	v := must.NotFail(sort.Get("$natural"))
	var order string

	switch v.(int64) {
	case 1:
		// Ascending order
	case -1:
		order = " DESC"
	default:
		panic("not reachable")
	}

	return fmt.Sprintf(" ORDER BY %s%s", metadata.RecordIDColumn, order)
}

// seqd change: prepareWhereClause replaces the condition that Query and Explain
// each had, which pushed a filter down only when it was exactly
// {_id: <string or ObjectId>}. Any other filter read and decoded every document of
// the collection, so a findAndModify on one document cost time in proportion to the
// collection's size.

// prepareWhereClause returns the WHERE clause and its arguments for the given filter,
// and whether that clause applies the whole filter.
//
// The clause selects the document whose _id equals a string or ObjectId that the
// filter requires: the value of its top-level _id field, or of one in a document of
// a top-level $and (each, recursively). Every document the filter matches satisfies
// the clause (_id is never an array, so equality is the only way to match), and
// the handler applies the whole filter to what the query returns, as the
// backends.Collection.Query contract requires, so the answer is the same as without
// the clause. An _id of another type is not pushed down: {_id: 1} also matches 1.0
// and int64(1), which are stored differently.
func prepareWhereClause(filter *types.Document) (string, []any, bool) {
	id, ok := requiredID(filter)
	if !ok {
		return "", nil, false
	}

	arg := string(must.NotFail(sjson.MarshalSingleValue(id)))

	return fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn), []any{arg}, filter.Len() == 1 && filter.Has("_id")
}

// requiredID returns the string or ObjectId that filter requires _id to equal, if any,
// as prepareWhereClause describes.
func requiredID(filter *types.Document) (any, bool) {
	values := filter.Values()

	for i, key := range filter.Keys() {
		switch key {
		case "_id":
			switch v := values[i].(type) {
			case string, types.ObjectID:
				return v, true
			}

		case "$and":
			conditions, _ := values[i].(*types.Array)

			for j := range conditions.Len() {
				condition, _ := must.NotFail(conditions.Get(j)).(*types.Document)
				if id, ok := requiredID(condition); ok {
					return id, true
				}
			}
		}
	}

	return nil, false
}
