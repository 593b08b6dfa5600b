package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// ErrBlockedAddress is returned (wrapped) when a request would reach an address
// the policy refuses.
var ErrBlockedAddress = errors.New("address not allowed")

// AddressPolicy decides which resolved addresses and ports the fetcher may dial.
type AddressPolicy struct {
	// AllowPrivate admits loopback, private (RFC 1918, ULA) and CGNAT addresses:
	// the CLI user scanning their own dev server. Link-local, multicast,
	// unspecified and cloud-metadata addresses stay refused even then.
	AllowPrivate bool
	// AllowAnyPort admits ports other than 80 and 443.
	AllowAnyPort bool
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	benchmark  = netip.MustParsePrefix("198.18.0.0/15")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	reserved   = netip.MustParsePrefix("240.0.0.0/4")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	docV4a     = netip.MustParsePrefix("192.0.2.0/24")
	docV4b     = netip.MustParsePrefix("198.51.100.0/24")
	docV4c     = netip.MustParsePrefix("203.0.113.0/24")
	ietfV4     = netip.MustParsePrefix("192.0.0.0/24")
	docV6      = netip.MustParsePrefix("2001:db8::/32")
	// Addresses cloud providers answer instance-metadata requests on, beyond
	// 169.254.169.254 (which the link-local rule already refuses).
	metadata = []netip.Addr{
		netip.MustParseAddr("100.100.100.200"), // Alibaba
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
	}
)

// embeddedV4 returns the IPv4 address carried inside an IPv6 address by the
// IPv4-mapped, NAT64, 6to4 and Teredo forms, so that a private IPv4 address
// cannot be reached by spelling it as IPv6.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), nat64Local.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredo.Contains(a):
		// Teredo stores the client's IPv4 address inverted in the last 32 bits.
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// CheckAddr reports why the policy refuses addr, or nil if it may be dialled.
func (p AddressPolicy) CheckAddr(a netip.Addr) error {
	a = a.WithZone("")
	if v4, ok := embeddedV4(a); ok {
		if err := p.CheckAddr(v4); err != nil {
			return fmt.Errorf("%s embeds %s: %w", a, v4, err)
		}
		return nil
	}
	for _, m := range metadata {
		if a == m {
			return fmt.Errorf("%s is a cloud metadata address: %w", a, ErrBlockedAddress)
		}
	}
	switch {
	case !a.IsValid(), a.IsUnspecified(), thisNet.Contains(a):
		return fmt.Errorf("%s is unspecified: %w", a, ErrBlockedAddress)
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fmt.Errorf("%s is link-local: %w", a, ErrBlockedAddress)
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fmt.Errorf("%s is multicast: %w", a, ErrBlockedAddress)
	case reserved.Contains(a), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%s is reserved: %w", a, ErrBlockedAddress)
	case docV4a.Contains(a), docV4b.Contains(a), docV4c.Contains(a), docV6.Contains(a), ietfV4.Contains(a), benchmark.Contains(a):
		return fmt.Errorf("%s is not globally routable: %w", a, ErrBlockedAddress)
	}
	private := a.IsLoopback() || a.IsPrivate() || cgnat.Contains(a)
	if private && !p.AllowPrivate {
		return fmt.Errorf("%s is a private or loopback address: %w", a, ErrBlockedAddress)
	}
	return nil
}

// CheckPort reports whether the policy admits the port.
func (p AddressPolicy) CheckPort(port int) error {
	if p.AllowAnyPort || port == 80 || port == 443 {
		return nil
	}
	return fmt.Errorf("port %d: only 80 and 443 are scanned: %w", port, ErrBlockedAddress)
}

// control runs after DNS resolution, on the exact address about to be dialled.
func (p AddressPolicy) control(network, address string, _ syscall.RawConn) error {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %q: %w", address, ErrBlockedAddress)
	}
	port, _ := strconv.Atoi(portStr)
	if err := p.CheckAddr(a); err != nil {
		return err
	}
	return p.CheckPort(port)
}
