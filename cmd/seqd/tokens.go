package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/seqd/seqd/httpapi"
)

// tokenSources are where seqd's tokens come from: the environment's, which have
// no scope (every name), and the files', read at start and again on SIGHUP.
//
// A file holds a token a line, with the sequences it may use after it:
//
//	# tenant A's application, and its admin
//	8f1c…  tenant-a.*
//	# a reader of every tenant
//	77aa…  *
//	3b9e…  orders invoices tenant-c.*   # a comment may end a line
//
// A scope is a name, a prefix ending in *, or * (every name). Every reading fails
// closed: whatever is not plainly a token and its scopes is an error that names
// the line, never a token, so that a mistake in a file (a missing scope, an
// indented line meant as a continuation, a header the editor prefixed with a
// byte-order mark) can never make a token that may use more than was meant:
//
//   - a line is TOKEN SCOPE [SCOPE …], words separated by spaces or tabs; a token
//     without a scope is an error (write * for every name);
//   - a line that starts with a space or a tab is an error, unless it is blank;
//   - a token is what an Authorization: Bearer header carries (RFC 6750's
//     b64token: A-Z a-z 0-9 - . _ ~ + /, then = at the end), anything else is an
//     error, a # inside one included;
//   - blank lines, and words from # on, are comments; a UTF-8 byte-order mark
//     that starts the file is skipped, and is an error anywhere else.
type tokenSources struct {
	clients    string // SEQD_TOKENS: comma-separated
	admin      string // SEQD_ADMIN_TOKEN
	hasClients bool   // SEQD_TOKENS is set, to anything
	hasAdmin   bool   // SEQD_ADMIN_TOKEN is set, to anything
	clientFile string // --tokens-file
	adminFile  string // --admin-token-file
}

// tokenSet is what tokenSources hold at one reading.
type tokenSet struct {
	clients, admins []httpapi.Token
	// warnings are what the reading found that widens nothing by itself but is
	// likely a mistake: a file other users may read or change (fileWarnings),
	// SEQD_TOKENS (every name) beside a file of scoped client or admin tokens,
	// SEQD_ADMIN_TOKEN beside a file of scoped admin tokens. They are logged, not
	// refused: a secret mounted by a container platform is often 0644.
	warnings []string
}

// logWarnings logs the reading's warnings, at start and at each SIGHUP.
func (set tokenSet) logWarnings(log *slog.Logger) {
	for _, w := range set.warnings {
		log.Warn("tokens read with a warning", "warning", w)
	}
}

// files reports whether s has a file to read again on SIGHUP.
func (s tokenSources) files() bool { return s.clientFile != "" || s.adminFile != "" }

