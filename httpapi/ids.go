package httpapi

import (
	"net/http"
	"slices"
	"sync"

	"github.com/labstack/echo/v4"
)

// The routes that hand out ids in the process, GET /oid, /uuid and /snowflake,
// share one shape: ?count=N or none, one fill of the ids, and an answer written
// by hand ({"oid":…} or {"oids":[…]}), with no reflection on the hottest paths
// of the service. What differs is the id kind's names, its fill and how one id
// is written.

// idScratch is what an answer is built in: the ids and their JSON, 40 KB for
// 1,000 ObjectIds, which would otherwise become garbage at once. JSONBlob has
// copied the JSON out by the time the handler returns.
type idScratch[T any] struct {
	ids  []T
	json []byte
}

// idKind is one kind of id as its route answers it.
type idKind[T any] struct {
	one, many string // the answer's field: {"<one>":…} without count, {"<many>":[…]} with it
	maxJSON   int    // the most bytes one id takes in the answer, its comma included
	scratch   sync.Pool
}

func newIDKind[T any](one, many string, maxJSON int) *idKind[T] {
	k := &idKind[T]{one: one, many: many, maxJSON: maxJSON}
	k.scratch.New = func() any { return new(idScratch[T]) }
	return k
}

// answer makes n ids with fill (n = 0: one, answered as {"<one>":…}) and
// writes them, each with appendJSON.
func (k *idKind[T]) answer(c echo.Context, n int64, fill func([]T) error, appendJSON func([]byte, T) []byte) error {
	s := k.scratch.Get().(*idScratch[T])
	defer k.scratch.Put(s)
	ids := slices.Grow(s.ids[:0], int(max(n, 1)))[:max(n, 1)]
	s.ids = ids // keep the grown slice for the next request
	if err := fill(ids); err != nil {
		return err
	}
	buf := slices.Grow(s.json[:0], len(`{"":[]}`)+len(k.many)+len(ids)*k.maxJSON+1)
	s.json = buf
	buf = append(buf, `{"`...)
	if n == 0 {
		buf = append(buf, k.one...)
		buf = append(buf, `":`...)
	} else {
		buf = append(buf, k.many...)
		buf = append(buf, `":[`...)
	}
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSON(buf, id)
	}
	if n != 0 {
		buf = append(buf, ']')
	}
	buf = append(buf, "}\n"...)
	return c.JSONBlob(http.StatusOK, buf)
}

// decodeArgs reads what every decode and range route takes: the query, of the
// allowed parameters only, and the path parameter name, unescaped; a malformed
// escape is a 400 with code, about what.
func decodeArgs(c echo.Context, name, code, what string, allowed ...string) (string, map[string]string, error) {
	q, err := query(c, allowed...)
	if err != nil {
		return "", nil, err
	}
	s, ok := pathParam(c, name)
	if !ok {
		return "", nil, errorf(code, "malformed escape in %s", what)
	}
	return s, q, nil
}
