package fetch

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/agentready/agentready/engine/clip"
)

// AllowList admits addresses the policy's rules would refuse, for tests and
// local runs (AGENTREADY_ALLOW, serve --allow): one fixture, one receiver,
// instead of every loopback and private address as AllowPrivate does.
// Each entry admits exactly what it names; cloud metadata and link-local
// addresses stay refused whatever the list says (metadataEndpoints).
type AllowList []AllowEntry

// AllowEntry admits the addresses of Prefix: on Port only, when Port is set
// (an IP:port entry), else on the ports the policy admits anyway.
type AllowEntry struct {
	Prefix netip.Prefix
	Port   uint16
}

// MaxAllowEntries bounds the list: every dial compares against each entry.
const MaxAllowEntries = 256

// ParseAllowList reads comma-separated entries: an IP address (10.0.0.7,
// ::1), a CIDR (10.0.0.0/8, fd00::/8), or an address with a port
// (127.0.0.1:8080, [::1]:8443). Host names are refused (they resolve to
// whatever DNS says when the list is used), and so is an entry that holds
// only cloud metadata or link-local addresses, which it could not admit.
// Blank entries are skipped.
func ParseAllowList(s string) (AllowList, error) {
	var l AllowList
	for _, raw := range strings.Split(s, ",") {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			continue
		}
		if len(l) == MaxAllowEntries {
			return nil, fmt.Errorf("more than %d entries; admit a range with a CIDR (10.0.0.0/24) instead", MaxAllowEntries)
		}
		e, err := parseAllowEntry(entry)
		if err != nil {
			return nil, err
		}
		l = append(l, e)
	}
	return l, nil
}

func parseAllowEntry(s string) (AllowEntry, error) {
	bad := func(why string) (AllowEntry, error) {
		return AllowEntry{}, fmt.Errorf("%s %s; write an IP address (10.0.0.7), a CIDR (10.0.0.0/8) or an address with a port (127.0.0.1:8080, [::1]:8443)", clip.Quote(s, 64), why)
	}
	var e AllowEntry
	switch {
	case strings.Contains(s, "/"):
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return bad("is not a valid CIDR")
		}
		if p.Addr().Zone() != "" {
			return bad("carries an IPv6 zone")
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		e.Prefix = p.Masked()
	case strings.HasPrefix(s, "[") || strings.Count(s, ":") == 1:
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			host, _, _ := strings.Cut(s, ":")
			if _, aerr := netip.ParseAddr(host); aerr != nil && !strings.HasPrefix(s, "[") {
				return bad("is not an address with a port (host names are not accepted: they resolve to whatever DNS says)")
			}
			return bad("is not a valid address with a port")
		}
		if ap.Port() == 0 {
			return bad("names port 0")
		}
		if ap.Addr().Zone() != "" {
			return bad("carries an IPv6 zone")
		}
		a := ap.Addr().Unmap()
		e.Prefix, e.Port = netip.PrefixFrom(a, a.BitLen()), ap.Port()
	default:
		a, err := netip.ParseAddr(s)
		if err != nil {
			return bad("is not an IP address (host names are not accepted: they resolve to whatever DNS says)")
		}
		if a.Zone() != "" {
			return bad("carries an IPv6 zone")
		}
		a = a.Unmap()
		e.Prefix = netip.PrefixFrom(a, a.BitLen())
	}
	if onlyNeverScanned(e.Prefix) {
		// Said here rather than at the first dial: the entry would admit
		// nothing, and its author expects it to.
		what := "holds only link-local addresses"
		if e.Prefix.IsSingleIP() {
			what = "is " + strings.TrimSuffix(neverScanned(e.Prefix.Addr()), neverWords)
		}
		return bad(what + ": cloud metadata and link-local addresses are never scanned, whatever the allow-list says")
	}
	return e, nil
}

// String is the list as ParseAllowList reads it back.
func (l AllowList) String() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

func (e AllowEntry) String() string {
	switch {
	case e.Port != 0:
		return netip.AddrPortFrom(e.Prefix.Addr(), e.Port).String()
	case e.Prefix.IsSingleIP():
		return e.Prefix.Addr().String()
	}
	return e.Prefix.String()
}

// admitsAddr reports an entry without a port that holds a. The policy
// refuses metadata and link-local addresses before asking.
func (l AllowList) admitsAddr(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	for _, e := range l {
		if e.Port == 0 && e.Prefix.Contains(a) {
			return true
		}
	}
	return false
}

// admitsAddrPort reports an IP:port entry naming exactly ap.
func (l AllowList) admitsAddrPort(ap netip.AddrPort) bool {
	a := ap.Addr().WithZone("").Unmap()
	for _, e := range l {
		if e.Port != 0 && e.Port == ap.Port() && e.Prefix.Contains(a) {
			return true
		}
	}
	return false
}
