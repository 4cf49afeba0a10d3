package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/seqd/seqd"
)

// The statuses the API's specification says each operation can answer, besides
// the 404 and 405 of a path or method that is no operation, and the 429 of every
// rate-limited (/oid, /uuid, /seq and /status) operation. checkContract holds every
// answer of the handler tests to the document.
var specStatuses = map[string][]string{
	"GET /oid":                 {"200", "400", "401"},
	"GET /oid/{hex}":           {"200", "400", "401"},
	"GET /oid/at/{time}":       {"200", "400", "401"},
	"GET /uuid":                {"200", "400", "401"},
	"GET /uuid/{uuid}":         {"200", "400", "401"},
	"GET /uuid/at/{time}":      {"200", "400", "401"},
	"GET /snowflake":           {"200", "400", "401", "409", "503"},
	"GET /snowflake/{id}":      {"200", "400", "401"},
	"GET /snowflake/at/{time}": {"200", "400", "401"},
	"GET /seq":                 {"200", "400", "401", "500", "503"},
	"GET /seq/{name}":          {"200", "400", "401", "403", "404", "500", "503"},
	"PUT /seq/{name}":          {"200", "400", "401", "403", "409", "413", "415", "500", "503"},
	"GET /seq/{name}/next":     {"200", "400", "401", "403", "409", "500", "503"},
	"POST /seq/{name}/next":    {"200", "400", "401", "403", "409", "500", "503"},
	"GET /seq/{name}/status":   {"200", "400", "401", "403", "404", "500", "503"},
	"GET /status":              {"200", "400", "401", "500", "503"},
	"GET /healthz":             {"200"},
	"HEAD /healthz":            {"200"},
	"GET /readyz":              {"200", "503"},
	"HEAD /readyz":             {"200", "503"},
	"GET /metrics":             {"200"},
	"GET /openapi.json":        {"200"},
}

type apiParameter struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
	Schema   struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
	} `json:"schema"`
}

