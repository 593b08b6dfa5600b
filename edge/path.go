package edge

import (
	"net/url"
	"strings"
)

// CanonicalPath is the path the edge routes on, signs and forwards: u's
// decoded path with duplicate slashes collapsed and dot-segments resolved
// ("%2e%2e" is "..", RFC 3986 §6.2.2.2), step for step as the origin's router
// (fasthttp) normalises what it receives. Matching the origin exactly, not
// merely resolving dots some other way, is what makes the signed path agree
// whichever form a platform forwards: the normalised one (native, Workers) or
// the client's own bytes (the wazero host proxies its copy of the request).
//
// ok is false when the path carries an encoded slash (%2F). RFC 3986 says
// "a%2Fb" is one segment, but the origin decodes it to "a/b" before routing;
// no endpoint has a slash inside a segment, so the honest answer is a 400
// rather than routing one path under two spellings.
//
// A path holding "://" is refused too: fasthttp reads such a request target
// as an absolute URI (scheme, host, path), so "//://" would be signed as
// "/:/" and routed as "/" (found by FuzzCanonicalPathMatchesOrigin).
func CanonicalPath(u *url.URL) (path string, ok bool) {
	if hasEncodedSlash(u.RawPath) || strings.Contains(u.EscapedPath(), "://") {
		return "", false
	}
	return normalizePath(u.Path), true
}

func hasEncodedSlash(raw string) bool {
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] == '%' && raw[i+1] == '2' && (raw[i+2] == 'f' || raw[i+2] == 'F') {
			return true
		}
	}
	return false
}

// normalizePath follows fasthttp's normalizePath (v1.74) after its decoding
// step, including its quirks: a trailing "/." stays, a trailing "/.." keeps
// the slash. FuzzCanonicalPathMatchesOrigin holds the two together.
func normalizePath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
		return p // the common case: nothing to do, no allocation
	}
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if !strings.Contains(p, ".") {
		return p
	}
	for {
		i := strings.Index(p, "/./")
		if i < 0 {
			break
		}
		p = p[:i] + p[i+2:]
	}
	for {
		i := strings.Index(p, "/../")
		if i < 0 {
			break
		}
		j := max(strings.LastIndexByte(p[:i], '/'), 0)
		p = p[:j] + p[i+3:]
	}
	if strings.HasSuffix(p, "/..") {
		j := strings.LastIndexByte(p[:len(p)-3], '/')
		if j < 0 {
			return "/"
		}
		p = p[:j+1]
	}
	return p
}
