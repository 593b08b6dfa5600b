package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlockedAddress is returned (wrapped) when a request would reach an address
// the policy refuses.
var ErrBlockedAddress = errors.New("address not allowed")

// BlockedError is one refusal by the address policy. Its What is written to
// complete "<host> resolves to …", so a message can say why without naming the
// address a name resolved to (which would let a caller map the resolver's view
// of internal names).
type BlockedError struct {
	Addr netip.Addr // the refused address; zero for a port or notation refusal
	Port int        // the refused port, for a port refusal
	What string     // "a link-local address", "port 8080", …
	// At is the port the refused Addr was to be reached on (CheckAddrPort,
	// the dialer, CheckHost), 0 when not known: what an allow-list entry
	// that admits it must name.
	At uint16
}

func (e *BlockedError) Error() string {
	if e.Addr.IsValid() {
		return fmt.Sprintf("%s is %s: %v", e.Addr, e.What, ErrBlockedAddress)
	}
	return fmt.Sprintf("%s: %v", e.What, ErrBlockedAddress)
}

func (e *BlockedError) Unwrap() error { return ErrBlockedAddress }

// AddressPolicy decides which resolved addresses and ports the fetcher may dial.
type AddressPolicy struct {
	// AllowPrivate admits loopback, private (RFC 1918, ULA) and CGNAT addresses:
	// the CLI user scanning their own dev server. Link-local, multicast,
	// unspecified, reserved, documentation and cloud-metadata addresses stay
	// refused even then (metadataEndpoints: some are ULA or CGNAT addresses).
	AllowPrivate bool
	// AllowAnyPort admits ports other than 80 and 443.
	AllowAnyPort bool
	// Allow admits exactly the addresses (and ports) it lists although the
	// rules above refuse them: the fixture of a test, a local receiver.
	// Cloud metadata and link-local addresses stay refused, even under
	// 0.0.0.0/0 or ::/0.
	Allow AllowList
	// Opaque describes every refused address and every name that does not
	// resolve alike (Describe, Explain, a Session's errors): the hosted
	// service, where saying "resolves to a loopback address" or "does not
	// resolve" would let outsiders map how its resolver sees internal
	// names. Off, the description is precise (the CLI, local runs).
	Opaque bool
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var (
	cgnat    = netip.MustParsePrefix("100.64.0.0/10")
	thisNet  = netip.MustParsePrefix("0.0.0.0/8")
	reserved = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	// IPv4 ranges that no public web site is on (RFC 6890 and successors):
	// IETF protocol assignments, the three documentation nets, benchmarking,
	// and the deprecated 6to4 relay anycast.
	unroutableV4 = prefixes("192.0.0.0/24", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "198.18.0.0/15", "192.88.99.0/24")

	ipv4Compatible = netip.MustParsePrefix("::/96")           // RFC 4291 §2.5.5.1, deprecated
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 SIIT
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	globalUnicast  = netip.MustParsePrefix("2000::/3")
	siteLocal      = netip.MustParsePrefix("fec0::/10") // RFC 3879, deprecated
	// Inside 2000::/3 but not reachable web servers: documentation (old and
	// RFC 9637), benchmarking, ORCHID and ORCHIDv2.
	unroutableV6 = prefixes("2001:db8::/32", "3fff::/20", "2001:2::/48", "2001:10::/28", "2001:20::/28")
)

// embeddedV4 returns the IPv4 addresses an IPv6 address carries in a form some
// host or translator on the path would deliver to: mapped, translated,
// compatible, NAT64, 6to4, Teredo (server and client) and ISATAP. A private
// IPv4 address must not become reachable by spelling it as IPv6.
func embeddedV4(a netip.Addr) []netip.Addr {
	b := a.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case a.IsLoopback(), a.IsUnspecified():
		return nil // ::1 and :: lie in ::/96 but are IPv6's own
	case a.Is4In6(), ipv4Translated.Contains(a), ipv4Compatible.Contains(a), nat64.Contains(a), nat64Local.Contains(a):
		return []netip.Addr{last}
	case sixToFour.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(a):
		// The Teredo server's address is in clear; the client's is stored
		// inverted (RFC 4380 §4).
		return []netip.Addr{
			netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
			netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
		}
	case (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe:
		// ISATAP interface identifier (RFC 5214): ::0:5efe:a.b.c.d or ::200:5efe:a.b.c.d.
		return []netip.Addr{last}
	}
	return nil
}

// CheckAddr reports why the policy refuses addr, or nil if it may be dialled.
// The error is a *BlockedError wrapping ErrBlockedAddress.
// An allow-list entry without a port admits its addresses here; one with a
// port needs the port, so only CheckAddrPort applies it.
func (p AddressPolicy) CheckAddr(a netip.Addr) error {
	if what := neverScanned(a); what != "" {
		return &BlockedError{Addr: a, What: what}
	}
	return p.checkAdmitted(a)
}

// checkAdmitted is CheckAddr after neverScanned: the allow-list, else the
// policy's refusals.
func (p AddressPolicy) checkAdmitted(a netip.Addr) error {
	if p.Allow.admitsAddr(a) {
		return nil
	}
	if what := p.refuse(a.WithZone("")); what != "" {
		return &BlockedError{Addr: a, What: what}
	}
	return nil
}

// refuse names the kind of address a is when the policy refuses it, or "";
// CheckAddr has refused what no setting admits (neverScanned) already.
func (p AddressPolicy) refuse(a netip.Addr) string {
	if !a.IsValid() {
		return "not a valid address"
	}
	if a.Is4() {
		return p.refuse4(a)
	}
	switch {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return p.private("a loopback address")
	}
	if inner := embeddedV4(a); inner != nil {
		if nat64Local.Contains(a) && !p.AllowPrivate {
			return "a local-use NAT64 address"
		}
		rules := p
		if ipv4Compatible.Contains(a) || ipv4Translated.Contains(a) {
			// Deprecated or translator-only forms: no dev server is reached
			// through them (Linux answers "no route" after seconds), so they
			// carry a public address or nothing, whatever AllowPrivate says.
			rules.AllowPrivate = false
		}
		for _, v4 := range inner {
			if what := rules.refuse4(v4); what != "" {
				return "an IPv6 form of " + what
			}
		}
		// These forms exist only to carry the IPv4 address, so it alone
		// decides. 6to4, Teredo and ISATAP addresses are also IPv6 addresses
		// in their own right and go on to the IPv6 rules.
		if a.Is4In6() || ipv4Translated.Contains(a) || ipv4Compatible.Contains(a) || nat64.Contains(a) || nat64Local.Contains(a) {
			return ""
		}
	}
	switch {
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case siteLocal.Contains(a):
		return "a deprecated site-local address"
	case a.IsPrivate():
		return p.private("a private (unique local) address")
	case !globalUnicast.Contains(a):
		return "a reserved IPv6 address"
	case inAny(a, unroutableV6):
		return "a documentation or benchmarking address, not globally routable"
	}
	return ""
}

func (p AddressPolicy) refuse4(a netip.Addr) string {
	switch {
	case thisNet.Contains(a):
		return "an unspecified (0.0.0.0/8) address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case reserved.Contains(a):
		return "a reserved or broadcast address"
	case inAny(a, unroutableV4):
		return "a documentation or benchmarking address, not globally routable"
	case a.IsLoopback():
		return p.private("a loopback address")
	case a.IsPrivate():
		return p.private("a private address")
	case cgnat.Contains(a):
		return p.private("a carrier-grade NAT (shared) address")
	}
	return ""
}

func (p AddressPolicy) private(what string) string {
	if p.AllowPrivate {
		return ""
	}
	return what
}

// CheckPort reports whether the policy admits the port.
func (p AddressPolicy) CheckPort(port int) error {
	if p.AllowAnyPort || port == 80 || port == 443 {
		return nil
	}
	return &BlockedError{Port: port, What: fmt.Sprintf("port %d is not scanned: only ports 80 and 443 are", port)}
}

// CheckAddrPort is CheckAddr then CheckPort, unless an allow-list entry
// names exactly this address and port: what the guarded dialer asks of
// every address it connects to.
func (p AddressPolicy) CheckAddrPort(ap netip.AddrPort) error {
	if what := neverScanned(ap.Addr()); what != "" {
		return &BlockedError{Addr: ap.Addr(), What: what}
	}
	if p.Allow.admitsAddrPort(ap) {
		return nil
	}
	if err := p.checkAdmitted(ap.Addr()); err != nil { // neverScanned has run
		if be, ok := err.(*BlockedError); ok {
			be.At = ap.Port()
		}
		return err
	}
	return p.CheckPort(int(ap.Port()))
}

// GuardedDial is the fetcher's guarded dialer for anything else that connects
// on a user's behalf (the origin's headless browser proxies every request
// through it), so one implementation guards them all. check sees the exact
// address about to be connected to, after resolution, from the dialer's
// Control hook (nothing is sent to a refused address), and once before the
// socket is made; its error is returned, wrapped in a *net.OpError;
// policy.CheckAddrPort is the scanner's check. Names resolve through r
// (nil: the system resolver), every address is tried in turn, and hosts in
// a non-standard IPv4 notation are refused with a *BlockedError.
func GuardedDial(check func(netip.AddrPort) error, r Resolver, timeout time.Duration) func(ctx context.Context, network, address string) (net.Conn, error) {
	if r == nil {
		r = net.DefaultResolver
	}
	return newCheckedDialer(check, timeout, r).DialContext
}

// Resolver looks up the addresses of a host name. *net.Resolver satisfies it;
// tests give a map, so that rebinding can be shown without DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// guardedDialer dials only addresses the policy admits. The check sits in the
// dialer's Control hook, which sees the address actually being connected to
// after resolution, so a name that resolves differently at dial time (DNS
// rebinding) or a redirect to a private address is caught where it matters.
type guardedDialer struct {
	check    func(netip.AddrPort) error
	dialer   *net.Dialer
	resolver Resolver // nil: the dialer resolves (with happy eyeballs)
}

func newGuardedDialer(policy AddressPolicy, timeout time.Duration, r Resolver) *guardedDialer {
	return newCheckedDialer(policy.CheckAddrPort, timeout, r)
}

func newCheckedDialer(check func(netip.AddrPort) error, timeout time.Duration, r Resolver) *guardedDialer {
	d := &guardedDialer{check: check, resolver: r}
	d.dialer = &net.Dialer{Timeout: timeout, Control: d.control}
	return d
}

// control runs after DNS resolution, on the exact address about to be dialled.
func (d *guardedDialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{What: "is not an address the scanner can parse"}
	}
	return d.check(ap)
}

