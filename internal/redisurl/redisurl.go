package redisurl

import (
	"errors"
	"strings"
)

// SplitHosts reads the hosts of raw's authority, separated by commas, and
// returns raw with the first alone in their place (net/url reads one
// host, and no list of bracketed IPv6 addresses), and every host.
func SplitHosts(raw string) (first string, hosts []string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw, []string{raw}
	}
	rest := raw[i+3:]
	end := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		end = j
	}
	userinfo, list := "", rest[:end]
	if at := strings.LastIndexByte(list, '@'); at >= 0 {
		userinfo, list = list[:at+1], list[at+1:]
	}
	hosts = strings.Split(list, ",")
	return raw[:i+3] + userinfo + hosts[0] + rest[end:], hosts
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
