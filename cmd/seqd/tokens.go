package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/seqd/seqd/httpapi"
)

// tokenSources are where seqd's tokens come from: the command line's, which have
// no scope, and the files', read at start and again on SIGHUP.
//
// A file holds a token a line, with the sequences it may use after it:
//
//	# tenant A's application, and its admin
//	8f1c…  tenant-a.*
//	# a reader of every tenant
//	77aa…
//	3b9e…  orders invoices tenant-c.*   # a comment may end a line
//
// A scope is a name, a prefix ending in *, or * (every name); a token without one
// may use every name. Blank lines and words from # on are skipped.
type tokenSources struct {
	clients    []string // --tokens
	admin      string   // --admin-token
	clientFile string   // --tokens-file
	adminFile  string   // --admin-token-file
}

// tokenSet is what tokenSources hold at one reading.
type tokenSet struct {
	clients, admins []httpapi.Token
}

// files reports whether s has a file to read again on SIGHUP.
func (s tokenSources) files() bool { return s.clientFile != "" || s.adminFile != "" }

// load reads the tokens from every source. Its error names the file, the line and
// what is wrong with it, never a token: a line that is not TOKEN [SCOPE …], a file
// without a token, a token given twice. A file that holds no token is refused
// rather than read as none: emptied by mistake, a tokens file would otherwise
// open the API to anyone at the next SIGHUP.
func (s tokenSources) load() (tokenSet, error) {
	var set tokenSet
	seen := make(map[string]string) // token → where it was first given
	add := func(list *[]httpapi.Token, secret string, scope httpapi.Scope, where string) error {
		if first, dup := seen[secret]; dup {
			return fmt.Errorf("%s: the same token as %s", where, first)
		}
		seen[secret] = where
		*list = append(*list, httpapi.Token{Secret: secret, Scope: scope})
		return nil
	}
	for _, t := range s.clients {
		if err := add(&set.clients, t, httpapi.Scope{}, "--tokens"); err != nil {
			return tokenSet{}, err
		}
	}
	if s.admin != "" {
		if err := add(&set.admins, s.admin, httpapi.Scope{}, "--admin-token"); err != nil {
			return tokenSet{}, err
		}
	}
	for _, f := range []struct {
		flag, path string
		list       *[]httpapi.Token
	}{
		{"tokens-file", s.clientFile, &set.clients},
		{"admin-token-file", s.adminFile, &set.admins},
	} {
		if f.path == "" {
			continue
		}
		lines, err := readTokenFile(f.path)
		if err != nil {
			return tokenSet{}, fmt.Errorf("%s: %w", f.flag, err)
		}
		for _, l := range lines {
			if err := add(f.list, l.secret, l.scope, fmt.Sprintf("%s %s line %d", f.flag, f.path, l.line)); err != nil {
				return tokenSet{}, err
			}
		}
	}
	return set, nil
}

// tokenLine is one token of a file.
type tokenLine struct {
	secret string
	scope  httpapi.Scope
	line   int
}

// readTokenFile reads the tokens of a file (tokenSources' format).
func readTokenFile(path string) ([]tokenLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []tokenLine
	for i, text := range strings.Split(string(b), "\n") {
		words := strings.Fields(text)
		for j, w := range words {
			if strings.HasPrefix(w, "#") {
				words = words[:j]
				break
			}
		}
		if len(words) == 0 {
			continue
		}
		scope, err := httpapi.ParseScope(words[1:]...)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: want TOKEN [SCOPE …]: %w", path, i+1, err)
		}
		out = append(out, tokenLine{secret: words[0], scope: scope, line: i + 1})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no token in the file (a line is TOKEN [SCOPE …])", path)
	}
	return out, nil
}

// reloadOnHangup reads the tokens again each time hangup delivers, and puts them
// in force in keys, until ctx is done. A reading that fails leaves the tokens in
// force and logs why. done is closed when it returns.
func reloadOnHangup(ctx context.Context, hangup <-chan os.Signal, src tokenSources, keys *httpapi.Keyring, log *slog.Logger, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangup:
		}
		if !src.files() {
			log.Warn("SIGHUP: no --tokens-file or --admin-token-file to read again; tokens unchanged")
			continue
		}
		set, err := src.load()
		if err == nil {
			err = keys.Set(set.clients, set.admins)
		}
		if err != nil {
			log.Error("SIGHUP: tokens not reloaded, the tokens before stay in force", "err", err.Error())
			continue
		}
		clients, admins := keys.Counts()
		log.Info("tokens reloaded", "client_tokens", clients, "admin_tokens", admins)
	}
}
