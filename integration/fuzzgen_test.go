//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The request generator of TestHTTPFuzz: API calls with every part mutated (method,
// path, query, tokens, content type, body, headers), and requests whose framing is
// broken, written as raw bytes.

const (
	fuzzClientToken = "fuzz-client-token"
	fuzzAdminToken  = "fuzz-admin-token"
)

// fuzzRequest is one request. Either raw holds the bytes to write as they are, or
// the other fields describe a request that the sender frames itself.
type fuzzRequest struct {
	method string
	target string      // the request-target, exactly as sent
	header [][2]string // in order; a name may repeat
	body   []byte
	raw    []byte
}

// fuzzer makes the requests of one worker. They depend only on the seed and the
// worker's number.
type fuzzer struct {
	r       *rand.Rand
	names   []string   // valid sequence names of the worker's own
	framing [][][]byte // brokenFraming for each name
}

func newFuzzer(seed uint64, worker int) *fuzzer {
	f := &fuzzer{r: rand.New(rand.NewPCG(seed, uint64(worker)))}
	// Names of its own, so that no two workers write one optimistic sequence at once
	// (that is contention, a legitimate 503, not what this test looks for).
	for i := range 3 {
		f.names = append(f.names, fmt.Sprintf("fz%d-%c", worker, 'a'+i))
		f.framing = append(f.framing, brokenFraming(f.names[i]))
	}
	return f
}

func (f *fuzzer) chance(p float64) bool { return f.r.Float64() < p }

func (f *fuzzer) pick(list []string) string { return list[f.r.IntN(len(list))] }

// weighted picks one of list, each as likely as its weight.
func (f *fuzzer) weighted(list []weightedString) string {
	total := 0
	for _, w := range list {
		total += w.weight
	}
	n := f.r.IntN(total)
	for _, w := range list {
		if n < w.weight {
			return w.s
		}
		n -= w.weight
	}
	panic("unreachable")
}

type weightedString struct {
	weight int
	s      string
}

func (f *fuzzer) request() fuzzRequest {
	if f.chance(0.06) {
		raw := f.badFraming()
		method, _, _ := bytes.Cut(raw, []byte(" "))
		return fuzzRequest{method: string(method), raw: raw}
	}
	req := fuzzRequest{method: f.weighted(fuzzMethods)}
	req.target = f.target(req.method)
	req.header = f.headers()
	req.body = f.body(req.method)
	if req.body != nil && f.chance(0.7) {
		req.header = append(req.header, [2]string{"Content-Type", f.pick(fuzzContentTypes)})
	} else if f.chance(0.05) {
		req.header = append(req.header, [2]string{"Content-Type", f.pick(fuzzContentTypes)})
	}
	return req
}

var fuzzMethods = []weightedString{
	{500, "GET"}, {120, "POST"}, {120, "PUT"}, {30, "DELETE"}, {30, "PATCH"}, {40, "HEAD"},
	{30, "OPTIONS"}, {20, "TRACE"}, {5, "CONNECT"}, {5, "PROPFIND"}, {5, "get"}, {5, "GETT"},
	{3, "X"}, {2, strings.Repeat("M", 300)}, {3, "GET@"}, {3, "G\xc3\x89T"}, {2, ""}, {2, "GET /"},
}

// target is a path, mutated now and then, and maybe a query.
func (f *fuzzer) target(method string) string {
	var path string
	switch {
	case method == "PUT" && f.chance(0.6):
		path = "/seq/" + f.name()
	case method == "POST" && f.chance(0.6):
		path = "/seq/" + f.name() + "/next"
	default:
		path = f.expand(f.weighted(fuzzPaths))
	}
	path = f.mutatePath(path)
	if f.chance(0.55) {
		return path + "?" + f.query()
	}
	if f.chance(0.01) {
		return path + "?"
	}
	return path
}

// expand fills in the {placeholders} of a fuzzPaths template.
func (f *fuzzer) expand(tmpl string) string {
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
			b.WriteString(f.name())
		case "hex":
			b.WriteString(f.hex())
		case "time":
			b.WriteString(f.idTime())
		case "odd":
			b.WriteString(f.odd())
		}
	}
}