type apiOperation struct {
	OperationID string                     `json:"operationId"`
	Parameters  []apiParameter             `json:"parameters"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Security    *[]map[string][]string     `json:"security"`
}

type apiDoc struct {
	OpenAPI    string                             `json:"openapi"`
	Paths      map[string]map[string]apiOperation `json:"paths"`
	Components struct {
		Parameters map[string]apiParameter `json:"parameters"`
	} `json:"components"`
}

var httpMethods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

// loadOpenAPI reads openapi.json as the server serves it.
func loadOpenAPI(t testing.TB) (apiDoc, []byte) {
	t.Helper()
	rec := newServer(t).get(t, "/openapi.json")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: status %d", rec.Code)
	}
	wantJSONContent(t, "GET /openapi.json", rec)
	var doc apiDoc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc, rec.Body.Bytes()
}

// operations lists the documented operations as "METHOD /path".
func (d apiDoc) operations(t testing.TB) map[string]apiOperation {
	t.Helper()
	ops := make(map[string]apiOperation)
	for path, methods := range d.Paths {
		for method, op := range methods {
			if !slices.Contains(httpMethods, method) {
				t.Errorf("openapi.json: %s has %q, which is not a method", path, method)
				continue
			}
			ops[strings.ToUpper(method)+" "+path] = op
		}
	}
	return ops
}

// resolve returns p, or the component parameter it refers to.
func (d apiDoc) resolve(t testing.TB, p apiParameter) apiParameter {
	t.Helper()
	if p.Ref == "" {
		return p
	}
	name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
	c, found := d.Components.Parameters[name]
	if !ok || !found {
		t.Fatalf("openapi.json: parameter $ref %q does not resolve", p.Ref)
	}
	return c
}

var echoParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// routes lists what Echo registered, as "METHOD /path" with {param} templates.
func routes(t testing.TB) []string {
	t.Helper()
	e, ok := newServer(t).handler.(*echo.Echo)
	if !ok {
		t.Fatalf("New returned %T, want *echo.Echo", newServer(t).handler)
	}
	var out []string
	for _, r := range e.Routes() {
		out = append(out, r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}"))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	ops := doc.operations(t)
	registered := routes(t)

	for _, r := range registered {
		if _, ok := ops[r]; !ok {
			t.Errorf("route %s is not in openapi.json", r)
		}
		if _, ok := specStatuses[r]; !ok {
			t.Errorf("route %s is not in the specification this test checks against", r)
		}
	}
	for op := range ops {
		if !slices.Contains(registered, op) {
			t.Errorf("openapi.json documents %s, which is not a route", op)
		}
	}
	for op := range specStatuses {
		if !slices.Contains(registered, op) {
			t.Errorf("the specification's %s is not a route", op)
		}
	}
}

func TestOpenAPIStatuses(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	ids := make(map[string]string)
	for name, op := range doc.operations(t) {
		// Client generators name their methods after operationId.
		if op.OperationID == "" {
			t.Errorf("openapi.json: %s has no operationId", name)
		} else if other, dup := ids[op.OperationID]; dup {
			t.Errorf("openapi.json: %s and %s share operationId %s", name, other, op.OperationID)
		}
		ids[op.OperationID] = name
		_, path, _ := strings.Cut(name, " ")
		want := specStatuses[name]
		if protected(path) {
			want = append(slices.Clone(want), "429")
		}
		for _, status := range want {
			if _, ok := op.Responses[status]; !ok {
				t.Errorf("openapi.json: %s does not list %s", name, status)
			}
		}
		// Open endpoints need no token; the others take one and may answer 401.
		_, lists401 := op.Responses["401"]
		if op.Security == nil {
			t.Errorf("openapi.json: %s: no security (public operations say security: [])", name)
		} else if needsToken := protected(path) || path == "/metrics"; needsToken != lists401 || needsToken != (len(*op.Security) > 0) {
			t.Errorf("openapi.json: %s: security %v, 401 listed %v; want both only on /oid, /uuid, /snowflake, /seq, /status and /metrics",
				name, op.Security, lists401)
		}
	}
}

// TestOpenAPIParameters checks each operation's parameters against its path and
// against the query parameters the handler accepts.
func TestOpenAPIParameters(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	s := newServer(t, withAdmin(adminToken))
	template := regexp.MustCompile(`\{([^}]+)\}`)
	for name, op := range doc.operations(t) {
		method, path, _ := strings.Cut(name, " ")
		var inPath []string
		for _, m := range template.FindAllStringSubmatch(path, -1) {
			inPath = append(inPath, m[1])
		}
		var declared []string
		for _, raw := range op.Parameters {
			p := doc.resolve(t, raw)
			switch p.In {
			case "path":
				declared = append(declared, p.Name)
				if !p.Required {
					t.Errorf("openapi.json: %s: path parameter %s is not required", name, p.Name)
				}
			case "query":
				if !protected(path) {
					continue
				}
				// The handler must take every documented query parameter.
				v := "1"
				switch {
				case len(p.Schema.Enum) > 0:
					v = p.Schema.Enum[0]
				case p.Schema.Type == "boolean":
					v = "true"
				}
				req := newRequest(method, concreteTarget(path)+"?"+p.Name+"="+v, `{"value":1}`,
					"Content-Type", "application/json", "Authorization", "Bearer "+adminToken)
				rec := s.serve(t, req)
				if rec.Code >= 400 {
					if e := decodeError(t, name, rec); e.Code == "unknown_parameter" || e.Code == "invalid_query" {
						t.Errorf("%s refuses its documented query parameter %s: %s", name, p.Name, e.Message)
					}
				}
			default:
				t.Errorf("openapi.json: %s: parameter %s in %q", name, p.Name, p.In)
			}
		}
		slices.Sort(inPath)
		slices.Sort(declared)
		if !slices.Equal(inPath, declared) {
			t.Errorf("openapi.json: %s declares path parameters %v, want %v", name, declared, inPath)
		}
	}
}

func protected(path string) bool {
	return strings.HasPrefix(path, "/oid") || strings.HasPrefix(path, "/uuid") || strings.HasPrefix(path, "/snowflake") || strings.HasPrefix(path, "/seq") || path == "/status"
}

// concreteTarget fills a path template with values the routes accept.
func concreteTarget(path string) string {
	return strings.NewReplacer(
		"{hex}", "5a17b9d9ab102555b9c38874",
		"{uuid}", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
		"{time}", "1800000000",
		"{id}", "119520048439119879",
		"{name}", "orders",
	).Replace(path)
}

// TestOpenAPIRefs checks that every $ref in the document resolves.
func TestOpenAPIRefs(t *testing.T) {
	_, raw := loadOpenAPI(t)
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if ref, ok := child.(string); ok && k == "$ref" {
					if _, err := pointer(root, ref); err != nil {
						t.Errorf("openapi.json %s: $ref %q: %v", at, ref, err)
					}
					continue
				}
				walk(child, at+"/"+k)
			}
		case []any:
			for i, child := range v {
				walk(child, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(root, "#")
}

// pointer resolves a local JSON pointer reference ("#/a/b").
func pointer(root any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("not a local reference")
	}
	v := root
	for _, part := range strings.Split(rest, "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not in an object", part)
		}
		if v, ok = m[part]; !ok {
			return nil, fmt.Errorf("no %q", part)
		}
	}
	return v, nil
}

// TestOpenAPIServed checks that /openapi.json serves the file in the repository.
func TestOpenAPIServed(t *testing.T) {
	doc, served := loadOpenAPI(t)
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, file) {
		t.Error("GET /openapi.json differs from openapi.json")
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
}

// modeGuarantees are what the specification must say of the modes, word for word.
var modeGuarantees = []string{
	"strict: every value from a write; linearizable across instances; gapless while writes succeed.",
	"cached: unique across all instances and clients; strictly increasing per instance (an answer that starts after another answer of the same instance returned is larger); a crash loses at most the unused rest of the blocks that instance held; no order across instances.",
	"An instance serves a cached sequence from its blocks only while its lease lasts (--block-lease, SEQD_BLOCK_LEASE, default 15s",
	"A switch from cached to strict drains: no instance fetches or serves a block once it has seen it, and no value is handed out until every lease has run out",
	"Exception everywhere: a forced Set that moves a sequence back hands values out again",
}

// schemaDoc is the part of openapi.json TestOpenAPISchemas reads.
type schemaDoc struct {
	Components struct {
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
	Paths map[string]map[string]struct {
		RequestBody struct {
			Content map[string]struct {
				Schema schema `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	} `json:"paths"`
}

