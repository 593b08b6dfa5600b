package weburl

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// MaxLength is the longest URL accepted.
const MaxLength = 2048

// Error explains why an input is not a scannable URL; Field is always "url".
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func bad(format string, a ...any) error { return &Error{Reason: fmt.Sprintf(format, a...)} }

// Normalize turns input into the root of the site to scan. A bare host means
// https; an explicit http:// is kept. Path, query and fragment are dropped: a
// scan is of the whole site, starting at its homepage.
func Normalize(input string) (*url.URL, error) {
	s := strings.TrimSpace(input)
	if s == "" {
		return nil, bad("url is empty: give a domain such as example.com or a full http(s) URL")
	}
	if len(s) > MaxLength {
		return nil, bad("url is %d characters long; the limit is %d", len(s), MaxLength)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' {
			return nil, bad("url contains whitespace or control characters")
		}
	}
	if !strings.Contains(s, "://") {
		if i := strings.IndexByte(s, ':'); i > 0 && !strings.ContainsAny(s[:i], "./[") {
			if _, err := strconv.Atoi(strings.SplitN(s[i+1:], "/", 2)[0]); err != nil {
				return nil, bad("url scheme %q is not supported: only http and https can be scanned", strings.ToLower(s[:i]))
			}
		}
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, bad("url does not parse: %v", errors.Unwrap(err))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, bad("url scheme %q is not supported: only http and https can be scanned", u.Scheme)
	}
	if u.User != nil {
		return nil, bad("url must not carry a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return nil, bad("url has no host")
	}
	port := u.Port()
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return nil, bad("url port %q is not a valid port", port)
		}
	}
	host, err = Host(host)
	if err != nil {
		return nil, bad("url %s", err.Error())
	}
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	out := &url.URL{Scheme: u.Scheme, Host: host, Path: "/"}
	if port != "" {
		out.Host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return out, nil
}

// Host is a URL's host as the scanner reads it: an IP address in canonical
// form (IPv6 in brackets), or a fully qualified name (or localhost) in
// lower-case ASCII without its trailing dot. Hosts that resolvers or the
// WHATWG URL standard would read as an IPv4 address although they are not
// dotted decimal (0x7f.1, 2130706433, 127.1, fullwidth digits) are refused,
// as are single-label names (which resolve through search domains). Other
// URLs the service stores or dials (a monitor's callback) apply it too, so
// one set of spelling rules guards them all.
func Host(host string) (string, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		// An IPv4-mapped address is the IPv4 address (written bare, it
		// would not even be a valid URL host).
		a = a.Unmap()
		host = a.String()
		if a.Is6() {
			host = "[" + host + "]"
		}
		return host, nil
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", bad("has no host")
	}
	if strings.Contains(host, "..") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return "", bad("host %q is not a valid domain name: empty label", host)
	}
	ascii, err := idna.Lookup.ToASCII(strings.ToLower(host))
	if err != nil {
		return "", bad("host %q is not a valid domain name: %v", host, err)
	}
	if looksNumericHost(ascii) {
		return "", bad("host %q is a numeric address in a non-standard form; write it as a dotted IPv4 address", host)
	}
	if !strings.Contains(ascii, ".") && ascii != "localhost" {
		return "", bad("host %q is not a fully qualified domain name", host)
	}
	return ascii, nil
}

// looksNumericHost catches hex, octal and dotless forms (0x7f.1, 2130706433)
// that resolvers read as IP addresses.
func looksNumericHost(h string) bool {
	for _, part := range strings.Split(h, ".") {
		if part == "" {
			continue
		}
		p := strings.ToLower(part)
		if strings.HasPrefix(p, "0x") {
			return true
		}
		if _, err := strconv.ParseUint(p, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// Site is the registrable domain of a host (eTLD+1), or the host itself for IP
// addresses, localhost and hosts publicsuffix cannot place.
func Site(host string) string {
	h := strings.ToLower(strings.Trim(host, "[]"))
	if _, err := netip.ParseAddr(h); err == nil {
		return h
	}
	if s, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return s
	}
	return h
}

// SameSite reports whether ref is an http(s) URL on the same registrable domain as base.
func SameSite(base *url.URL, ref string) bool {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return Site(u.Hostname()) == Site(base.Hostname())
}

// SameOrigin reports scheme, host and port equality.
func SameOrigin(base *url.URL, ref string) bool {
	u, err := url.Parse(ref)
	if err != nil {
		return false
	}
	return u.Scheme == base.Scheme && strings.EqualFold(u.Host, base.Host)
}
