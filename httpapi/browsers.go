package httpapi

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// Browsers follow links and run scripts from anywhere, so a service on loopback
// is not out of a web page's reach: a page can send a "simple" cross-site POST
// (no preflight) or, through DNS rebinding, read answers under its own host name.
// Two checks keep seqd out of that, with tokens or without:
//
//   - hostCheck answers 421 to a Host header seqd does not serve: a name that is
//     neither localhost nor one the operator allowed. DNS rebinding needs a name
//     the attacker controls, so an IP address in Host is served (it is the address
//     the client dialled, as the listen address is).
//   - sameOrigin answers 403 to a request that spends or changes a value (POST and
//     PUT, and GET /seq/{name}/next) that a browser makes speculatively (a
//     prefetch or prerender, which another site's page may ask for), or marks as
//     coming from another site or origin: Sec-Fetch-Site other than same-origin or none, or,
//     from a browser that does not send that, an Origin whose host is not the
//     request's. A GET from a browser (its User-Agent) is refused too: over plain
//     http to a non-loopback address browsers send neither, and a GET typed in
//     the address bar can be loaded again from the tab's history by another site.

// hostNames are the Host names seqd serves.
type hostNames struct {
	any   bool                // * was allowed
	names map[string]struct{} // lower case, without port
}

// newHostNames returns localhost, the listen address's host, and allowed (* for
// any).
func newHostNames(listen string, allowed []string) hostNames {
	h := hostNames{names: map[string]struct{}{"localhost": {}}}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		h.names[strings.ToLower(host)] = struct{}{}
	}
	for _, a := range allowed {
		if a == "*" {
			h.any = true
		}
		if host, _, err := net.SplitHostPort(a); err == nil {
			a = host // a port is not part of the name
		}
		h.names[strings.ToLower(strings.TrimSuffix(strings.Trim(a, "[]"), "."))] = struct{}{}
	}
	return h
}

// serves reports whether host, a Host header, names this service.
func (h hostNames) serves(host string) bool {
	if h.any || host == "" { // no Host: HTTP/1.0, not a browser
		return true
	}
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
	if net.ParseIP(name) != nil {
		return true
	}
	_, ok := h.names[name]
	return ok
}

var errMisdirected = &Error{Code: "misdirected_host", Message: "seqd does not serve this Host; an operator adds names with --allowed-hosts"}

// hostCheck refuses requests whose Host is not one of h's, except the probes
// (/healthz, /readyz), which a load balancer sends by address or by any name.
func hostCheck(h hostNames) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if !h.serves(r.Host) && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
				return errMisdirected
			}
			return next(c)
		}
	}
}

// CheckHost is hostCheck for a listener apart from the API's (--metrics-addr,
// --pprof-addr): h answers only requests whose Host is listen's host, localhost,
// an IP address or one of allowed; the others get the API's 421. Without it, a
// page that rebinds its own name to that address reads what h serves. A * in
// allowed is left out: it turns the API's check off for a proxy in front of the
// API, which checks names itself and is not in front of this listener.
func CheckHost(listen string, allowed []string, h http.Handler) http.Handler {
	names := newHostNames(listen, slices.DeleteFunc(slices.Clone(allowed), func(a string) bool { return a == "*" }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !names.serves(r.Host) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMisdirectedRequest)
			json.NewEncoder(w).Encode(errorBody{errorDetail{errMisdirected.Code, errMisdirected.Message}})
			return
		}
		h.ServeHTTP(w, r)
	})
}

var errCrossSite = &Error{Code: "cross_site", Message: "a request from another site's page may not spend or change values"}

