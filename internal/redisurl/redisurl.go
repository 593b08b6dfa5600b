package redisurl

import "strings"

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
