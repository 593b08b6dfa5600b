package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// v4Spellings are the IPv6 addresses that carry v4 for some host or
// translator on the path: the forms embeddedV4 reads.
func v4Spellings(v4 netip.Addr) []string {
	b := v4.As4()
	inv := [4]byte{^b[0], ^b[1], ^b[2], ^b[3]}
	hex := func(x [4]byte) string {
		return fmt.Sprintf("%x:%x", uint16(x[0])<<8|uint16(x[1]), uint16(x[2])<<8|uint16(x[3]))
	}
	return []string{
		"::ffff:" + v4.String(),                    // IPv4-mapped
		"::" + v4.String(),                         // IPv4-compatible
		"::ffff:0:" + v4.String(),                  // IPv4-translated
		"64:ff9b::" + v4.String(),                  // NAT64
		"64:ff9b:1::" + hex(b),                     // local-use NAT64
		"2002:" + hex(b) + "::1",                   // 6to4
		"2001:0:" + hex(b) + "::1",                 // Teredo server
		"2001:0:4136:e378:8000:63bf:" + hex(inv),   // Teredo client
		"2a00:1450:4001:81b:0:5efe:" + v4.String(), // ISATAP
		"fd00::200:5efe:" + v4.String(),            // ISATAP in a ULA
	}
}

// Every metadata address listed in named below, every entry of the table, the
// rest of link-local space and the IPv6 spellings of each IPv4 one are
// refused under every policy: the hosted one, --allow-private (with any
// port) and an allow-list of everything, 0.0.0.0/0 and ::/0, with and
// without a port entry naming the address. Their neighbours, which the
// same settings admit, show that the refusal is this rule's.
func TestMetadataNeverScanned(t *testing.T) {
	named := []string{
		"169.254.169.254", "169.254.0.1", "169.254.255.255", "169.254.170.2", "169.254.170.23", "169.254.0.23", "169.254.42.42",
		"192.0.0.192", "100.100.100.200", "168.63.129.16",
		"fd00:ec2::254", "fd00:ec2::23", "fd20:ce::254", "fd00:c1::a9fe:a9fe", "fd00:42::42", "fd00:a9fe:a9fe::1", "fd00:100::100:200",
		"fe80::a9fe:a9fe", "fe80::1", "febf:ffff::1", "FD00:EC2:0::254",
	}
	for _, m := range metadataEndpoints {
		named = append(named, m.Prefix.Addr().String())
	}
	var addrs []string
	for _, s := range named {
		addrs = append(addrs, s)
		if a := netip.MustParseAddr(s); a.Is4() {
			addrs = append(addrs, v4Spellings(a)...)
		}
	}
	everything, err := ParseAllowList("0.0.0.0/0, ::/0")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]AddressPolicy{
		"hosted":                      {},
		"allow-private":               {AllowPrivate: true, AllowAnyPort: true},
		"allow 0.0.0.0/0,::/0":        {Allow: everything},
		"allow-private and allow all": {Allow: everything, AllowPrivate: true, AllowAnyPort: true},
	}
	for _, s := range addrs {
		a := netip.MustParseAddr(s)
		exact := AllowList{{Prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), Port: 80}}
		policies["an IP:port entry naming it"] = AddressPolicy{Allow: exact}
		for name, p := range policies {
			for _, err := range []error{p.CheckAddr(a), p.CheckAddrPort(netip.AddrPortFrom(a, 80))} {
				var be *BlockedError
				if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddress) {
					t.Errorf("%s, %s: %v, want a refusal", name, s, err)
					continue
				}
				if !strings.HasSuffix(be.What, "which is never scanned") || !strings.Contains(be.What, "metadata") && !strings.Contains(be.What, "link-local") {
					t.Errorf("%s, %s: refused as %q, want it named a metadata or link-local address that is never scanned", name, s, be.What)
				}
			}
		}
	}
	// The named metadata addresses say so, not merely "link-local".
	for _, s := range []string{"169.254.169.254", "fd20:ce::254", "::ffff:192.0.0.192", "2002:6464:64c8::1", "fe80::a9fe:a9fe"} {
		err := (AddressPolicy{Allow: everything}).CheckAddr(netip.MustParseAddr(s))
		if err == nil || !strings.Contains(err.Error(), "cloud metadata address") {
			t.Errorf("%s: %v, want it named a cloud metadata address", s, err)
		}
	}

	neighbours := []struct {
		addr   string
		policy string
	}{
		{"169.253.255.255", "hosted"}, {"169.255.0.1", "hosted"},
		{"100.100.100.201", "allow-private"}, {"168.63.129.17", "hosted"},
		{"192.0.0.193", "allow 0.0.0.0/0,::/0"}, {"::ffff:192.0.0.193", "allow 0.0.0.0/0,::/0"},
		{"fd00:ec2::255", "allow-private"}, {"fd20:ce::253", "allow-private"}, {"fd00:c1::a9fe:a9ff", "allow-private"},
		{"fd00:42::43", "allow-private"}, {"fec0::1", "allow 0.0.0.0/0,::/0"}, {"fe00::1", "allow 0.0.0.0/0,::/0"},
	}
	for _, n := range neighbours {
		if err := policies[n.policy].CheckAddrPort(netip.AddrPortFrom(netip.MustParseAddr(n.addr), 80)); err != nil {
			t.Errorf("%s, neighbour %s: %v, want it admitted", n.policy, n.addr, err)
		}
	}
}

