package main

import (
	"fmt"
	"github.com/seqd/seqd/httpapi"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveProfiling serves net/http/pprof on addr, a listener apart from the API's, so that
// profiles are reachable only where the operator chose (a loopback address, say) and the
// API's middleware does not measure them. /debug/pprof/cmdline is not served: a command
// line is no profile, and may hold what its user did not mean to publish (a connection
// string with a password). The returned func stops it.
func serveProfiling(addr string, allowedHosts []string, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveApart("pprof-addr", addr, "profiling", mux, allowedHosts, log)
}

// serveApart serves h on addr, a listener apart from the API's, as what (the flag)
// and logs it under msg. It answers the Host names the API does (the address,
// localhost, IP addresses, allowedHosts). The returned func stops it.
func serveApart(what, addr, msg string, h http.Handler, allowedHosts []string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	srv := &http.Server{Handler: nosniff(httpapi.CheckHost(ln.Addr().String(), allowedHosts, h)), ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	log.Info(msg, "addr", ln.Addr().String())
	return func() { srv.Close(); <-done }, nil
}

// nosniff marks h's answers as what their Content-Type says, as the API's are.
func nosniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// metricsMux serves h on /metrics only.
func metricsMux(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	return mux
}