// fuzzPaths are the API's paths, and some that are not.
var fuzzPaths = []weightedString{
	{120, "/oid"}, {40, "/oid/{hex}"}, {40, "/oid/at/{time}"}, {10, "/seq"}, {40, "/seq/{name}"},
	{150, "/seq/{name}/next"}, {10, "/healthz"}, {10, "/readyz"}, {1, "/metrics"}, {2, "/openapi.json"},
	{5, "/"}, {10, "/{odd}"}, {10, "/seq/{name}/{odd}"}, {5, "/seq/{name}/next/{odd}"}, {5, "/oid/at"},
	{5, "/seq/"}, {5, "/oid/"}, {5, "/oid/{odd}"}, {5, "/oid/at/{odd}"}, {3, "/seq/{name}/next/"},
}

// name is a valid name of the worker's own, or something odd. Few requests with a
// valid name, token and parameters reach the backend, which is slower than the rest.
func (f *fuzzer) name() string {
	if f.chance(0.4) {
		return f.pick(f.names)
	}
	return f.odd()
}

// odd is a path segment that is not a valid name: escapes good and bad, dots,
// slashes, Unicode, control bytes, very long runs.
func (f *fuzzer) odd() string {
	if f.chance(0.1) {
		return f.pick(fuzzLongSegments)
	}
	return f.pick(fuzzOddSegments)
}

var fuzzLongSegments = func() []string {
	var segs []string
	for _, n := range []int{65, 255, 1000, 4000, 8000, 70000} {
		for _, unit := range []string{"a", "%41", "%00", "é", "."} {
			segs = append(segs, strings.Repeat(unit, n))
		}
	}
	return segs
}()

var fuzzOddSegments = []string{
	"", ".", "..", "...", "%2e", "%2E%2E", "%00", "a%00b", "%2F", "a%2Fb", "%2f..%2f", "%ZZ", "%",
	"%1", "%%", "%C3%A9", "%E2%82%AC", "%FF", "%C0%AF", "%u0041", "é", "日本", "😀", "a b", "a+b", "a;b",
	"a,b", "a:b", "@", "~user", "*", "-x", "_x", "x!", "a%20b", "a\tb", "a\x7fb", "\xff\xfe", "\x00",
	"%0d%0aX-Injected:%201", "a\r\nb", "?", "#frag", "a#b", "%3F", "%23", "{name}", "$(id)", "'", "\"", "<", "\\",
	"%5C", "con", "NUL", "-", "a%", "a%2", "%zz", "%2", "%C3", "%F0%9F", "%EF%BF%BF", "%ED%A0%80",
}

func (f *fuzzer) hex() string {
	switch n := f.r.IntN(24); {
	case n < 12:
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte(f.r.IntN(256))
		}
		s := fmt.Sprintf("%x", b)
		if n < 3 {
			s = strings.ToUpper(s)
		}
		return s
	case n == 12:
		return f.odd()
	}
	return f.pick(fuzzBadHex)
}

var fuzzBadHex = []string{
	"5a17b9d9ab102555b9c3887", "5a17b9d9ab102555b9c388745", "5a17b9d9ab102555b9c3887g",
	"000000000000000000000000", "ffffffffffffffffffffffff", "0x5a17b9d9ab102555b9c388",
	"5a17b9d9ab102555b9c38874%00", "5A17B9D9AB102555B9C38874", strings.Repeat("f", 1000),
	"ＡＢ", "5a17b9d9ab102555b9c3887%67",
}

func (f *fuzzer) idTime() string {
	switch f.r.IntN(7) {
	case 0:
		return strconv.FormatInt(f.r.Int64N(1<<33)-1<<31, 10)
	case 1:
		return strconv.FormatInt(f.r.Int64N(1<<32), 10)
	case 2:
		return f.odd()
	}
	return f.pick(fuzzTimes)
}

var fuzzTimes = []string{
	"2012-12-11T16:00:00.75Z", "2024-05-01T12:00:00+14:00", "1970-01-01T00:00:00Z",
	"2106-02-07T06:28:15Z", "2106-02-07T06:28:16Z", "1969-12-31T23:59:59Z", "9999-12-31T23:59:59Z",
	"0000-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-05-01 12:00:00", "2024-05-01T12:00:00",
	"4294967295", "4294967296", "-1", "0", "", "1e9", "18446744073709551616", "0x10",
	"2024-05-01T12:00:00.123456789123Z", "yesterday", "2024-05-01T12:00:00%2B02:00",
}

