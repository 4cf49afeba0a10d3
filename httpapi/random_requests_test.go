package httpapi_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestHandlerRandomRequests serves SEQD_FUZZ_REQUESTS (default 100,000) random and
// malformed requests, from seed SEQD_FUZZ_SEED (default 1), and checks every answer
// as FuzzHandler does: in particular, no 5xx but a backend fault's. About 2% of the
// requests meet a backend fault. Four workers share the requests, each with a
// server of its own that sees its requests in order, as one seqd would, so that the
// counts depend on the seed alone. They are logged (go test -v).
func TestHandlerRandomRequests(t *testing.T) {
	total, seed := envUint(t, "SEQD_FUZZ_REQUESTS", 100_000), envUint(t, "SEQD_FUZZ_SEED", 1)
	const workers = 4
	type counts struct {
		classes                          [6]int // answers without a fault, by status/100
		refused, withFault, withFault5xx int
	}
	results := make([]counts, workers)
	var wg sync.WaitGroup
	for w := range workers {
		s := newServer(t, withoutLogs, withTokens(clientToken, clientToken2), withAdmin(adminToken))
		wg.Go(func() {
			g := &requestGen{r: rand.New(rand.NewPCG(seed, uint64(w)))}
			c := &results[w]
			for i := w; i < int(total); i += workers {
				switch got, rec := s.serveInput(t, g.request()); got {
				case unparsed:
					c.refused++
				case faulted:
					c.withFault++
					if rec.Code >= 500 {
						c.withFault5xx++
					}
				default:
					c.classes[min(rec.Code/100, 5)]++
				}
				if t.Failed() { // here or in another worker
					t.Logf("worker %d stopped after request %d; SEQD_FUZZ_SEED=%d repeats the run", w, i, seed)
					return
				}
			}
		})
	}
	wg.Wait()
	var sum counts
	for _, c := range results {
		for i, n := range c.classes {
			sum.classes[i] += n
		}
		sum.refused += c.refused
		sum.withFault += c.withFault
		sum.withFault5xx += c.withFault5xx
	}
	t.Logf("%d random requests (seed %d): 2xx=%d, 4xx=%d, 5xx=%d, other=%d; "+
		"%d met a backend fault (%d answered 5xx); %d refused by net/http's parser",
		total, seed, sum.classes[2], sum.classes[4], sum.classes[5], sum.classes[1]+sum.classes[3],
		sum.withFault, sum.withFault5xx, sum.refused)
	if answered := sum.classes[2] + sum.classes[4]; answered < int(total)/2 && !t.Failed() {
		t.Errorf("only %d of %d requests reached the handler without a fault", answered, total)
	}
}

func envUint(t *testing.T, key string, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("%s=%q: want a positive integer", key, s)
	}
	return n
}

// requestGen makes the random requests: API calls with every part mutated (method,
// path, query, token, content type, body, a header). They depend only on the seed.
type requestGen struct {
	r *rand.Rand
}