// sameOrigin refuses a request a browser sent from another origin (see above),
// and every GET from a browser, whatever it says of where it came from: browsers
// send no Sec-Fetch-Site to a plain-http address that is not loopback (a LAN
// address, say), and no Origin with a GET, so an <img> on any page could spend
// a value there; and a GET its user typed (Sec-Fetch-Site: none) stays in the
// tab's history, where a page of another site, opened later in that tab, can
// load it again with the same headers (history.go), after evicting it from the
// back/forward cache. Other clients are not browsers (fromBrowser), and a
// browser can POST.
func sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if speculative(r) {
			return errSpeculative
		}
		if crossOrigin(r) {
			return errCrossSite
		}
		if r.Method == http.MethodGet && fromBrowser(r) {
			return errBrowserGet
		}
		return next(c)
	}
}

// pageOnly refuses, with 403 cross_site, a browser's speculative load of the
// status page (speculative: another site's page may ask for one, and Chromium
// sends it as if its user had typed the address), and a request for it that a
// browser marks as another origin's (crossOrigin) unless it is a navigation to
// it (Sec-Fetch-Mode navigate, Sec-Fetch-Dest document: a link from another
// site, whose user then sees the page). A browser sends the page's Basic
// credentials with every request to seqd, whichever site's page makes it: the
// other site cannot read the answer, but it could time it, prefix after prefix,
// and learn which names the token's scope holds. Over plain http to an address
// that is not loopback, a browser sends neither Sec-Fetch-Site nor Origin with
// a GET, so there a browser's request (fromBrowser) is served only as a navigation: with Upgrade-Insecure-Requests, which every
// browser sends when it opens a page in a window or frame and which a page
// cannot add to an <img> or a fetch. A frame of the page is not drawn
// (frame-ancestors 'none'), but its load, like a window's, can be timed: the
// README says so.
func pageOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if speculative(r) {
			return errSpeculative
		}
		if crossOrigin(r) && (r.Header.Get("Sec-Fetch-Mode") != "navigate" || r.Header.Get("Sec-Fetch-Dest") != "document") {
			return errCrossSitePage
		}
		if r.Header.Get("Sec-Fetch-Site") == "" && r.Header.Get("Origin") == "" &&
			r.Header.Get("Upgrade-Insecure-Requests") != "1" && fromBrowser(r) {
			return errUnmarkedPage
		}
		return next(c)
	}
}

var errCrossSitePage = &Error{Code: "cross_site", Message: "another site's page may not fetch the status page; open it in a window of its own"}

var errUnmarkedPage = &Error{Code: "cross_site", Message: "a browser that does not say where a request came from gets the status page only when it opens it in a window of its own"}

var errBrowserGet = &Error{Code: "cross_site", Message: "a browser may not spend values with GET, which a page of another site can make it load again from its history; use POST"}

var errSpeculative = &Error{Code: "cross_site", Message: "a browser's speculative load (prefetch, prerender) may not spend values or get the status page; open the address itself"}

// fromBrowser reports whether r comes from a browser: its User-Agent starts with
// "Mozilla/" in every browser, and a page cannot change it; other clients (curl,
// Go, the client package) name themselves otherwise.
func fromBrowser(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("User-Agent"), "Mozilla/")
}

// speculative reports whether a browser loads r ahead of a navigation that may
// never come: what a page asks for with <script type="speculationrules"> or
// <link rel=prefetch>, whichever site it is on. Chromium sends such a load as
// Sec-Fetch-Site: none, as if its user had typed the address, and marks it with
// Sec-Purpose (prefetch, prefetch;prerender); older Chromium with Purpose:
// prefetch, Firefox with X-Moz: prefetch. Refused, the browser loads the page
// when its user opens it.
func speculative(r *http.Request) bool {
	return r.Header.Get("Sec-Purpose") != "" || r.Header.Get("Purpose") == "prefetch" || r.Header.Get("X-Moz") == "prefetch"
}

// crossOrigin reports whether a browser marks r as sent by a page of another
// origin, as net/http's CrossOriginProtection reads it, whatever the method.
func crossOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "":
	case "same-origin", "none":
		return false
	default: // cross-site, same-site, anything else
		return true
	}
	origin, ok := r.Header["Origin"]
	if !ok {
		return false
	}
	if len(origin) != 1 {
		return true
	}
	u, err := url.Parse(origin[0])
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}