// mutatePath damages a path now and then: doubled or dotted slashes, a trailing
// slash, case, an escaped or a raw odd byte.
func (f *fuzzer) mutatePath(p string) string {
	if f.chance(0.04) {
		p = "/" + p
	}
	if f.chance(0.04) && len(p) > 1 {
		i := 1 + f.r.IntN(len(p)-1)
		p = p[:i] + f.pick([]string{"/", "/./", "/../", "//", "/%2e/", "/%2e%2e/"}) + p[i:]
	}
	if f.chance(0.04) {
		p += "/"
	}
	if f.chance(0.02) {
		p = strings.ToUpper(p)
	}
	if f.chance(0.03) && len(p) > 1 {
		i := 1 + f.r.IntN(len(p)-1)
		p = p[:i] + fmt.Sprintf("%%%02X", p[i]) + p[i+1:]
	}
	if f.chance(0.02) && len(p) > 1 {
		i := 1 + f.r.IntN(len(p)-1)
		p = p[:i] + string(rune(f.r.IntN(256))) + p[i:]
	}
	if f.chance(0.01) {
		p = strings.TrimPrefix(p, "/")
	}
	return p
}

// query is a query string: known parameters with good and bad values, unknown and
// repeated ones, broken escapes and separators.
func (f *fuzzer) query() string {
	if f.chance(0.08) {
		return f.pick([]string{
			"%zz", "=", "&&", "count", "count==1", "?", "a;b=c", "%", "count=1;count=2", "count=%31",
			strings.Repeat("a=1&", 500), "count=1&&count", "&count=2", "count=2&", "count=%", "count=1%00",
			"count=1#frag", "%63ount=2", "count%5B%5D=1", "count=1+1", "count=\xff", "count= 1",
		})
	}
	var parts []string
	for range 1 + f.r.IntN(3) {
		key := f.weighted(fuzzQueryKeys)
		parts = append(parts, key+"="+f.queryValue(key))
		if f.chance(0.05) {
			parts = append(parts, key+"="+f.queryValue(key)) // repeated
		}
	}
	return strings.Join(parts, "&")
}

var fuzzQueryKeys = []weightedString{
	{50, "count"}, {25, "strategy"}, {15, "layout"}, {10, "force"}, {2, "cuont"}, {2, "COUNT"},
	{1, "count[]"}, {1, ""}, {1, "x"}, {1, "count%00"}, {1, "strategy%20"}, {1, "%E2%80%8Bcount"},
}

func (f *fuzzer) queryValue(key string) string {
	switch key {
	case "count":
		if f.chance(0.5) {
			return strconv.Itoa(1 + f.r.IntN(20))
		}
		return f.pick(fuzzCounts)
	case "strategy":
		return f.pick([]string{"counter", "counter", "optimistic", "optimistic", "COUNTER", "magic", "",
			"optimistic%00", "counter%20", "%E2%80%8Bcounter", "counter,optimistic"})
	case "layout":
		return f.pick([]string{"spec", "legacy", "bogus", "", "SPEC", "legacy%00", "spec;legacy"})
	case "force":
		return f.pick([]string{"true", "false", "1", "0", "yes", "TRUE", "t", "", "2", "truee"})
	}
	return f.pick(fuzzCounts)
}

var fuzzCounts = []string{
	"1", "2", "100", "1000", "10000", "10001", "1000000", "1000001", "0", "-1", "-0", "+5", "01",
	"1e3", "0x10", "1.5", "%201", "%2B1", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "18446744073709551616",
	"99999999999999999999999999", "NaN", "", "%EF%BC%91", strings.Repeat("9", 1000), "1%00", "١",
}

// headers: a token most of the time, in forms right and wrong, and junk now and then.
func (f *fuzzer) headers() [][2]string {
	var h [][2]string
	if f.chance(0.85) {
		h = append(h, [2]string{"Authorization", f.authorization()})
		if f.chance(0.03) {
			h = append(h, [2]string{"Authorization", f.authorization()})
		}
	}
	if f.chance(0.2) {
		for range 1 + f.r.IntN(4) {
			h = append(h, f.junkHeader())
		}
	}
	if f.chance(0.005) {
		h = append(h, fuzzManyHeaders[:100+f.r.IntN(200)]...)
	}
	return h
}

var fuzzManyHeaders = func() [][2]string {
	h := make([][2]string, 300)
	for i := range h {
		h[i] = [2]string{fmt.Sprintf("X-Junk-%d", i), strings.Repeat("j", i%100)}
	}
	return h
}()