func (g *requestGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *requestGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

type weighted struct {
	weight int
	s      string
}

// weightedPick picks one of list, each as likely as its weight.
func (g *requestGen) weightedPick(list []weighted) string {
	total := 0
	for _, w := range list {
		total += w.weight
	}
	n := g.r.IntN(total)
	for _, w := range list {
		if n < w.weight {
			return w.s
		}
		n -= w.weight
	}
	panic("unreachable")
}

func (g *requestGen) request() handlerInput {
	in := handlerInput{method: g.weightedPick(randomMethods)}
	in.target = g.target(in.method)
	if g.chance(0.85) {
		in.auth = g.authorization()
	}
	if g.chance(0.2) {
		h := randomHeaders[g.r.IntN(len(randomHeaders))]
		in.header = h.name + ": " + g.pick(h.values)
	}
	in.body = g.body(in.method)
	if (in.body != nil && g.chance(0.7)) || g.chance(0.05) {
		in.contentType = g.pick(randomContentTypes)
	}
	if g.chance(0.02) {
		in.fault = byte(1 + g.r.IntN(len(backendFaults)-1))
	}
	return in
}

var randomMethods = []weighted{
	{500, "GET"}, {120, "POST"}, {120, "PUT"}, {30, "DELETE"}, {30, "PATCH"}, {40, "HEAD"},
	{30, "OPTIONS"}, {20, "TRACE"}, {5, "CONNECT"}, {5, "PROPFIND"}, {5, "get"}, {5, "GETT"},
	{3, "X"}, {2, strings.Repeat("M", 300)}, {3, "GET@"}, {3, "G\xc3\x89T"}, {2, ""},
}

// target is a path, mutated now and then, and maybe a query.
func (g *requestGen) target(method string) string {
	var path string
	switch {
	case method == "PUT" && g.chance(0.6):
		path = "/seq/" + g.name()
	case method == "POST" && g.chance(0.6):
		path = "/seq/" + g.name() + "/next"
	default:
		path = g.expand(g.weightedPick(randomPaths))
	}
	path = g.mutatePath(path)
	if g.chance(0.55) {
		return path + "?" + g.query()
	}
	if g.chance(0.01) {
		return path + "?"
	}
	return path
}

// randomPaths are the API's paths, and some that are not.
var randomPaths = []weighted{
	{120, "/oid"}, {40, "/oid/{hex}"}, {40, "/oid/at/{time}"}, {10, "/seq"}, {40, "/seq/{name}"},
	{150, "/seq/{name}/next"}, {10, "/healthz"}, {10, "/readyz"}, {1, "/metrics"}, {2, "/openapi.json"},
	{5, "/"}, {10, "/{odd}"}, {10, "/seq/{name}/{odd}"}, {5, "/seq/{name}/next/{odd}"}, {5, "/oid/at"},
	{5, "/seq/"}, {5, "/oid/"}, {5, "/oid/{odd}"}, {5, "/oid/at/{odd}"}, {3, "/seq/{name}/next/"},
	{20, "/seq/{name}/status"}, {5, "/status"}, {2, "/status/{odd}"}, {2, "/seq/{name}/status/"},
}

// expand fills in the {placeholders} of a randomPaths template.
func (g *requestGen) expand(tmpl string) string {
	var b strings.Builder
	for {
		before, rest, ok := strings.Cut(tmpl, "{")
		b.WriteString(before)
		if !ok {
			return b.String()
		}
		var placeholder string
		placeholder, tmpl, _ = strings.Cut(rest, "}")
		switch placeholder {
		case "name":
			b.WriteString(g.name())
		case "hex":
			b.WriteString(g.hex())
		case "time":
			b.WriteString(g.idTime())
		case "odd":
			b.WriteString(g.odd())
		}
	}
}

// name is a valid name, or something odd.
func (g *requestGen) name() string {
	if g.chance(0.4) {
		return g.pick([]string{"fz-a", "fz-b", "fz-c"})
	}
	return g.odd()
}

// odd is a path segment that is not a valid name: escapes good and bad, dots,
// slashes, Unicode, control bytes, very long runs.
func (g *requestGen) odd() string {
	if g.chance(0.1) {
		return g.pick(randomLongSegments)
	}
	return g.pick(randomOddSegments)
}

var randomLongSegments = func() []string {
	var segs []string
	for _, n := range []int{65, 255, 1000, 4000, 8000, 70000} {
		for _, unit := range []string{"a", "%41", "%00", "é", "."} {
			segs = append(segs, strings.Repeat(unit, n))
		}
	}
	return segs
}()

var randomOddSegments = []string{
	"", ".", "..", "...", "%2e", "%2E%2E", "%00", "a%00b", "%2F", "a%2Fb", "%2f..%2f", "%ZZ", "%",
	"%1", "%%", "%C3%A9", "%E2%82%AC", "%FF", "%C0%AF", "%u0041", "é", "日本", "😀", "a b", "a+b", "a;b",
	"a,b", "a:b", "@", "~user", "*", "-x", "_x", "x!", "a%20b", "a\tb", "a\x7fb", "\xff\xfe", "\x00",
	"%0d%0aX-Injected:%201", "a\r\nb", "?", "#frag", "a#b", "%3F", "%23", "{name}", "$(id)", "'", "\"", "<", "\\",
	"%5C", "con", "NUL", "-", "a%", "a%2", "%zz", "%2", "%C3", "%F0%9F", "%EF%BF%BF", "%ED%A0%80",
}

func (g *requestGen) hex() string {
	switch n := g.r.IntN(24); {
	case n < 12:
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		s := fmt.Sprintf("%x", b)
		if n < 3 {
			s = strings.ToUpper(s)
		}
		return s
	case n == 12:
		return g.odd()
	}
	return g.pick(randomBadHex)
}

var randomBadHex = []string{
	"5a17b9d9ab102555b9c3887", "5a17b9d9ab102555b9c388745", "5a17b9d9ab102555b9c3887g",
	"000000000000000000000000", "ffffffffffffffffffffffff", "0x5a17b9d9ab102555b9c388",
	"5a17b9d9ab102555b9c38874%00", "5A17B9D9AB102555B9C38874", strings.Repeat("f", 1000),
	"ＡＢ", "5a17b9d9ab102555b9c3887%67",
}

func (g *requestGen) idTime() string {
	switch g.r.IntN(7) {
	case 0:
		return strconv.FormatInt(g.r.Int64N(1<<33)-1<<31, 10)
	case 1:
		return strconv.FormatInt(g.r.Int64N(1<<32), 10)
	case 2:
		return g.odd()
	}
	return g.pick(randomTimes)
}

var randomTimes = []string{
	"2012-12-11T16:00:00.75Z", "2024-05-01T12:00:00+14:00", "1970-01-01T00:00:00Z",
	"2106-02-07T06:28:15Z", "2106-02-07T06:28:16Z", "1969-12-31T23:59:59Z", "9999-12-31T23:59:59Z",
	"0000-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-05-01 12:00:00", "2024-05-01T12:00:00",
	"4294967295", "4294967296", "-1", "0", "", "1e9", "18446744073709551616", "0x10",
	"2024-05-01T12:00:00.123456789123Z", "yesterday", "2024-05-01T12:00:00%2B02:00",
}

// mutatePath damages a path now and then: doubled or dotted slashes, a trailing
// slash, case, an escaped or a raw odd byte.
func (g *requestGen) mutatePath(p string) string {
	if g.chance(0.04) {
		p = "/" + p
	}
	if g.chance(0.04) && len(p) > 1 {
		i := 1 + g.r.IntN(len(p)-1)
		p = p[:i] + g.pick([]string{"/", "/./", "/../", "//", "/%2e/", "/%2e%2e/"}) + p[i:]
	}
	if g.chance(0.04) {
		p += "/"
	}
	if g.chance(0.02) {
		p = strings.ToUpper(p)
	}
	if g.chance(0.03) && len(p) > 1 {
		i := 1 + g.r.IntN(len(p)-1)
		p = p[:i] + fmt.Sprintf("%%%02X", p[i]) + p[i+1:]
	}
	if g.chance(0.02) && len(p) > 1 {
		i := 1 + g.r.IntN(len(p)-1)
		p = p[:i] + string(rune(g.r.IntN(256))) + p[i:]
	}
	if g.chance(0.01) {
		p = strings.TrimPrefix(p, "/")
	}
	return p
}

// query is a query string: known parameters with good and bad values, unknown and
// repeated ones, broken escapes and separators.
func (g *requestGen) query() string {
	if g.chance(0.08) {
		return g.pick(randomOddQueries)
	}
	var parts []string
	for range 1 + g.r.IntN(3) {
		key := g.weightedPick(randomQueryKeys)
		parts = append(parts, key+"="+g.queryValue(key))
		if g.chance(0.05) {
			parts = append(parts, key+"="+g.queryValue(key)) // repeated
		}
	}
	return strings.Join(parts, "&")
}

var randomOddQueries = []string{
	"%zz", "=", "&&", "count", "count==1", "?", "a;b=c", "%", "count=1;count=2", "count=%31",
	strings.Repeat("a=1&", 500), "count=1&&count", "&count=2", "count=2&", "count=%", "count=1%00",
	"count=1#frag", "%63ount=2", "count%5B%5D=1", "count=1+1", "count=\xff", "count= 1",
}

var randomQueryKeys = []weighted{
	{50, "count"}, {25, "strategy"}, {15, "layout"}, {10, "force"}, {2, "cuont"}, {2, "COUNT"},
	{1, "count[]"}, {1, ""}, {1, "x"}, {1, "count%00"}, {1, "strategy%20"}, {1, "%E2%80%8Bcount"},
}

func (g *requestGen) queryValue(key string) string {
	switch key {
	case "count":
		if g.chance(0.5) {
			return strconv.Itoa(1 + g.r.IntN(20))
		}
		return g.pick(randomCounts)
	case "strategy":
		return g.pick([]string{"counter", "counter", "optimistic", "optimistic", "COUNTER", "magic", "",
			"optimistic%00", "counter%20", "%E2%80%8Bcounter", "counter,optimistic"})
	case "layout":
		return g.pick([]string{"spec", "legacy", "bogus", "", "SPEC", "legacy%00", "spec;legacy"})
	case "force":
		return g.pick([]string{"true", "false", "1", "0", "yes", "TRUE", "t", "", "2", "truee"})
	}
	return g.pick(randomCounts)
}

var randomCounts = []string{
	"1", "2", "100", "1000", "10000", "10001", "1000000", "1000001", "0", "-1", "-0", "+5", "01",
	"1e3", "0x10", "1.5", "%201", "%2B1", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"99999999999999999999999999", "NaN", "", "%EF%BC%91", strings.Repeat("9", 1000), "1%00", "١",
}

// authorization is a token most of the time, in forms right and wrong.
func (g *requestGen) authorization() string {
	switch n := g.r.IntN(100); {
	case n < 50:
		return "Bearer " + clientToken
	case n < 65:
		return "Bearer " + adminToken
	case n < 75:
		return "Bearer wrong-token"
	}
	return g.pick(randomBadAuthorizations)
}

var randomBadAuthorizations = []string{
	"Bearer ", "Bearer", "bearer " + clientToken, "BEARER " + adminToken, "Bearer  " + clientToken,
	"Basic dXNlcjpwYXNz", clientToken, "Bearer " + clientToken + " ", "Bearer " + strings.Repeat("x", 8000),
	"Bearer " + clientToken + "\x00", "Bearer é", "Bearer " + clientToken + "," + adminToken,
	"Bearer " + adminToken[:len(adminToken)-1], "Token " + clientToken,
}

// randomHeaders are headers seqd does not read, or reads and must survive: proxy
// headers, conditionals, framing headers with odd values, names and values that
// are not tokens, very long values.
var randomHeaders = []struct {
	name   string
	values []string
}{
	{"X-Forwarded-For", []string{"1.2.3.4", "1.2.3.4, 5.6.7.8", "not-an-ip", "::1", "[::1]:80", "", strings.Repeat("1.", 3000)}},
	{"X-Real-Ip", []string{"256.1.1.1", "::ffff:1.2.3.4", "x", "\xff"}},
	{"X-Request-Id", []string{"abc", strings.Repeat("r", 5000), "é", "", "../../etc/passwd", "a\nb"}},
	{"Accept", []string{"*/*", "application/xml", "text/html;q=0.9", ";;;", "application/json;q=x"}},
	{"Accept-Encoding", []string{"gzip, br", "*", "identity;q=0", "zstd"}},
	{"Content-Encoding", []string{"gzip", "deflate", "xyz"}},
	{"Cookie", []string{"a=b; c; =d; " + strings.Repeat("e", 100)}},
	{"Expect", []string{"100-continue", "junk", "100-CONTINUE"}},
	{"Range", []string{"bytes=0-1", "bytes=-1", "items=0-"}},
	{"If-None-Match", []string{"*", `"x"`}},
	{"If-Modified-Since", []string{"Thu, 01 Jan 1970 00:00:00 GMT", "junk"}},
	{"Origin", []string{"http://evil.example", "null"}},
	{"Upgrade", []string{"websocket", "h2c", "TLS/1.0"}},
	{"Connection", []string{"close", "keep-alive", "Upgrade", "X-Request-Id", "TE"}},
	{"Transfer-Encoding", []string{"chunked", "gzip", "identity", "chunked, chunked"}},
	{"Content-Length", []string{"-1", "0", "999999999999999999999", "abc", "1,1", "+0"}},
	{"Host", []string{"", "evil.example", "a b", "[::1", "h:99999", strings.Repeat("h", 300)}},
	{"X-HTTP-Method-Override", []string{"PUT", "DELETE"}},
	{"Max-Forwards", []string{"0"}},
	{"Te", []string{"trailers", "gzip"}},
	{"Forwarded", []string{`for="_gazonk"; by=[::1]`}},
	{"X-~!#$%&'*+-.^_`|", []string{"token-chars"}},
	{"x-lower-case", []string{"v"}},
	{"X-Ünï", []string{"not a token name"}},
	{"X Space", []string{"name with a space"}},
	{"X-Ctl", []string{"a\x01b"}},
	{"X-Tab", []string{"\ta\t"}},
	{"X-Big", []string{strings.Repeat("b", 100), strings.Repeat("b", 10000), strings.Repeat("b", 100000)}},
}

// body is {"value":N} right and wrong, a mode and its bounds right and wrong,
// JSON that is not that, or a body over the 4 KiB limit.
func (g *requestGen) body(method string) []byte {
	p := 0.03
	switch method {
	case "PUT":
		p = 0.85
	case "POST", "PATCH":
		p = 0.3
	}
	if !g.chance(p) {
		return nil
	}
	switch n := g.r.IntN(100); {
	case n < 35:
		return []byte(`{"value":` + g.pick(randomValues) + `}`)
	case n < 45:
		return []byte(`{"value":` + strconv.FormatInt(g.r.Int64N(1_000_000), 10) + `}`)
	case n < 52:
		return g.modeBody()
	case n < 55:
		return randomBodiesAtLimit[g.r.IntN(len(randomBodiesAtLimit))]
	case n < 60:
		b := make([]byte, []int{100, 4097, 20000, 65536}[g.r.IntN(4)])
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return b
	}
	return []byte(g.pick(randomBodies))
}

// modeBody is a PUT body with a mode, its bounds, a value, in any order, each
// right or wrong, now and then given twice or left out.
func (g *requestGen) modeBody() []byte {
	var fields []string
	if g.chance(0.8) {
		fields = append(fields, `"mode":`+g.pick(randomModes))
	}
	if g.chance(0.4) {
		fields = append(fields, `"min_block":`+g.pick(randomBounds), `"max_block":`+g.pick(randomBounds))
	}
	if g.chance(0.1) {
		fields = fields[:max(0, len(fields)-1)] // a bound alone, or none
	}
	if g.chance(0.3) {
		fields = append(fields, `"value":`+g.pick(randomValues))
	}
	if g.chance(0.05) && len(fields) > 0 {
		fields = append(fields, fields[0]) // a field twice
	}
	g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return []byte("{" + strings.Join(fields, ",") + "}")
}

var randomModes = []string{
	`"cached"`, `"cached"`, `"strict"`, `"strict"`, `"CACHED"`, `"Strict"`, `""`, `"optimistic"`, `null`, `1`,
	`true`, `[]`, `{}`, `"cached "`, `"\u0063ached"`, `"cach\u0000ed"`, `"` + strings.Repeat("c", 3000) + `"`,
}

var randomBounds = []string{
	"0", "1", "10", "100", "1000", "1000000", "1000001", "-1", "1.5", "1e3", `"10"`, "null",
	"9223372036854775807", "9223372036854775808", "01", "[]",
}

// randomBodiesAtLimit are {"value":1} padded to 4095, 4096 and 4097 bytes: just
// under, at and just over the limit.
var randomBodiesAtLimit = func() [][]byte {
	var bodies [][]byte
	for size := 4095; size <= 4097; size++ {
		bodies = append(bodies, append([]byte(`{"value":1}`), bytes.Repeat([]byte(" "), size-len(`{"value":1}`))...))
	}
	return bodies
}()

var randomValues = []string{
	"0", "1", "42", "9223372036854775807", "9223372036854775806", "9223372036854775808", "-1",
	"-9223372036854775808", "1.5", "1e3", "1E400", `"7"`, "null", "true", "[]", "{}", "007", "-0",
	"0x10", strings.Repeat("1", 5000), "1 ", " 1", `{"$inc":1}`, "NaN", "Infinity", "1_000",
}

var randomBodies = []string{
	`{"Value":1}`, `{"value":1,"x":2}`, `{"value":1,"value":2}`, `{"value":1}{}`, `{"value":1}]`,
	`{"value":1} x`, `{`, ``, `null`, `[]`, `"str"`, "{\"value\":1,\"\xff\":1}", "\xef\xbb\xbf{\"value\":1}",
	strings.Repeat("[", 3000), strings.Repeat(`{"a":`, 800), `{"value":1}` + "\x00", "value=1",
	`{"value":1,}`, `{'value':1}`, `{"value":01}`, `{"value":1e0}`, `{"value" 1}`, `{"value":1`,
	"\n\n{\"value\":3}\n\n", `{"\u0076alue":5}`, `{"value":"\ud800"}`, `[{"value":1}]`,
	`{"mode":"cached"}`, `{"mode":"cached","mode":"strict"}`, `{"Mode":"cached"}`, `{"mode":"cached",}`,
	`{"mode":"cached"} {}`, `{"min_block":1,"max_block":2}`, `{"mode":"cached","min_block":5}`,
	`{"mode":"cached","min_block":5,"max_block":4}`, `{"mode":"cached","block":1}`, `{"mode"`, `{}`,
}

var randomContentTypes = []string{
	"application/json", "application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
	"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
	"application/json;;", "application/json; charset", ";", "application/json, text/plain", "*/*",
	"application/jsonx", strings.Repeat("a", 2000), "application/json; charset=\"unterminated",
	"application/merge-patch+json",
}