// load reads the tokens from every source. Its error names the source, the line
// or entry and what is wrong with it, never a token: a line that is not TOKEN
// SCOPE [SCOPE …], a file without a token, a token given twice, an admin token
// with a scope while no client token is given. A source that
// holds no token is refused rather than read as none: a tokens file emptied by
// mistake, or SEQD_TOKENS set to a blank list, would otherwise open the API to
// anyone.
func (s tokenSources) load() (tokenSet, error) {
	var set tokenSet
	seen := make(map[string]string) // token → where it was first given
	scopedAdmin := ""               // where the first admin token with a scope was given
	scopedClient := ""              // likewise, a client token
	add := func(list *[]httpapi.Token, secret string, scope httpapi.Scope, where string) error {
		if first, dup := seen[secret]; dup {
			return fmt.Errorf("%s: the same token as %s", where, first)
		}
		seen[secret] = where
		*list = append(*list, httpapi.Token{Secret: secret, Scope: scope})
		return nil
	}
	if s.hasClients {
		tokens, err := envTokens("SEQD_TOKENS", s.clients)
		if err != nil {
			return tokenSet{}, err
		}
		for i, t := range tokens {
			if err := add(&set.clients, t, httpapi.Scope{}, fmt.Sprintf("SEQD_TOKENS entry %d", i+1)); err != nil {
				return tokenSet{}, err
			}
		}
	}
	if s.hasAdmin {
		admin := strings.Trim(s.admin, " \t")
		if err := checkToken(admin); err != nil {
			return tokenSet{}, fmt.Errorf("SEQD_ADMIN_TOKEN: %w (unset it to turn admin operations off)", err)
		}
		if err := add(&set.admins, admin, httpapi.Scope{}, "SEQD_ADMIN_TOKEN"); err != nil {
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
		lines, info, err := readTokenFile(f.path)
		if err != nil {
			return tokenSet{}, fmt.Errorf("%s: %w", f.flag, err)
		}
		set.warnings = append(set.warnings, fileWarnings(f.flag, f.path, info)...)
		for _, l := range lines {
			where := fmt.Sprintf("%s %s line %d", f.flag, f.path, l.line)
			if err := add(f.list, l.secret, l.scope, where); err != nil {
				return tokenSet{}, err
			}
			if f.list == &set.admins && !l.scope.All() && scopedAdmin == "" {
				scopedAdmin = where
				if s.hasAdmin {
					set.warnings = append(set.warnings, fmt.Sprintf("SEQD_ADMIN_TOKEN gives an admin token of every name beside the scoped admin tokens of --admin-token-file (%s); unset it if the file is meant to hold them all", where))
				}
			}
			if f.list == &set.clients && !l.scope.All() && s.hasClients && scopedClient == "" {
				scopedClient = where
				set.warnings = append(set.warnings, fmt.Sprintf("SEQD_TOKENS gives tokens of every name beside the scoped tokens of --tokens-file (%s); unset it if the file is meant to hold them all", where))
			}
		}
	}
	if scopedAdmin != "" && s.hasClients && scopedClient == "" {
		set.warnings = append(set.warnings, fmt.Sprintf("SEQD_TOKENS gives client tokens of every name beside the scoped admin tokens of --admin-token-file (%s): every client may use every tenant's sequences; give client tokens scopes in a --tokens-file", scopedAdmin))
	}
	// A scoped admin token means tenants share seqd; with no client token the
	// client routes take any request, every tenant's names and values included.
	if scopedAdmin != "" && len(set.clients) == 0 {
		return tokenSet{}, fmt.Errorf("%s: an admin token with a scope, and no client token: the client routes would take any request, every tenant's sequences included; add client tokens (--tokens-file or SEQD_TOKENS), or give the admin token * for every name", scopedAdmin)
	}
	return set, nil
}

// fileWarnings says what lets other users read or change the token file at
// path, which info describes: its mode, its owner, or a directory on the way to
// it that they may write (and so rename a file of their own over it).
func fileWarnings(flag, path string, info fs.FileInfo) []string {
	var ws []string
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		ws = append(ws, fmt.Sprintf("%s %s: other users may read or change it (mode %04o); chmod 600 it", flag, path, perm))
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		ws = append(ws, fmt.Sprintf("%s %s: owned by another user (uid %d), who may change it; chown it to seqd's user or root", flag, path, st.Uid))
	}
	if dir := writableDirOnTheWay(path); dir != "" {
		ws = append(ws, fmt.Sprintf("%s %s: other users may write its directory %s and put a file of their own in its place; keep it in a directory only seqd's user may write", flag, path, dir))
	}
	return ws
}