// At dial time: a name that resolves to a metadata address is refused
// before any connection, under an allow-list of everything, and the
// message names the host and the kind of address, not the address.
func TestMetadataRefusedAtDial(t *testing.T) {
	everything, err := ParseAllowList("0.0.0.0/0,::/0")
	if err != nil {
		t.Fatal(err)
	}
	res := newMapResolver()
	for i, s := range []string{"169.254.169.254", "fd00:ec2::254", "fd20:ce::254", "fd00:c1::a9fe:a9fe", "fd00:42::42", "fe80::a9fe:a9fe", "192.0.0.192", "::ffff:100.100.100.200", "64:ff9b::a9fe:a9fe"} {
		name := "m" + string(rune('a'+i)) + ".test"
		res.set(name, s)
		for _, p := range []AddressPolicy{{Allow: everything, AllowPrivate: true, AllowAnyPort: true}, {AllowPrivate: true, AllowAnyPort: true}} {
			c := NewClient(Config{Resolver: res, Policy: p})
			r := c.NewSession().Do(context.Background(), Request{URL: "http://" + name + "/latest/meta-data/"})
			var fe *Error
			if !errors.As(r.Err, &fe) || fe.Kind != KindBlocked {
				t.Errorf("%s → %s: %v, want a refusal by the guard", name, s, r.Err)
				continue
			}
			msg := r.Err.Error()
			if !strings.Contains(msg, name+" resolves to a") || !strings.Contains(msg, "cloud metadata address") || !strings.Contains(msg, "never scanned") {
				t.Errorf("%s → %s: %q, want the host, the kind of address and that it is never scanned", name, s, msg)
			}
			if strings.Contains(msg, s) || strings.Contains(msg, netip.MustParseAddr(s).Unmap().String()) {
				t.Errorf("%s → %s: %q names the address", name, s, msg)
			}
		}
	}
}

// The README's table of what is never scanned lists every entry of
// metadataEndpoints, so the documentation cannot fall behind the code.
func TestMetadataTableDocumented(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	rows := map[string]string{} // address → "cloud | source", as the table writes them
	for _, line := range strings.Split(readme, "\n") {
		if addr, rest, ok := strings.Cut(line, "` | "); ok && strings.HasPrefix(addr, "| `") {
			rows[strings.TrimPrefix(addr, "| `")] = strings.ReplaceAll(strings.TrimSuffix(rest, " |"), "`", "")
		}
	}
	for _, m := range metadataEndpoints {
		if m.Source == "" || m.Cloud == "" {
			t.Errorf("%s has no cloud or no source", m.Prefix)
		}
		if got, want := rows[m.Prefix.Addr().String()], m.Cloud+" | "+m.Source; got != want {
			t.Errorf("README.md's row for %s says %q, the code %q", m.Prefix.Addr(), got, want)
		}
	}
	for _, p := range linkLocal {
		if !strings.Contains(readme, "`"+p.String()+"`") {
			t.Errorf("README.md does not say that %s is never scanned", p)
		}
	}
}
