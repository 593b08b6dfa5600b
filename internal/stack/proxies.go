package stack

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Behind a reverse proxy (TLS in front, docs/deploy.md) every connection
// comes from the proxy, so every anonymous caller would share the proxy's
// address and its one daily allowance. The proxies the operator names
// (AGENTREADY_TRUSTED_PROXIES) are believed about who they forward for: the
// client is the right-most X-Forwarded-For entry that is not itself a
// trusted proxy. Entries a client wrote itself sit left of it and are never
// read; a connection from anywhere else keeps its own address.

// maxForwardedHops bounds how far back X-Forwarded-For is read.
const maxForwardedHops = 32

// parseTrustedProxies reads AGENTREADY_TRUSTED_PROXIES: comma-separated IP
// addresses and CIDRs.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, raw := range strings.Split(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if len(out) == 64 {
			return nil, fmt.Errorf("AGENTREADY_TRUSTED_PROXIES: more than 64 entries; name the proxies' network as a CIDR instead")
		}
		p, err := netip.ParsePrefix(e)
		if err != nil {
			a, aerr := netip.ParseAddr(e)
			if aerr != nil || a.Zone() != "" {
				shown := e
				if len(shown) > 64 {
					shown = shown[:64] + "…"
				}
				return nil, fmt.Errorf("AGENTREADY_TRUSTED_PROXIES: %q is neither an IP address (10.0.0.7) nor a CIDR (172.16.0.0/12)", shown)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the caller's address for a request that arrived from peer
// (RemoteAddr) carrying the X-Forwarded-For values xff: peer itself unless
// it is a trusted proxy, else the right-most forwarded address that is not.
// An entry that is not an address ends the walk at the hop that wrote it.
func clientAddr(proxies []netip.Prefix, peer string, xff []string) netip.Addr {
	client, err := netip.ParseAddrPort(peer)
	if err != nil || !trusted(proxies, client.Addr()) {
		return netip.Addr{}
	}
	hop := client.Addr().Unmap()
	seen := 0
	for i := len(xff) - 1; i >= 0; i-- {
		entries := strings.Split(xff[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			if seen++; seen > maxForwardedHops {
				return hop
			}
			a, ok := forwardedAddr(strings.TrimSpace(entries[j]))
			if !ok {
				return hop
			}
			hop = a
			if !trusted(proxies, a) {
				return a
			}
		}
	}
	return hop
}

// forwardedAddr reads one X-Forwarded-For entry: an address, or an address
// and port as some proxies write it.
func forwardedAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// fromProxy puts the forwarded client's address in r.RemoteAddr, where both
// edge hosts read the caller's address, when r came through a trusted proxy.
func fromProxy(proxies []netip.Prefix, r *http.Request) {
	if len(proxies) == 0 {
		return
	}
	a := clientAddr(proxies, r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
	if peer, err := netip.ParseAddrPort(r.RemoteAddr); a.IsValid() && err == nil && a != peer.Addr().Unmap() {
		r.RemoteAddr = net.JoinHostPort(a.String(), "0")
	}
}
