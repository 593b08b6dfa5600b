package redisurl

import (
	"errors"
	"strings"
)

// SplitHosts reads the hosts of raw's authority, separated by commas, and
// returns raw with the first alone in their place (net/url reads one
// host, and no list of bracketed IPv6 addresses), and every host.
func SplitHosts(raw string) (first string, hosts []string) {
	a, ok := authorityOf(raw)
	if !ok {
		return raw, []string{raw}
	}
	hosts = strings.Split(a.hosts, ",")
	return a.scheme + a.userinfo + hosts[0] + a.tail, hosts
}

// authority is a URL split around its host list: scheme (with "://"),
// userinfo (with its '@'), the comma-separated hosts, and the tail (path,
// query and fragment).
type authority struct{ scheme, userinfo, hosts, tail string }

// authorityOf splits raw as net/url would if it read a list of hosts: the
// authority ends at the first '/', '?' or '#', and the userinfo at its last
// '@'. ok is false without a "://".
func authorityOf(raw string) (authority, bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return authority{}, false
	}
	rest := raw[i+3:]
	end := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		end = j
	}
	a := authority{scheme: raw[:i+3], hosts: rest[:end], tail: rest[end:]}
	if at := strings.LastIndexByte(a.hosts, '@'); at >= 0 {
		a.userinfo, a.hosts = a.hosts[:at+1], a.hosts[at+1:]
	}
	return a, true
}

// Ambiguous reports whether raw has an '@' after its authority ends: a
// password with an unencoded '/', '?' or '#', which net/url reads as the
// host and the path, so that a piece of the password would become a host
// that errors and logs name. Such a URL is refused, not guessed at.
func Ambiguous(raw string) bool {
	i := strings.Index(raw, "://")
	if i < 0 {
		return false
	}
	rest := raw[i+3:]
	j := strings.IndexAny(rest, "/?#")
	return j >= 0 && strings.Contains(rest[j:], "@")
}

// ErrAmbiguous is the refusal of an Ambiguous REDIS_URL.
var ErrAmbiguous = errors.New("REDIS_URL has an '@' after its host: percent-encode '/', '?', '#' and '@' in the user name and password (%2F, %3F, %23, %40)")

// Seeds reads every node raw names: the hosts of its authority, separated
// by commas, then the values of its addr parameters, in go-redis's own
// Cluster URL form (redis://user:password@h1:p1?addr=h2:p2&addr=h3:p3);
// both may be mixed. Spaces around a node are dropped. first is raw with
// the first node alone in the authority and no addr parameter, the URL
// net/url and go-redis's ParseURL read; several nodes mean a Redis Cluster.
// An empty node (two commas, an empty addr) is returned as "", for the
// caller to refuse.
func Seeds(raw string) (first string, hosts []string) {
	a, ok := authorityOf(raw)
	if !ok {
		return raw, []string{raw}
	}
	for _, h := range strings.Split(a.hosts, ",") {
		hosts = append(hosts, strings.TrimSpace(h))
	}
	// The fragment starts at the first '#', the query at the first '?' before it.
	path, query, frag := a.tail, "", ""
	if k := strings.IndexByte(path, '#'); k >= 0 {
		path, frag = path[:k], path[k:]
	}
	if k := strings.IndexByte(path, '?'); k >= 0 {
		path, query = path[:k], path[k+1:]
	}
	var kept []string
	for _, p := range strings.Split(query, "&") {
		switch {
		case p == "":
		case p == "addr":
			hosts = append(hosts, "")
		case strings.HasPrefix(p, "addr="):
			hosts = append(hosts, strings.TrimSpace(unescape(p[len("addr="):])))
		default:
			kept = append(kept, p)
		}
	}
	first = a.scheme + a.userinfo + hosts[0] + path
	if len(kept) > 0 {
		first += "?" + strings.Join(kept, "&")
	}
	return first + frag, hosts
}

// unescape decodes a query value as net/url does ('+' is a space, %XX a
// byte); a '%' not followed by two hex digits is kept as it is.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && strings.IndexByte(hex, lower(s[i+1])) >= 0 && strings.IndexByte(hex, lower(s[i+2])) >= 0:
			b.WriteByte(byte(strings.IndexByte(hex, lower(s[i+1]))<<4 | strings.IndexByte(hex, lower(s[i+2]))))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
