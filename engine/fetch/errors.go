package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrorKind is the stable category of a request that got no HTTP response.
type ErrorKind string

const (
	KindDNS         ErrorKind = "dns"          // the name does not exist
	KindDNSFailure  ErrorKind = "dns_failure"  // the lookup failed or timed out
	KindBlocked     ErrorKind = "blocked"      // the address policy refused it
	KindRefused     ErrorKind = "refused"      // connection refused
	KindReset       ErrorKind = "reset"        // closed or reset before an answer
	KindUnreachable ErrorKind = "unreachable"  // no route to the host
	KindTimeout     ErrorKind = "timeout"      // the per-request timeout passed
	KindDeadline    ErrorKind = "deadline"     // the scan's deadline passed
	KindCanceled    ErrorKind = "canceled"     // the scan was canceled
	KindTLSCert     ErrorKind = "tls_cert"     // the certificate was not accepted
	KindTLS         ErrorKind = "tls"          // the TLS handshake failed otherwise
	KindProtocol    ErrorKind = "protocol"     // the answer was not valid HTTP
	KindRedirects   ErrorKind = "redirects"    // too many redirects
	KindBadRedirect ErrorKind = "bad_redirect" // unusable Location
	KindInvalidURL  ErrorKind = "invalid_url"  // not an absolute http(s) URL
	KindNetwork     ErrorKind = "network"      // any other failure to get an answer
	// KindNotPublic is what an Opaque policy says instead of KindDNS,
	// KindDNSFailure and an address refusal: which of them it was is not
	// told.
	KindNotPublic ErrorKind = "not_public"
)

// notPublic is an Opaque policy's one description of every refused address
// and every name that does not resolve (%s: the host as the caller wrote it).
const notPublic = "%s is not a public address the service can reach: the name does not resolve, or it leads to an address that is not public (loopback, private, link-local, cloud metadata…); check the spelling, and that the host is on the public internet"

// NotPublic is what an Opaque policy says of host (a name that does not
// resolve, or an address it refuses), for other callers of the guard that
// word their own refusals (the browser's proxy).
func NotPublic(host string) string { return fmt.Sprintf(notPublic, host) }

// Error is a request that got no HTTP response. Its message is written for the
// person who asked for the scan and is safe to show them: it never carries a
// library's raw text or an address of the scanner's own network (Go's DNS
// errors name the resolver, "lookup x on 10.0.0.2:53"). Err keeps the cause
// for errors.Is/As and for logs.
type Error struct {
	Kind ErrorKind
	msg  string
	Err  error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.Err }

// Describe returns the user-facing cause of a fetch failure, in precise
// words (a Session's errors carry their own policy's words already).
func Describe(err error) string { return AddressPolicy{}.Explain(err, "") }

// Explain returns the user-facing cause of a failure to reach host (""
// names it "the server"): a Session's error as it was worded, else the
// dialer's or CheckHost's error in this policy's words (one description of
// every refusal and unresolvable name when Opaque).
func (p AddressPolicy) Explain(err error, host string) string {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.msg
	}
	return classify(err, host, nil, 0, p.Opaque).msg
}

// ExplainTarget words the refusal of the address a URL names itself (an
// IP literal, refused before any connection) without repeating it: an API
// answer never echoes the request, and the caller knows what it typed.
// For a policy whose words are precise it says how to admit the address,
// as admitHint does: "its host is a loopback address; … unless allowed:
// add the address with its port (IP:port) to --allow or AGENTREADY_ALLOW
// (comma-separated), or use --allow-private, …".
func (p AddressPolicy) ExplainTarget(err error) string {
	var b *BlockedError
	if !errors.As(err, &b) || b.Port != 0 || !b.Addr.IsValid() {
		return p.Explain(err, "its host")
	}
	msg := "its host is " + b.What + "; agentready does not connect to non-public addresses"
	if p.Opaque || neverScanned(b.Addr) != "" {
		return msg
	}
	return msg + " unless allowed: add the address with its port (IP:port) to --allow or AGENTREADY_ALLOW (comma-separated)" + allowPrivateHint(b)
}

