package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seqd/seqd/counters"
)

// Metrics holds seqd's Prometheus metrics. It is also the counters.Observer that
// counts E11000 retries and coalesced batches.
type Metrics struct {
	reg           *prometheus.Registry
	valuesIssued  *prometheus.CounterVec
	oidsIssued    *prometheus.CounterVec
	oidsSpec      prometheus.Counter
	oidsLegacy    prometheus.Counter
	uuidsIssued   prometheus.Counter
	retries       *prometheus.CounterVec
	batchCallers  prometheus.Histogram
	backendErrors *prometheus.CounterVec
	blockFetches  *prometheus.CounterVec // by result: ok or error
	blockValues   prometheus.Counter
	blockLatency  prometheus.Histogram
	refreshes     *prometheus.CounterVec // mode refresh rounds, by result: ok or error
	refreshTime   prometheus.Histogram
	confirmed     prometheus.Counter // leases confirmed by the mode refresh
	leasesExpired prometheus.Counter
	httpRequests  *prometheus.CounterVec
	httpDuration  *prometheus.HistogramVec
	tokenReloads  *prometheus.CounterVec // by result: ok or error
	routes        sync.Map               // routeKey → routeMetrics, the series of each route and status seen
}

// httpLabels label the HTTP metrics: status, method (the standard ones, else "other")
// and route pattern, so that no client can create series at will.
var httpLabels = []string{"code", "method", "url"}

type routeKey struct {
	code        int
	method, url string
}

type routeMetrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// observeRequest counts and times a request by status, method and route. It resolves
// a route's series once and keeps them: echoprometheus, which hashes the labels of
// four series on every request, was 40% of the instructions of a GET /oid.
func (m *Metrics) observeRequest(c echo.Context, elapsed time.Duration) {
	k := routeKey{code: c.Response().Status, method: methodLabel(c.Request().Method), url: c.Path()}
	rm, ok := m.routes.Load(k)
	if !ok {
		values := []string{strconv.Itoa(k.code), k.method, strings.ToValidUTF8(k.url, "\uFFFD")}
		rm, _ = m.routes.LoadOrStore(k, routeMetrics{
			requests: m.httpRequests.WithLabelValues(values...),
			duration: m.httpDuration.WithLabelValues(values...),
		})
	}
	r := rm.(routeMetrics)
	r.requests.Inc()
	r.duration.Observe(elapsed.Seconds())
}

var (
	_ counters.Observer      = (*Metrics)(nil)
	_ counters.LeaseObserver = (*Metrics)(nil)
)

