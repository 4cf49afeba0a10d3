package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"
)

// Token is a bearer token and the sequences it may use.
type Token struct {
	Secret string
	Scope  Scope
}

// Keyring holds the tokens seqd takes: client tokens, for /oid, /uuid, /seq and
// /status, and admin tokens, for PUT /seq/{name} as well, each with its scope.
// Set replaces them all at once while requests are served: a request is checked
// against the tokens in force when it arrived, and keeps the scope it got then
// until it is answered.
//
// Tokens are kept only as SHA-256 digests, and a request's is compared with every
// one of them in constant time, without stopping at a match, so neither a token's
// content, its length nor its place in the list leaks through timing.
type Keyring struct {
	keys atomic.Pointer[keySet]
}

// keySet is the tokens in force, never changed once made.
type keySet struct {
	entries         []keyEntry
	clients, admins int // how many entries of each role
}

type keyEntry struct {
	digest [sha256.Size]byte
	role   role
	scope  Scope
}

// NewKeyring returns a Keyring of clients and admins (Set's rules).
func NewKeyring(clients, admins []Token) (*Keyring, error) {
	k := &Keyring{}
	if err := k.Set(clients, admins); err != nil {
		return nil, err
	}
	return k, nil
}

// Set puts clients and admins in force in place of the tokens before, all at
// once. With no client token, the client routes take any request; with no
// admin token, PUT answers 403 admin_disabled. A token with an empty Secret is
// an error, not left out: a list of them must not read as no tokens. So is a
// token given twice, as client or admin, and an admin token with a scope (not
// every name) without client tokens: its tenants' sequences would be open to
// anyone on the client routes. An error says which entries (never the token),
// and changes nothing.
func (k *Keyring) Set(clients, admins []Token) error {
	s := &keySet{}
	seen := make(map[[sha256.Size]byte]string)
	add := func(list []Token, r role, what string) error {
		for i, t := range list {
			where := fmt.Sprintf("%s token %d", what, i+1)
			if t.Secret == "" {
				return fmt.Errorf("httpapi: %s is empty", where)
			}
			d := sha256.Sum256([]byte(t.Secret))
			if first, dup := seen[d]; dup {
				return fmt.Errorf("httpapi: %s is the same as %s", where, first)
			}
			seen[d] = where
			s.entries = append(s.entries, keyEntry{digest: d, role: r, scope: t.Scope})
		}
		return nil
	}
	if err := add(clients, roleClient, "client"); err != nil {
		return err
	}
	s.clients = len(s.entries)
	if err := add(admins, roleAdmin, "admin"); err != nil {
		return err
	}
	s.admins = len(s.entries) - s.clients
	if s.clients == 0 {
		for i, a := range admins {
			if !a.Scope.All() {
				return fmt.Errorf("httpapi: admin token %d has a scope, and there is no client token: the client routes would take any request, every name included; add client tokens, or give the admin token every name", i+1)
			}
		}
	}
	k.keys.Store(s)
	return nil
}

// Counts returns how many client and admin tokens are in force.
func (k *Keyring) Counts() (clients, admins int) {
	s := k.keys.Load()
	return s.clients, s.admins
}

type role int

const (
	roleNone role = iota
	roleClient
	roleAdmin
)

// identify returns the entry of the request's bearer token in s, nil for none,
// and the token's digest.
func (s *keySet) identify(r *http.Request) (*keyEntry, [sha256.Size]byte) {
	token, ok := bearer(r.Header.Get(echo.HeaderAuthorization))
	return s.lookup(token, ok)
}

// identifyPage is identify for the status page, which also takes the token as
// the password of HTTP Basic, with any user name: what a browser sends once
// its user typed it.
func (s *keySet) identifyPage(r *http.Request) (*keyEntry, [sha256.Size]byte) {
	token, ok := bearer(r.Header.Get(echo.HeaderAuthorization))
	if !ok {
		_, token, ok = r.BasicAuth()
		ok = ok && token != ""
	}
	return s.lookup(token, ok)
}