// classify turns a transport error into an *Error. host is the URL's host;
// parent is the caller's context (before the per-request timeout was added),
// to tell the request timeout from the scan's own deadline or cancellation.
// opaque words every address refusal and DNS failure alike (AddressPolicy.Opaque).
func classify(err error, host string, parent context.Context, timeout time.Duration, opaque bool) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	mk := func(k ErrorKind, format string, a ...any) *Error {
		return &Error{Kind: k, msg: fmt.Sprintf(format, a...), Err: err}
	}
	if host == "" {
		host = "the server"
	}
	var blocked *BlockedError
	var dns *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	text := err.Error()
	switch {
	case errors.As(err, &blocked) && opaque && blocked.Port == 0, errors.As(err, &dns) && opaque && (parent == nil || parent.Err() == nil):
		return mk(KindNotPublic, notPublic, host)
	case errors.As(err, &blocked):
		tail := "; agentready does not connect to non-public addresses"
		hint := ""
		if !opaque { // the reader runs agentready: say how to admit it
			hint = admitHint(blocked, host)
		}
		if hint != "" {
			tail += " unless allowed: " + hint
		}
		switch {
		case blocked.Port != 0 && hint != "":
			return mk(KindBlocked, "%s; to scan it anyway, %s", blocked.What, hint)
		case blocked.Port != 0:
			return mk(KindBlocked, "%s", blocked.What)
		case !blocked.Addr.IsValid():
			return mk(KindBlocked, "%s %s", host, blocked.What)
		case blocked.Addr.WithZone("").String() == strings.Trim(host, "[]"):
			return mk(KindBlocked, "%s is %s%s", host, blocked.What, tail)
		}
		// Not the address itself: a caller could otherwise map how the
		// scanner's resolver sees internal names.
		return mk(KindBlocked, "%s resolves to %s%s", host, blocked.What, tail)
	case errors.Is(err, ErrTooManyRedirects):
		return mk(KindRedirects, "the page redirects too many times")
	case parent != nil && errors.Is(parent.Err(), context.Canceled):
		return mk(KindCanceled, "the scan was canceled before %s answered", host)
	case parent != nil && errors.Is(parent.Err(), context.DeadlineExceeded):
		return mk(KindDeadline, "the scan's deadline passed before %s answered", host)
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return mk(KindDNS, "the name %s does not resolve (DNS: no such host)", host)
		}
		if dns.IsTimeout {
			return mk(KindDNSFailure, "the name %s could not be resolved: the DNS lookup timed out", host)
		}
		return mk(KindDNSFailure, "the name %s could not be resolved: the DNS lookup failed", host)
	case errors.Is(err, syscall.ECONNREFUSED):
		return mk(KindRefused, "%s refused the connection (nothing listens on that port)", host)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return mk(KindUnreachable, "%s is unreachable (no route to it)", host)
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return mk(KindTLSCert, "%s", certCause(err, host))
	case errors.As(err, &record):
		return mk(KindTLS, "the TLS handshake with %s failed: it did not answer in TLS (plain HTTP on an https port?)", host)
	case errors.As(err, &alert):
		return mk(KindTLS, "the TLS handshake with %s failed: the server refused it (no TLS version or cipher in common?)", host)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		if timeout > 0 {
			return mk(KindTimeout, "%s did not answer in time (%s per request)", host, timeout)
		}
		return mk(KindTimeout, "%s did not answer in time", host)
	case errors.Is(err, context.Canceled):
		return mk(KindCanceled, "the request to %s was canceled", host)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return mk(KindReset, "%s closed the connection before answering", host)
	case strings.Contains(text, "tls: "):
		return mk(KindTLS, "the TLS handshake with %s failed", host)
	case strings.Contains(text, "exceeded") && strings.Contains(text, "header"):
		return mk(KindProtocol, "%s sent response headers larger than the scanner accepts", host)
	case strings.Contains(text, "malformed"), strings.Contains(text, "http2:"), strings.Contains(text, "stream error"), strings.Contains(text, "protocol"):
		return mk(KindProtocol, "%s answered with something that is not valid HTTP", host)
	}
	return mk(KindNetwork, "the request to %s failed (network error)", host)
}

// admitHint says how the one who runs agentready admits what b refused
// (host as the URL names it): the allow-list entry that names it exactly,
// and --allow-private when that would admit it too; "" when no setting
// does (cloud metadata and link-local addresses, notation refusals). Only
// for a policy whose words are precise: the hosted service's visitors
// cannot change its settings, and its refusals say nothing of addresses.
// The entry names the host only when the URL gave it as an address: the
// address a name resolved to is not told.
func admitHint(b *BlockedError, host string) string {
	port := b.At
	if b.Port != 0 {
		port = uint16(b.Port)
	} else if !b.Addr.IsValid() || neverScanned(b.Addr) != "" {
		return ""
	}
	var entry string
	literal, err := netip.ParseAddr(strings.Trim(host, "[]"))
	switch {
	case err == nil && port != 0:
		entry = netip.AddrPortFrom(literal.WithZone(""), port).String()
	case err == nil:
		entry = literal.WithZone("").String()
	case port != 0:
		entry = fmt.Sprintf("its IP address with the port (IP:%d)", port)
	default:
		entry = "its IP address"
	}
	return "add " + entry + " to --allow or AGENTREADY_ALLOW (comma-separated)" + allowPrivateHint(b)
}

// allowPrivateHint is the end of a hint when --allow-private would admit
// what b refused: loopback, private and CGNAT addresses on any port, and
// any port; not multicast, documentation or reserved addresses.
func allowPrivateHint(b *BlockedError) string {
	if b.Port != 0 || (AddressPolicy{AllowPrivate: true, AllowAnyPort: true}).CheckAddr(b.Addr) == nil {
		return ", or use --allow-private, which admits every loopback and private address on any port"
	}
	return ""
}

// certCause says which part of certificate verification failed.
func certCause(err error, host string) string {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &hostname):
		return fmt.Sprintf("the TLS certificate of %s is not valid for that name", host)
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("the TLS certificate of %s is not signed by a trusted authority (self-signed or incomplete chain?)", host)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("the TLS certificate of %s has expired or is not yet valid", host)
	}
	return fmt.Sprintf("the TLS certificate of %s was not accepted", host)
}