// writableDirOnTheWay returns the first directory that others may write
// (dirWritableByOthers) on the way to path: its own and those above it, then,
// when path is reached through symbolic links, those of the file they lead to.
// Who may write one of them may rename what it holds, the token file or a
// directory on the way to it, and put their own in its place. "" for none.
func writableDirOnTheWay(path string) string {
	paths := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		p, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if dirWritableByOthers(dir) {
				return dir
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return ""
}

// dirWritableByOthers reports whether dir's group or other users may write it
// and so replace what it holds; false when it cannot be read. A sticky
// directory (/tmp, a Kubernetes secret volume) lets them replace only their own
// files: a token file one of them made is another user's (a warning of its own).
func dirWritableByOthers(dir string) bool {
	info, err := os.Stat(dir)
	return err == nil && info.Mode().Perm()&0o022 != 0 && info.Mode()&os.ModeSticky == 0
}

// envTokens reads the comma-separated tokens of the variable name. Spaces around
// a token are dropped; an empty entry, and so an empty or blank list, is an
// error: a variable set to nothing must not read as "no tokens".
func envTokens(name, list string) ([]string, error) {
	var out []string
	for i, t := range strings.Split(list, ",") {
		t = strings.Trim(t, " \t")
		if err := checkToken(t); err != nil {
			return nil, fmt.Errorf("%s entry %d: %w (a comma-separated list of tokens; unset %s to turn client tokens off)", name, i+1, err, name)
		}
		out = append(out, t)
	}
	return out, nil
}

// checkToken says what is wrong with t as a bearer token (RFC 6750's b64token),
// without quoting it.
func checkToken(t string) error {
	if t == "" {
		return errors.New("the token is empty")
	}
	end := len(t)
	for end > 0 && t[end-1] == '=' {
		end--
	}
	for i := 0; i < end; i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return fmt.Errorf("the token's character %d is not one a bearer token may hold (A-Z a-z 0-9 - . _ ~ + /, then = at the end)", i+1)
		}
	}
	if end == 0 {
		return errors.New("the token is only =")
	}
	return nil
}

// tokenLine is one token of a file.
type tokenLine struct {
	secret string
	scope  httpapi.Scope
	line   int
}

// utf8BOM is the byte-order mark an editor may put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// readTokenFile reads the tokens of a file (tokenSources' format). The file must
// be a regular file: a named pipe or a device would be waited on, or read without
// end, at start or at a SIGHUP, and seqd would neither read its tokens again nor
// stop (O_NONBLOCK opens a pipe without waiting for a writer).
func readTokenFile(path string) ([]tokenLine, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%v); write the tokens to a file and rename it into place", path, info.Mode().Type())
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, err
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	// A file read while it is being written may end inside a line, and a line
	// cut inside its scope names another scope ("tenant-b.secret" of
	// "tenant-b.secret-archive"): so the last line must be whole.
	if last := bytes.LastIndexByte(b, '\n'); len(bytes.TrimSpace(b[last+1:])) > 0 {
		return nil, nil, fmt.Errorf("%s line %d: no newline at its end: the file may be half written (write it elsewhere and rename it into place)", path, bytes.Count(b, []byte("\n"))+1)
	}
	var out []tokenLine
	for i, text := range strings.Split(string(b), "\n") {
		n := i + 1
		text = strings.TrimSuffix(text, "\r")
		words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' })
		for j, w := range words {
			if strings.HasPrefix(w, "#") {
				words = words[:j]
				break
			}
		}
		if len(words) == 0 {
			continue
		}
		if text[0] == ' ' || text[0] == '\t' {
			return nil, nil, fmt.Errorf("%s line %d: starts with white space; a line is TOKEN SCOPE [SCOPE …] from its first character", path, n)
		}
		if err := checkToken(words[0]); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if len(words) == 1 {
			return nil, nil, fmt.Errorf("%s line %d: a token without a scope; a line is TOKEN SCOPE [SCOPE …], * for every name", path, n)
		}
		scope, err := httpapi.ParseScope(words[1:]...)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line %d: want TOKEN SCOPE [SCOPE …]: %w", path, n, err)
		}
		out = append(out, tokenLine{secret: words[0], scope: scope, line: n})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: no token in the file (a line is TOKEN SCOPE [SCOPE …])", path)
	}
	return out, info, nil
}

// reloadOnHangup reads the tokens again each time hangup delivers, and puts them
// in force in keys, until ctx is done. A reading that fails leaves the tokens in
// force, logs why at error level and counts it in metrics: a revoked token then
// stays valid, which the operator must see. done is closed when it returns.
func reloadOnHangup(ctx context.Context, hangup <-chan os.Signal, src tokenSources, keys *httpapi.Keyring, m *httpapi.Metrics, log *slog.Logger, done chan<- struct{}) {
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
		m.TokensReloaded(err)
		if err != nil {
			log.Error("SIGHUP: tokens not reloaded, the tokens before stay in force", "err", err.Error())
			continue
		}
		set.logWarnings(log)
		clients, admins := keys.Counts()
		log.Info("tokens reloaded", "client_tokens", clients, "admin_tokens", admins)
	}
}