type schema struct {
	Description string                     `json:"description"`
	Enum        []string                   `json:"enum"`
	Required    []string                   `json:"required"`
	Properties  map[string]json.RawMessage `json:"properties"`
}

func (s schema) names() []string {
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// keys lists the keys of a JSON object, sorted.
func keys(t testing.TB, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestOpenAPISchemas checks the schemas of sequences, their block counts and
// status against answers that have every field, the PUT body's fields, and that
// the modes' guarantees are stated as they are.
func TestOpenAPISchemas(t *testing.T) {
	_, raw := loadOpenAPI(t)
	var doc schemaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas

	s := newServer(t)
	// Every field of a Sequence at once, strict_from too (shown only while draining).
	s.counter.StoreSequence(seqd.Sequence{Name: "orders", Value: 5000, Mode: seqd.ModeCached, MinBlock: 10, MaxBlock: 2000,
		Blocks: seqd.BlockCounts{Reserved: 5000, Served: 10, Returned: 1}, StrictFrom: time.UnixMilli(1_795_000_000_000),
		Period: "month", TimeZone: "Europe/Berlin", Format: "INV-{yyyy}{MM}-{seq}", PeriodKey: "2026-11"})
	st := cachedStatus
	st.LastError = "backend unavailable"
	s.counter.SetBlockStatus("orders", st)

	var seq struct{ Blocks json.RawMessage }
	seqBody := s.get(t, "/seq/orders").Body.Bytes()
	if err := json.Unmarshal(seqBody, &seq); err != nil {
		t.Fatal(err)
	}
	var status struct{ Current json.RawMessage }
	statusBody := s.get(t, "/seq/orders/status").Body.Bytes()
	if err := json.Unmarshal(statusBody, &status); err != nil {
		t.Fatal(err)
	}
	var list struct{ Sequences []json.RawMessage }
	if err := json.Unmarshal(s.get(t, "/seq").Body.Bytes(), &list); err != nil || len(list.Sequences) != 1 {
		t.Fatalf("GET /seq: %v", err)
	}
	for _, c := range []struct {
		schema string
		answer []byte
	}{
		{"Sequence", seqBody},
		{"BlockCounts", seq.Blocks},
		{"SequenceStatus", statusBody},
		{"Block", status.Current},
	} {
		if got, want := schemas[c.schema].names(), keys(t, c.answer); !slices.Equal(got, want) {
			t.Errorf("openapi.json: schema %s has properties %v; the answer %s has %v", c.schema, got, c.answer, want)
		}
	}
	// A listed sequence is a sequence, or its name and an error.
	if got, want := schemas["Sequence"].names(), keys(t, list.Sequences[0]); !slices.Equal(got, want) {
		t.Errorf("openapi.json: Sequence has properties %v; a listed sequence %v", got, want)
	}
	if got := schemas["ListedError"].names(); !slices.Equal(got, []string{"error", "name"}) {
		t.Errorf("openapi.json: ListedError has properties %v, want error and name", got)
	}

	body := doc.Paths["/seq/{name}"]["put"].RequestBody.Content["application/json"].Schema
	if got := body.names(); !slices.Equal(got, []string{"format", "max_block", "min_block", "mode", "period", "time_zone", "value"}) {
		t.Errorf("openapi.json: the PUT body has properties %v", got)
	}
	if len(body.Required) != 0 {
		t.Errorf("openapi.json: the PUT body requires %v; any one field will do", body.Required)
	}

	mode := schemas["Mode"]
	if !slices.Equal(mode.Enum, []string{"strict", "cached"}) {
		t.Errorf("openapi.json: Mode is one of %v, want strict and cached", mode.Enum)
	}
	for _, g := range modeGuarantees {
		if !strings.Contains(mode.Description, g) {
			t.Errorf("openapi.json: the Mode description does not say %q", g)
		}
	}
}
