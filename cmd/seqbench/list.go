package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/seqd/seqd/internal/proc"
	"github.com/seqd/seqd/internal/stats"
)

// The shape of the paged-listing figure: the sequences in the store, the pages timed, and the walk.
const (
	listSequences = 100_000
	listDB        = "seqbench_list" // a database of its own: the other figures' stay small
	listRounds    = 3               // each page timed this many times on each side, alternating
	listPage      = 100
	listWalkPage  = 1000
	listMaxGrowth = 20 << 20 // seqd's resident memory may grow this much over the walk
)

// listName is the i-th sequence of the paged-listing figure, as tenants' sequences are named.
func listName(i int) string { return fmt.Sprintf("tenant%05d.orders", i) }

// listQuery is one page of the paged-listing figure: GET /seq with q, and the driver's find with
// the filter, sort, limit and projection that counters.Counter.List sends for it
// (counters/list.go: listQuery), written out here so that the anchor is the
// query a reader sees.
type listQuery struct {
	what   string
	q      url.Values
	filter bson.D
	want   []string // the page's names
	next   string   // and its next: "" when the page ends the list or the prefix
}

// listFields is the projection of Counter.List: the fields of a counter document.
var listFields = func() bson.D {
	var p bson.D
	for _, f := range []string{"seq", "mode", "minBlock", "maxBlock", "reserved", "served", "returned", "gen", "leaseMs", "floor", "strictFrom"} {
		p = append(p, bson.E{Key: f, Value: 1})
	}
	return p
}()

func listQueries(names []string) []listQuery {
	mid := len(names) / 2
	prefix := strings.TrimSuffix(listName(4200), "00.orders")             // tenant042: tenant04200 to tenant04299
	end := prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1)) // above every name with the prefix
	return []listQuery{
		{"first page", url.Values{}, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: ""}}}},
			names[:listPage], names[listPage-1]},
		{"middle page (after=" + names[mid-1] + ")", url.Values{"after": {names[mid-1]}},
			bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: names[mid-1]}}}},
			names[mid : mid+listPage], names[mid+listPage-1]},
		{"prefix page (prefix=" + prefix + ")", url.Values{"prefix": {prefix}},
			bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: prefix}, {Key: "$lt", Value: end}}}},
			names[4200:4300], ""},
	}
}

// figureList is the figure of paged listing: 100,000 counter documents inserted with the driver, then
// the p50 of GET /seq?limit=100 for the first page, a middle page and a prefix page
// next to the driver's find with the same query on the same store, alternating
// (seqd, driver, then driver, seqd), and a walk of every name through next with
// limit=1000, watching seqd's resident memory.
//
// It runs its own seqd on the database of the figure, with a request deadline of
// 30 s: on the development store a page costs more than seqd's default 2 s could
// be counted on for on a busy machine (see the note).
func figureList(ctx context.Context, b *bench, res *figureResult) error {
	driver, err := mongo.Connect(options.Client().ApplyURI(b.store.URI()).SetAppName("seqbench-list"))
	if err != nil {
		return err
	}
	defer driver.Disconnect(context.Background())
	db := driver.Database(listDB)
	coll := db.Collection("counters", options.Collection().SetReadConcern(readconcern.Majority()).SetReadPreference(readpref.Primary()))

	names := make([]string, listSequences)
	start := time.Now()
	for lo := 0; lo < listSequences; lo += 10_000 {
		docs := make([]any, 0, 10_000)
		for i := lo; i < min(lo+10_000, listSequences); i++ {
			names[i] = listName(i)
			docs = append(docs, bson.D{{Key: "_id", Value: names[i]}, {Key: "seq", Value: int64(i + 1)}})
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return fmt.Errorf("inserting the counter documents: %w", err)
		}
	}
	inserted := time.Since(start)
	defer db.Drop(context.Background())

	bin, err := proc.Build(ctx, "./cmd/seqd")
	if err != nil {
		return err
	}
	env := []string{"MONGODB_URI=" + b.store.URI(), "SEQD_DB=" + listDB, "SEQD_TIMEOUT=30s"}
	seqd, err := proc.StartSeqd(ctx, bin, env)
	if err != nil {
		return err
	}
	defer seqd.Stop(context.Background())
	b.servers = append(b.servers, []string{fmt.Sprintf("seqd (figure %d)", res.id), strings.Join(env, " ") + " seqd --addr 127.0.0.1:0"})
	base := seqd.URL()
	hc := &http.Client{}
	if _, err := getPage(ctx, hc, base, url.Values{"limit": {"1"}}); err != nil { // a connection, the driver's pool
		return err
	}

	queries := listQueries(names)
	seqdTimes, driverTimes := make([][]time.Duration, len(queries)), make([][]time.Duration, len(queries))
	for round := range listRounds {
		for i, lq := range queries {
			timeSeqd := func() error {
				q := url.Values{"limit": {strconv.Itoa(listPage)}}
				for k, v := range lq.q {
					q[k] = v
				}
				t0 := time.Now()
				p, err := getPage(ctx, hc, base, q)
				seqdTimes[i] = append(seqdTimes[i], time.Since(t0))
				if err == nil && (!slices.Equal(p.names(), lq.want) || p.Next != lq.next) {
					err = fmt.Errorf("GET /seq?%s: %d names from %q, next %q; want %d from %q, next %q",
						q.Encode(), len(p.Sequences), p.first(), p.Next, len(lq.want), lq.want[0], lq.next)
				}
				return err
			}
			timeDriver := func() error {
				find := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(listPage + 1).SetBatchSize(listPage + 1).SetProjection(listFields)
				t0 := time.Now()
				cur, err := coll.Find(ctx, lq.filter, find)
				var docs []bson.Raw
				if err == nil {
					err = cur.All(ctx, &docs)
				}
				driverTimes[i] = append(driverTimes[i], time.Since(t0))
				if err == nil && len(docs) < listPage {
					err = fmt.Errorf("the driver's find for the %s found %d documents", lq.what, len(docs))
				}
				return err
			}
			order := []func() error{timeSeqd, timeDriver}
			if round%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, f := range order {
				if err := f(); err != nil {
					return err
				}
			}
		}
	}
	for i, lq := range queries {
		s, d := p50(seqdTimes[i]), p50(driverTimes[i])
		res.row(fmt.Sprintf("%d. GET /seq?limit=%d, %s, %s sequences", res.id, listPage, lq.what, formatCount(listSequences)),
			fmt.Sprintf("p50 %s", formatMs(s)),
			fmt.Sprintf("driver find, same filter, sort, limit %d and projection: p50 %s", listPage+1, formatMs(d)),
			fmt.Sprintf("%.2f×", s/d))
	}

	walk, err := walkAll(ctx, hc, base, seqd.Pid(), names)
	if err != nil {
		return err
	}
	growth := walk.peak - walk.before
	met := "yes"
	if !walk.inOrder || growth > listMaxGrowth {
		met = "NO"
	}
	res.row(fmt.Sprintf("%d. walk of all %s through next, limit=%d", res.id, formatCount(listSequences), listWalkPage),
		fmt.Sprintf("%d pages in %.1f s; every name once, in order: %s; seqd's resident memory %.1f MB before, peak %.1f MB (+%.1f MB)",
			walk.pages, walk.elapsed.Seconds(), map[bool]string{true: "yes", false: "NO: " + walk.problem}[walk.inOrder],
			mb(walk.before), mb(walk.peak), mb(growth)),
		"—", fmt.Sprintf("growth ≤ %d MB and every name once: %s", listMaxGrowth>>20, met))
	res.note("The %s counter documents were inserted with the driver's insertMany in %.1f s into database %s; each page is timed %d times on each side, alternating (seqd then the driver, then the driver then seqd), and the p50 is nearest-rank (internal/stats). "+
		"seqd's side is the whole HTTP request from seqbench, body read; the driver's is its find, every document decoded, from the same process. "+
		"The development store (FerretDB 1.x on SQLite) pushes down only an _id equality, not a range, a sort or a limit: each page reads and sorts every document of the collection, so both sides cost about the same and the ratio is what seqd adds to that. mongod answers the same query from the _id index, reading the page and one more. "+
		"Peak memory is VmHWM in /proc/PID/status after the walk, against VmRSS before it. The figure's seqd runs with SEQD_TIMEOUT=30s: on this store a page takes about as long as reading the whole collection.",
		formatCount(listSequences), inserted.Seconds(), listDB, listRounds)
	if met != "yes" {
		return fmt.Errorf("the walk: %s; memory +%.1f MB (at most %d)", walk.problem, mb(growth), listMaxGrowth>>20)
	}
	return nil
}