func (f *fuzzer) authorization() string {
	switch n := f.r.IntN(100); {
	case n < 50:
		return "Bearer " + fuzzClientToken
	case n < 65:
		return "Bearer " + fuzzAdminToken
	case n < 75:
		return "Bearer wrong-token"
	}
	return f.pick(fuzzBadAuthorizations)
}

var fuzzBadAuthorizations = []string{
	"Bearer ", "Bearer", "bearer " + fuzzClientToken, "BEARER " + fuzzAdminToken, "Bearer  " + fuzzClientToken,
	"Basic dXNlcjpwYXNz", fuzzClientToken, "Bearer " + fuzzClientToken + " ", "Bearer " + strings.Repeat("x", 8000),
	"Bearer " + fuzzClientToken + "\x00", "Bearer é", "Bearer " + fuzzClientToken + "," + fuzzAdminToken,
	"Bearer " + fuzzAdminToken[:len(fuzzAdminToken)-1], "Token " + fuzzClientToken, "",
}

// junkHeader is a header that seqd does not read, or reads and must survive: proxy
// headers, conditionals, framing headers with odd values, names and values that
// are not tokens, very long values.
func (f *fuzzer) junkHeader() [2]string {
	h := fuzzJunkHeaders[f.r.IntN(len(fuzzJunkHeaders))]
	return [2]string{h.name, f.pick(h.values)}
}

var fuzzJunkHeaders = []struct {
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

// body: {"value":N} right and wrong, JSON that is not that, and bodies over the 4 KiB
// limit.
func (f *fuzzer) body(method string) []byte {
	p := 0.03
	switch method {
	case "PUT":
		p = 0.85
	case "POST", "PATCH":
		p = 0.3
	}
	if !f.chance(p) {
		return nil
	}
	switch n := f.r.IntN(100); {
	case n < 35:
		return []byte(`{"value":` + f.pick(fuzzValues) + `}`)
	case n < 45:
		return []byte(`{"value":` + strconv.FormatInt(f.r.Int64N(1_000_000), 10) + `}`)
	case n < 55:
		return fuzzBodiesAtLimit[f.r.IntN(len(fuzzBodiesAtLimit))]
	case n < 60:
		b := make([]byte, []int{100, 4097, 20000, 65536}[f.r.IntN(4)])
		for i := 0; i < len(b); i += 8 {
			v := f.r.Uint64()
			for j := i; j < min(i+8, len(b)); j++ {
				b[j], v = byte(v), v>>8
			}
		}
		return b
	}
	return []byte(f.pick(fuzzBodies))
}

// fuzzBodiesAtLimit are {"value":1} padded to 4095, 4096 and 4097 bytes: just
// under, at and just over the limit.
var fuzzBodiesAtLimit = func() [][]byte {
	var bodies [][]byte
	for size := 4095; size <= 4097; size++ {
		b := append([]byte(`{"value":1}`), bytes.Repeat([]byte(" "), size-len(`{"value":1}`))...)
		bodies = append(bodies, b)
	}
	return bodies
}()

var fuzzValues = []string{
	"0", "1", "42", "9223372036854775807", "9223372036854775806", "9223372036854775808", "-1",
	"-9223372036854775808", "1.5", "1e3", "1E400", `"7"`, "null", "true", "[]", "{}", "007", "-0",
	"0x10", strings.Repeat("1", 5000), "1 ", " 1", `{"$inc":1}`, "NaN", "Infinity", "1_000",
}

var fuzzBodies = []string{
	`{"Value":1}`, `{"value":1,"x":2}`, `{"value":1,"value":2}`, `{"value":1}{}`, `{"value":1}]`,
	`{"value":1} x`, `{`, ``, `null`, `[]`, `"str"`, "{\"value\":1,\"\xff\":1}", "\xef\xbb\xbf{\"value\":1}",
	strings.Repeat("[", 3000), strings.Repeat(`{"a":`, 800), `{"value":1}` + "\x00", "value=1",
	`{"value":1,}`, `{'value':1}`, `{"value":01}`, `{"value":1e0}`, `{"value" 1}`, `{"value":1`,
	"\n\n{\"value\":3}\n\n", `{"\u0076alue":5}`, `{"value":"\ud800"}`, `[{"value":1}]`,
}

var fuzzContentTypes = []string{
	"application/json", "application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
	"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
	"application/json;;", "application/json; charset", "", ";", "application/json, text/plain", "*/*",
	"application/jsonx", strings.Repeat("a", 2000), "application/json; charset=\"unterminated",
	"application/merge-patch+json",
}

// badFraming is a request whose framing is broken: request lines, versions,
// header syntax, lengths and chunking that a well-behaved client never sends.
func (f *fuzzer) badFraming() []byte {
	switch f.r.IntN(10) {
	case 0: // oversized header block: net/http's 431
		if f.chance(0.1) {
			return fuzzOversizedHeader
		}
	case 1: // a very long request line, still within the limit
		return fuzzLongRequestLine
	}
	list := f.framing[f.r.IntN(len(f.framing))]
	return list[f.r.IntN(len(list))]
}

var (
	fuzzOversizedHeader = []byte("GET /oid HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", 1<<20+8192) + "\r\n\r\n")
	fuzzLongRequestLine = []byte("GET /seq/" + strings.Repeat("n", 60000) + "/next HTTP/1.1\r\nHost: h\r\n" +
		"Authorization: Bearer " + fuzzClientToken + "\r\n\r\n")
)