func (d *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &BlockedError{What: "is not an address the scanner can parse"}
	}
	if _, err := netip.ParseAddr(host); err != nil && numericHost(host) {
		// Resolvers differ on "0x7f.1" or "2130706433" (getaddrinfo reads them
		// as 127.0.0.1, Go's resolver asks DNS): refuse rather than guess.
		return nil, &BlockedError{What: nonStandardIPv4}
	}
	if d.resolver == nil {
		return d.dialer.DialContext(ctx, network, address)
	}
	return d.dialResolved(ctx, network, host, portStr)
}

// dialResolved resolves through the configured Resolver and tries each
// address in turn, sharing the dial timeout between them as net.Dialer does.
func (d *guardedDialer) dialResolved(ctx context.Context, network, host, port string) (net.Conn, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		family := "ip"
		switch network {
		case "tcp4":
			family = "ip4"
		case "tcp6":
			family = "ip6"
		}
		addrs, err = d.resolver.LookupNetIP(ctx, family, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, &BlockedError{What: "is not an address the scanner can parse"}
	}
	var first error
	for i, a := range addrs {
		ap := netip.AddrPortFrom(a.WithZone(""), uint16(p))
		if err := d.check(ap); err != nil {
			// Refused before a socket is made, so the refusal reads the
			// same on a host without IPv6 (where making an IPv6 socket
			// would fail first); the Control hook still checks every dial.
			if first == nil {
				first = &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(ap), Err: err}
			}
			continue
		}
		actx := ctx
		if deadline, ok := ctx.Deadline(); ok {
			share := time.Until(deadline) / time.Duration(len(addrs)-i)
			if share < 2*time.Second {
				share = 2 * time.Second
			}
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, share)
			defer cancel()
		}
		c, err := d.dialer.DialContext(actx, network, ap.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

const nonStandardIPv4 = "is a number in a non-standard IPv4 notation; the scanner does not guess which address it means (write it as dotted decimal)"

// NonStandardIPv4 reports a host the guarded dialer refuses for being a
// number in a non-standard IPv4 notation (see numericHost), so a caller can
// refuse it up front with the same rule.
func NonStandardIPv4(host string) bool {
	_, err := netip.ParseAddr(host)
	return err != nil && numericHost(host)
}

// CheckHost applies the dialer's rules to a host and port before anything
// is sent, for a URL that is stored now and dialled later (a monitor's
// callback): a number in a non-standard IPv4 notation is refused, localhost
// names (RFC 6761) are loopback, and every address a name resolves to
// through r (nil: the system resolver) must be admitted. The dialer checks
// again at every connection, since DNS answers change. The errors are the
// dialer's (*BlockedError, *net.DNSError), so Explain words them alike.
func (p AddressPolicy) CheckHost(ctx context.Context, r Resolver, host string, port int) error {
	host = strings.Trim(host, "[]")
	if port < 1 || port > 65535 {
		return &BlockedError{What: "has no valid port"}
	}
	if NonStandardIPv4(host) {
		return &BlockedError{What: nonStandardIPv4}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.WithZone("")}
	} else if name := strings.ToLower(strings.TrimSuffix(host, ".")); name == "localhost" || strings.HasSuffix(name, ".localhost") {
		addrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	} else {
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return err
		}
		if len(addrs) == 0 {
			return &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	}
	// Every answer, not one: the name is stored, and the address it leads
	// to at delivery time is any of them.
	for _, a := range addrs {
		if err := p.CheckAddrPort(netip.AddrPortFrom(a.WithZone(""), uint16(port))); err != nil {
			return err
		}
	}
	return nil
}

// numericHost reports a host that an inet_aton-style parser or the WHATWG URL
// standard would read as an IPv4 address although it is not dotted decimal:
// its last label is a number (decimal, 0x-hex or 0-octal), as in 2130706433,
// 0x7f.1, 127.1 or 0177.0.0.1.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	i := strings.LastIndexByte(host, '.')
	label := strings.ToLower(host[i+1:])
	if label == "" {
		return false
	}
	if strings.HasPrefix(label, "0x") {
		_, err := strconv.ParseUint(label[2:]+"0", 16, 64) // "0x" alone counts as 0
		return err == nil || errors.Is(err, strconv.ErrRange)
	}
	for _, r := range label {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// GuardedClient is an HTTP client for calls made on a user's behalf outside
// a scan (webhook deliveries, the payment facilitator): every dial checked
// by policy, no proxy (it would dial past the guard), redirects not
// followed, and timeout bounding the whole call as well as the TLS
// handshake and the wait for the response headers.
// Names resolve through r (nil: the system resolver).
func GuardedClient(policy AddressPolicy, r Resolver, timeout time.Duration, idlePerHost int) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           GuardedDial(policy.CheckAddrPort, r, timeout),
			Proxy:                 nil,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   idlePerHost,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