// NewMetrics registers seqd's metrics with reg; nil means a fresh registry with the
// Go and process collectors.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &Metrics{
		reg: reg,
		valuesIssued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "seqd", Name: "sequence_values_issued_total",
			Help: "Sequence values handed out, by strategy.",
		}, []string{"strategy"}),
		oidsIssued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "seqd", Name: "oids_issued_total",
			Help: "ObjectIds handed out, by layout.",
		}, []string{"layout"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "seqd", Name: "duplicate_key_retries_total",
			Help: "Writes retried after a duplicate key error (E11000), by strategy.",
		}, []string{"strategy"}),
		batchCallers: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "seqd", Name: "coalesced_batch_callers",
			Help:    "Callers served by one counter write.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12),
		}),
		backendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "seqd", Name: "backend_errors_total",
			Help: "Requests that failed on the server side (backend down, contention, internal), by error code.",
		}, []string{"code"}),
	}
	m.blockFetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seqd", Name: "block_fetches_total",
		Help: "Block fetches of cached sequences, by result (ok or error).",
	}, []string{"result"})
	m.blockValues = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seqd", Name: "block_values_reserved_total",
		Help: "Values reserved in blocks for cached sequences.",
	})
	m.blockLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seqd", Name: "block_fetch_duration_seconds",
		Help: "How long block fetches of cached sequences took.", Buckets: prometheus.DefBuckets,
	})
	m.blockFetches.WithLabelValues("ok")
	m.blockFetches.WithLabelValues("error")
	reg.MustRegister(m.blockFetches, m.blockValues, m.blockLatency)
	m.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seqd", Name: "lease_refreshes_total",
		Help: "Rounds of the mode refresh that confirms leases on cached blocks, by result (ok, or error: some leases not confirmed).",
	}, []string{"result"})
	m.refreshTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "seqd", Name: "lease_refresh_duration_seconds",
		Help: "How long rounds of the mode refresh took.", Buckets: prometheus.DefBuckets,
	})
	m.confirmed = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seqd", Name: "lease_names_confirmed_total",
		Help: "Leases on cached sequences' blocks that the mode refresh confirmed.",
	})
	m.leasesExpired = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "seqd", Name: "leases_expired_total",
		Help: "Leases on cached sequences' blocks that ran out before anything confirmed them: the sequence went to the strict path.",
	})
	m.refreshes.WithLabelValues("ok")
	m.refreshes.WithLabelValues("error")
	reg.MustRegister(m.refreshes, m.refreshTime, m.confirmed, m.leasesExpired)
	m.oidsSpec = m.oidsIssued.WithLabelValues("spec")
	m.oidsLegacy = m.oidsIssued.WithLabelValues("legacy")
	m.uuidsIssued = newUUIDCounter(reg)
	// Create the known series up front so that a scrape shows every metric, at 0,
	// before the first value, retry or failure.
	for _, s := range []string{counters.StrategyCounter, counters.StrategyOptimistic} {
		m.valuesIssued.WithLabelValues(s)
		m.retries.WithLabelValues(s)
	}
	for _, code := range []string{"internal", "unavailable", "contention"} {
		m.backendErrors.WithLabelValues(code)
	}
	reg.MustRegister(m.valuesIssued, m.oidsIssued, m.retries, m.batchCallers, m.backendErrors)
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seqd", Subsystem: "http", Name: "requests_total",
		Help: "How many HTTP requests processed, partitioned by status code and HTTP method.",
	}, httpLabels)
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "seqd", Subsystem: "http", Name: "request_duration_seconds",
		Help: "The HTTP request latencies in seconds.", Buckets: prometheus.DefBuckets,
	}, httpLabels)
	reg.MustRegister(m.httpRequests, m.httpDuration)
	m.tokenReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seqd", Name: "token_reloads_total",
		Help: "Readings of the token files on SIGHUP, by result: ok, or error when the tokens before stay in force.",
	}, []string{"result"})
	m.tokenReloads.WithLabelValues("ok")
	m.tokenReloads.WithLabelValues("error")
	reg.MustRegister(m.tokenReloads)
	return m
}

// methodLabel is the request method if it is a standard one, else "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

func (m *Metrics) oidIssued(legacy bool, n int) {
	if legacy {
		m.oidsLegacy.Add(float64(n))
	} else {
		m.oidsSpec.Add(float64(n))
	}
}

func (m *Metrics) valueIssued(strategy string, n int64) {
	m.valuesIssued.WithLabelValues(strategy).Add(float64(n))
}

// Retry implements counters.Observer.
func (m *Metrics) Retry(strategy string) { m.retries.WithLabelValues(strategy).Inc() }

// Block implements counters.Observer.
func (m *Metrics) Block(values int64, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.blockFetches.WithLabelValues(result).Inc()
	m.blockValues.Add(float64(values))
	m.blockLatency.Observe(took.Seconds())
}

// Refresh implements counters.LeaseObserver.
func (m *Metrics) Refresh(_, confirmed int, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.refreshes.WithLabelValues(result).Inc()
	m.refreshTime.Observe(took.Seconds())
	m.confirmed.Add(float64(confirmed))
}

// LeaseExpired implements counters.LeaseObserver.
func (m *Metrics) LeaseExpired() { m.leasesExpired.Inc() }

// Batch implements counters.Observer.
func (m *Metrics) Batch(callers int) { m.batchCallers.Observe(float64(callers)) }

// Handler serves the metrics in Prometheus' format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// TokensReloaded counts a reading of the token files on SIGHUP: err nil when the
// tokens read are in force, else why the tokens before stay in force (a token
// meant to be revoked, say, is still taken).
func (m *Metrics) TokensReloaded(err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.tokenReloads.WithLabelValues(result).Inc()
}