// brokenFraming lists the requests of badFraming that name the sequence name.
func brokenFraming(name string) [][]byte {
	auth := "Authorization: Bearer " + fuzzClientToken + "\r\n"
	admin := "Authorization: Bearer " + fuzzAdminToken + "\r\n"
	list := []string{
		"GET\r\n\r\n",
		"GET /oid\r\n\r\n",
		"GET /oid HTTP/1.1 extra\r\nHost: h\r\n\r\n",
		"GET /oid HTTP/9.9\r\nHost: h\r\n\r\n",
		"GET /oid HTTP/2.0\r\nHost: h\r\n\r\n",
		"GET /oid HTTP/1.0\r\n" + auth + "\r\n",
		"GET /oid HTTP/1.0\r\n\r\n",
		"GET /oid HTTP/1.1\r\n" + auth + "\r\n",
		"GET /oid HTTP/1.1\r\nHost: a\r\nHost: b\r\n" + auth + "\r\n",
		"GET /oid HTTP/1.1\r\nHost: bad host\r\n" + auth + "\r\n",
		"\x00\x01\x02\x03\r\n\r\n",
		"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",
		"GET /oid HTTP/1.1\nHost: h\n" + strings.TrimSuffix(auth, "\r\n") + "\n\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n" + auth + "\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\n: empty\r\n\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nX-Nul: a\x00b\r\n" + auth + "\r\n",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n" + auth + "\r\n",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n" + auth + "\r\nab",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n" + auth + "\r\n",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n" + auth + "\r\n0\r\n\r\n",
		"PUT /seq/" + name + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n" + admin + "\r\nzz\r\n{\"value\":1}\r\n0\r\n\r\n",
		"PUT /seq/" + name + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n" + admin + "\r\nb\r\n{\"value\":1}\r\n0\r\n\r\n",
		"PUT /seq/" + name + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n" + admin + "\r\n1001\r\n" + strings.Repeat(" ", 4097) + "\r\n0\r\n\r\n",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n" + auth + "\r\n",
		"POST /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n" + auth + "\r\n0\r\n\r\n",
		"GET http://evil.example/oid HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET * HTTP/1.1\r\nHost: h\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"PUT /seq/" + name + " HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 11\r\n" + admin + "\r\n{\"value\":1}",
		"GET /oid HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n" + auth + "\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"get /oid HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /oid HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET\t/oid\tHTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /seq/\xc3\xa9/next HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET /seq/\xff\xfe/next HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET /seq/a b/next HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET /oid?count=\x01 HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " + fuzzClientToken + "\x7f\r\n\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n" + auth + "\r\n5\r\nhello\r\n0\r\n\r\n",
		"GET  /oid  HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /oid HTTP/1.1\r\n Host: h\r\n\r\n",
		"GET /oid http/1.1\r\nHost: h\r\n\r\n",
		"GET /oid HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n\r\n\r\n",
		"\r\n\r\nGET /oid HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
		"HEAD /seq/" + name + "/next HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n",
	}
	out := make([][]byte, len(list))
	for i, s := range list {
		out[i] = []byte(s)
	}
	return out
}
