package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// keyring checks bearer tokens. Tokens are kept only as SHA-256 digests and compared
// in constant time, so neither their content nor their length leaks through timing.
type keyring struct {
	clients [][sha256.Size]byte
	admin   *[sha256.Size]byte
}

func newKeyring(clients []string, admin string) *keyring {
	k := &keyring{}
	for _, t := range clients {
		if t != "" {
			k.clients = append(k.clients, sha256.Sum256([]byte(t)))
		}
	}
	if admin != "" {
		d := sha256.Sum256([]byte(admin))
		k.admin = &d
	}
	return k
}

type role int

const (
	roleNone role = iota
	roleClient
	roleAdmin
)

// roleOf returns the role the request's bearer token grants.
func (k *keyring) roleOf(r *http.Request) role {
	role, _ := k.identify(r)
	return role
}

// identify returns the role the request's bearer token grants and the token's digest.
func (k *keyring) identify(r *http.Request) (role, [sha256.Size]byte) {
	token, ok := bearer(r.Header.Get(echo.HeaderAuthorization))
	if !ok {
		return roleNone, [sha256.Size]byte{}
	}
	d := sha256.Sum256([]byte(token))
	if k.admin != nil && subtle.ConstantTimeCompare(d[:], k.admin[:]) == 1 {
		return roleAdmin, d
	}
	match := 0
	for i := range k.clients {
		match |= subtle.ConstantTimeCompare(d[:], k.clients[i][:])
	}
	if match == 1 {
		return roleClient, d
	}
	return roleNone, d
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
	errAdminDisabled = &Error{Code: "admin_disabled", Message: "admin operations are disabled: start seqd with --admin-token"}
	errNotAdmin      = &Error{Code: "forbidden", Message: "this operation needs the admin token"}
)

// requireClient lets a request through when no client tokens are configured or when it
// presents a client or the admin token.
func (k *keyring) requireClient(next echo.HandlerFunc) echo.HandlerFunc {
	if len(k.clients) == 0 {
		return next
	}
	return func(c echo.Context) error {
		if k.roleOf(c.Request()) == roleNone {
			return errUnauthorized
		}
		return next(c)
	}
}

// requireAdmin lets through only requests that present the admin token.
func (k *keyring) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if k.admin == nil {
			return errAdminDisabled
		}
		switch k.roleOf(c.Request()) {
		case roleAdmin:
			return next(c)
		case roleClient:
			return errNotAdmin
		default:
			return errUnauthorized
		}
	}
}