// lookup returns the entry of token in s, nil for none (or !ok), and the
// token's digest.
func (s *keySet) lookup(token string, ok bool) (*keyEntry, [sha256.Size]byte) {
	if !ok {
		return nil, [sha256.Size]byte{}
	}
	d := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.entries {
		match := subtle.ConstantTimeCompare(d[:], s.entries[i].digest[:])
		found = subtle.ConstantTimeSelect(match, i, found)
	}
	if found < 0 {
		return nil, d
	}
	return &s.entries[found], d
}

func bearer(h string) (string, bool) {
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return h[len(prefix):], true
}

var (
	errUnauthorized  = &Error{Code: "unauthorized", Message: "missing or invalid bearer token"}
	errAdminDisabled = &Error{Code: "admin_disabled", Message: "admin operations are disabled: start seqd with an admin token, in SEQD_ADMIN_TOKEN (SEQD_ADMIN_TOKEN=… make run) or in a file named by --admin-token-file or SEQD_ADMIN_TOKEN_FILE"}
	errNotAdmin      = &Error{Code: "forbidden", Message: "this operation needs an admin token"}
)

// letThrough passes the request on under e's scope: a scope of every name leaves
// nothing in the context (scopeOf reads that as every name).
func letThrough(c echo.Context, next echo.HandlerFunc, e *keyEntry) error {
	if e != nil && !e.scope.All() {
		c.Set(scopeKey, e.scope)
	}
	return next(c)
}

// requireClient lets a request through when no client tokens are in force, with
// every name, or when it presents a client or an admin token, with that token's
// scope.
func (k *Keyring) requireClient(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := k.keys.Load()
		if s.clients == 0 {
			return next(c)
		}
		e, _ := s.identify(c.Request())
		if e == nil {
			return errUnauthorized
		}
		return letThrough(c, next, e)
	}
}

var errUnauthorizedPage = &Error{Code: "unauthorized", Message: "missing or invalid token: give it as the password (any user name), or as a bearer token"}

// basicChallenge asks a browser for a user name and password; seqd takes a
// client token as the password.
const basicChallenge = `Basic realm="seqd"`

// requirePage is requireClient for the status page, which people open in a
// browser: it also takes the token as HTTP Basic's password, and its 401 asks
// for Basic, so that the browser asks its user for it. The API's routes take
// bearer tokens only: a browser sends the Basic credentials it holds with every
// request to seqd, whichever site's page makes it, and a token there would turn
// a cross-site request into an authenticated one. The page only reads, no other
// site can read or frame it (same-origin policy, frame-ancestors 'none'), and a
// rebinding name gets 421 (hostCheck).
func (k *Keyring) requirePage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := k.keys.Load()
		if s.clients == 0 {
			return next(c)
		}
		e, _ := s.identifyPage(c.Request())
		if e == nil {
			c.Response().Header().Set("WWW-Authenticate", basicChallenge)
			return errUnauthorizedPage
		}
		return letThrough(c, next, e)
	}
}

// requireAdmin lets through only requests that present an admin token, with its
// scope.
func (k *Keyring) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := k.keys.Load()
		if s.admins == 0 {
			return errAdminDisabled
		}
		e, _ := s.identify(c.Request())
		switch {
		case e == nil:
			return errUnauthorized
		case e.role != roleAdmin:
			return errNotAdmin
		}
		return letThrough(c, next, e)
	}
}

var errMetricsAdmin = &Error{Code: "forbidden", Message: "with client tokens in force, /metrics needs an admin token of every name (or seqd's --metrics-addr)"}

// requireMetrics lets /metrics through while no client token is in force, as the
// rest of the API is open then; otherwise only to an admin token of every name,
// since the metrics total every tenant's traffic.
func (k *Keyring) requireMetrics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := k.keys.Load()
		if s.clients == 0 {
			return next(c)
		}
		e, _ := s.identify(c.Request())
		switch {
		case e == nil:
			return errUnauthorized
		case e.role != roleAdmin || !e.scope.All():
			return errMetricsAdmin
		}
		return next(c)
	}
}

// authenticated calls hook with each request that reaches it, that is, each
// request the token checks before it let through.
func authenticated(hook func(*http.Request)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			hook(c.Request())
			return next(c)
		}
	}
}
