package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// The contract: every request the handler tests serve (server.serve, so the
// 100,000 random requests too) is checked against openapi.json with kin-openapi's
// openapi3filter, request and answer:
//
//   - a request the document routes to no operation gets an error (404, 405) or
//     OPTIONS' 204, never a value;
//   - a request the document says is invalid is refused (4xx/5xx), never answered 2xx;
//   - the answer's status is one the operation declares, with its declared
//     headers (Retry-After, WWW-Authenticate, …) and no header it does not declare
//     but Content-Type and Content-Length, and its body matches the declared schema,
//     with every object closed: a field the document does not name fails, although
//     the document itself leaves objects open for clients (a new field is not a
//     breaking change). Error codes are enums per status, so an undeclared code
//     fails too.
//
// kin-openapi rather than pb33f/libopenapi-validator: it is the validator the Go
// OpenAPI tools build on (oapi-codegen's middleware), it validates a request and a
// response given as values, without a server, in a few µs, and its document model
// can be edited in the test (closing the schemas, a server at "/").

// contract is openapi.json, loaded once.
type contract struct {
	doc *openapi3.T
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	// The status page and the metrics are text, checked as strings.
	for _, mt := range []string{"text/html", "application/openmetrics-text"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not valid OpenAPI: %w", err)
	}
	closed := make(map[*openapi3.Schema]bool)
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				for _, mt := range r.Value.Content {
					closeObjects(mt.Schema, closed)
				}
			}
		}
	}
	return &contract{doc: doc}, nil
})

// closeObjects makes every object schema under s with named properties refuse
// other properties, unless it says what they may be.
func closeObjects(s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if s == nil || s.Value == nil || seen[s.Value] {
		return
	}
	v := s.Value
	seen[v] = true
	if len(v.Properties) > 0 && v.AdditionalProperties.Has == nil && v.AdditionalProperties.Schema == nil {
		no := false
		v.AdditionalProperties.Has = &no
	}
	for _, p := range v.Properties {
		closeObjects(p, seen)
	}
	closeObjects(v.Items, seen)
	for _, list := range []openapi3.SchemaRefs{v.OneOf, v.AnyOf, v.AllOf} {
		for _, x := range list {
			closeObjects(x, seen)
		}
	}
}

// implicitHeaders are the headers an answer may carry without the document
// declaring them: OpenAPI describes Content-Type in content, net/http sets
// Content-Length, and Connection is the connection's, not the answer's (RFC 9110
// 7.6.1: close after a request whose body no handler reads).
var implicitHeaders = map[string]bool{"content-type": true, "content-length": true, "connection": true}

// checkContract validates req, whose body was body, and rec, its answer, against
// openapi.json.
func (s *server) checkContract(t testing.TB, req *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if s.skipContract {
		return
	}
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	what := func() string { // only for a failure: a URL's String costs what a check does
		w := req.Method + " " + req.URL.String()
		if len(w) > 200 {
			w = w[:200] + "…"
		}
		return w
	}
	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	route, params := s.route(c.doc, req)
	if route == nil {
		if rec.Code < 400 && !(req.Method == http.MethodOptions && rec.Code == http.StatusNoContent) {
			t.Errorf("contract: %s: no operation in openapi.json, but seqd answered %d", what(), rec.Code)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{
		Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && rec.Code < 300 && !lenientRequest(req, err) {
		t.Errorf("contract: %s: openapi.json says the request is invalid, but seqd answered %d: %v", what(), rec.Code, oneLine(err))
	}
	if rec.Code == 499 {
		return // client_closed_request: for the log; no client reads it
	}
	resp := route.Operation.Responses.Status(rec.Code)
	if resp == nil || resp.Value == nil {
		t.Errorf("contract: %s: status %d is not declared in openapi.json (body %.200s)", what(), rec.Code, rec.Body)
		return
	}
	declared := make(map[string]bool, len(resp.Value.Headers))
	for name := range resp.Value.Headers {
		declared[strings.ToLower(name)] = true
	}
	for name := range rec.Header() {
		if n := strings.ToLower(name); !declared[n] && !implicitHeaders[n] {
			t.Errorf("contract: %s: status %d carries header %s, which openapi.json does not declare", what(), rec.Code, name)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(rec.Body.Bytes())
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("contract: %s: status %d: the answer does not match openapi.json: %v\nbody: %.300s", what(), rec.Code, oneLine(err), rec.Body)
	}
}

// lenientRequest reports whether seqd may accept req although the document
// calls it invalid, for what OpenAPI cannot say:
//   - a PUT body without Content-Type is read as JSON; OpenAPI cannot declare
//     a body without a type.
func lenientRequest(req *http.Request, err error) bool {
	return req.Method == http.MethodPut && req.Header.Get("Content-Type") == "" &&
		strings.Contains(err.Error(), "Content-Type")
}

// route finds the operation of req as the server does: with Echo's router, whose
// route TestOpenAPIMatchesRoutes keeps in step with the document's paths. (kin's
// routers match the document's templates by regular expressions on the escaped
// path: 60% of the random test's time, on its 70,000-byte paths, and they take
// paths Echo does not.) It returns nil for a request no operation serves.
func (s *server) route(doc *openapi3.T, req *http.Request) (*routers.Route, map[string]string) {
	e, ok := s.handler.(*echo.Echo)
	if !ok {
		return nil, nil
	}
	c := e.NewContext(req, nil)
	e.Router().Find(req.Method, echo.GetPath(req), c)
	path := echoParam.ReplaceAllString(c.Path(), "{$1}")
	item := doc.Paths.Value(path)
	if item == nil {
		return nil, nil
	}
	op := item.GetOperation(req.Method)
	if op == nil {
		return nil, nil
	}
	params := make(map[string]string)
	for i, name := range c.ParamNames() {
		v := c.ParamValues()[i]
		if req.URL.RawPath != "" { // as the handlers' pathParam reads them
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
		}
		params[name] = v
	}
	return &routers.Route{Spec: doc, Path: path, PathItem: item, Method: req.Method, Operation: op}, params
}

func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " | ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// readBody takes req's body out, for the contract check, and puts an equal one back.
func readBody(t testing.TB, req *http.Request) []byte {
	t.Helper()
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	var rest io.Reader = bytes.NewReader(b)
	if err != nil { // a body shorter than its Content-Length: the handler meets the same error
		rest = io.MultiReader(rest, iotest.ErrReader(err))
	}
	req.Body = io.NopCloser(rest)
	return b
}