// listPageAnswer is GET /seq's answer, as much as the paged-listing figure reads.
type listPageAnswer struct {
	Sequences []struct {
		Name string `json:"name"`
	} `json:"sequences"`
	Next string `json:"next"`
}

func (p listPageAnswer) names() []string {
	out := make([]string, len(p.Sequences))
	for i, s := range p.Sequences {
		out[i] = s.Name
	}
	return out
}

func (p listPageAnswer) first() string {
	if len(p.Sequences) == 0 {
		return ""
	}
	return p.Sequences[0].Name
}

// getPage asks seqd for GET /seq?q and decodes the page.
func getPage(ctx context.Context, hc *http.Client, base string, q url.Values) (listPageAnswer, error) {
	var p listPageAnswer
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/seq?"+q.Encode(), nil)
	if err != nil {
		return p, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return p, err
	}
	if resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("GET /seq?%s: %d %s", q.Encode(), resp.StatusCode, clip(string(body), 300))
	}
	return p, json.Unmarshal(body, &p)
}

// walkResult is what a walk through next saw.
type walkResult struct {
	pages        int
	elapsed      time.Duration
	inOrder      bool   // every name once, in order, and nothing else
	problem      string // what was wrong, if not
	before, peak uint64 // seqd's resident memory before the walk and its peak after it, in bytes
}

// walkAll follows next from the first page to the last with limit=listWalkPage and
// compares the names with want.
func walkAll(ctx context.Context, hc *http.Client, base string, pid int, want []string) (walkResult, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return walkResult{}, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return walkResult{}, err
	}
	w := walkResult{before: st.VmRSS}
	seen := 0
	after := ""
	start := time.Now()
	for {
		q := url.Values{"limit": {strconv.Itoa(listWalkPage)}}
		if after != "" {
			q.Set("after", after)
		}
		page, err := getPage(ctx, hc, base, q)
		if err != nil {
			return w, err
		}
		w.pages++
		for _, s := range page.Sequences {
			if seen >= len(want) || s.Name != want[seen] {
				w.problem = fmt.Sprintf("name %d is %q, want %q", seen, s.Name, want[min(seen, len(want)-1)])
				return w, errors.New(w.problem)
			}
			seen++
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	w.elapsed = time.Since(start)
	if st, err = p.NewStatus(); err != nil {
		return w, err
	}
	w.peak = st.VmHWM
	w.inOrder = seen == len(want)
	if !w.inOrder {
		w.problem = fmt.Sprintf("%d names of %d", seen, len(want))
	}
	return w, nil
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(stats.Percentile(s, 50)) / float64(time.Millisecond)
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
