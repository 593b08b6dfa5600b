package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
)

// keyedPlatform keeps one count per limit key and takes the client address
// from the X-Test-Client header.
type keyedPlatform struct {
	fakePlatform
	counts map[string]int
}

func (p *keyedPlatform) Allow(_ context.Context, key string, limit int, _ time.Duration, n int) (Decision, error) {
	p.counts[key] += n
	return Decision{Allowed: p.counts[key] <= limit, Limit: limit, Remaining: max(limit-p.counts[key], 0), ResetAfter: time.Hour, RetryAfter: time.Hour}, nil
}
func (p *keyedPlatform) ClientIP(r *http.Request) string { return r.Header.Get("X-Test-Client") }

func TestAddressKey(t *testing.T) {
	for _, c := range []struct {
		ip     string
		prefix int
		want   string
	}{
		{"203.0.113.7", 64, "203.0.113.7"},
		{"2001:db8:1:2:aaaa::1", 64, "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", 64, "2001:db8:1:3::/64"},
		{"2001:db8:1:2:aaaa::1", 48, "2001:db8:1::/48"},
		{"2001:db8:1:2:aaaa::1", 128, "2001:db8:1:2:aaaa::1"},
		{"2001:db8:1:2:aaaa::1", 0, "2001:db8:1:2::/64"},
		{"::ffff:203.0.113.7", 64, "203.0.113.7"},
		{"fe80::1%eth0", 64, "fe80::/64"},
		{"not an address", 64, "not an address"},
	} {
		if got := identity.AddressKey(c.ip, c.prefix); got != c.want {
			t.Errorf("AddressKey(%q, %d) = %q, want %q", c.ip, c.prefix, got, c.want)
		}
	}
}

// Every limit that keys on the client's address keys an IPv6 client on its
// /64 (AGENTREADY_IPV6_PREFIX): the anonymous allowance, token minting, the
// tokens' minter claim (which bounds monitors per minter) and the badge
// allowance. Two addresses of one /64 share each; another /64 does not.
func TestIPv6ClientsAreLimitedByTheirBlock(t *testing.T) {
	const a, b, other = "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:3::1"
	keys, _ := token.ParseKeys("k1:" + strings.Repeat("ab", 32))
	for _, c := range []struct {
		name   string
		prefix int
		shared bool
	}{{"the default /64", 0, true}, {"per address (128)", 128, false}} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"AGENTREADY_FREE_DAILY": "1", "AGENTREADY_TOKEN_MINTS_HOURLY": "1", "AGENTREADY_BADGE_DAILY": "1", "AGENTREADY_EDGE_SECRET": "s"}
			if c.prefix != 0 {
				env["AGENTREADY_IPV6_PREFIX"] = "128"
			}
			cfg, err := FromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			cfg.TokenKeys = keys
			p := &keyedPlatform{counts: map[string]int{}}
			h := New(cfg, p)
			want := 299
			if c.shared {
				want = 429
			}
			// The anonymous allowance (1 a day).
			serve(h, "GET", "/api/scan?url=example.com", "", "X-Test-Client", a)
			if w := serve(h, "GET", "/api/scan?url=example.com", "", "X-Test-Client", b); w.Code != want {
				t.Errorf("a second address of the block scanning: %d, want %d", w.Code, want)
			}
			if w := serve(h, "GET", "/api/scan?url=example.com", "", "X-Test-Client", other); w.Code != 299 {
				t.Errorf("another block scanning: %d", w.Code)
			}
			// Token minting (1 an hour).
			mint := func(ip string) int {
				return serve(h, "POST", "/api/agent/token", "grant_type=client_credentials", "Content-Type", "application/x-www-form-urlencoded", "X-Test-Client", ip).Code
			}
			mint(a)
			if got, wantMint := mint(b), map[bool]int{true: 429, false: 200}[c.shared]; got != wantMint {
				t.Errorf("a second address of the block minting: %d, want %d", got, wantMint)
			}
			// The badge allowance (1 a day): the origin is unreachable here, so
			// a miss that passes the allowance reads "unknown", one refused
			// "try later".
			serve(h, "GET", "/api/badge?url=a.example&format=shields", "", "X-Test-Client", a)
			w := serve(h, "GET", "/api/badge?url=b.example&format=shields", "", "X-Test-Client", b)
			if got := strings.Contains(w.Body.String(), "try later"); got != c.shared {
				t.Errorf("a second address of the block, badge refused = %v, want %v: %s", got, c.shared, w.Body.String())
			}
		})
	}
	// The minter claim (monitors per minter count on it): tokens minted from
	// two addresses of one /64 carry one minter, from another /64 another.
	cfg := Config{TokenKeys: keys, IdentitySecret: []byte("s"), TokenMintsPerHour: 100}
	h := New(cfg, &keyedPlatform{counts: map[string]int{}})
	minter := func(ip string) string {
		w := serve(h, "POST", "/api/agent/token", "grant_type=client_credentials", "Content-Type", "application/x-www-form-urlencoded", "X-Test-Client", ip)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if json.Unmarshal(w.Body.Bytes(), &tok) != nil || tok.AccessToken == "" {
			t.Fatalf("mint: %d %s", w.Code, w.Body.String())
		}
		claims, err := keys.Authenticate("Bearer "+tok.AccessToken, "http://example.com", token.Scope, time.Unix(1_800_000_000, 0))
		if err != nil {
			t.Fatal(err)
		}
		return claims.Minter
	}
	if ma, mb, mo := minter(a), minter(b), minter(other); ma == "" || ma != mb || ma == mo {
		t.Errorf("minter claims: %q, %q (same block), %q (another)", ma, mb, mo)
	}
}

// A badge embedded in another site's page shows a stored score, and for a
// site never scanned says so without spending the visitor's scans: the
// cross-site rule holds for the one scan a badge starts.
func TestCrossSiteBadgeSpendsNoScan(t *testing.T) {
	p := &keyedPlatform{counts: map[string]int{}}
	h := New(Config{}, p)
	w := serve(h, "GET", "/api/badge?url=never.example&format=shields", "", "X-Test-Client", "192.0.2.9", "Sec-Fetch-Site", "cross-site")
	if !strings.Contains(w.Body.String(), "not scanned") {
		t.Errorf("a cross-site badge of a site never scanned: %s", w.Body.String())
	}
	for k, n := range p.counts {
		if strings.HasPrefix(k, "scan:") && n != 0 {
			t.Errorf("the visitor's scans were spent: %s = %d", k, n)
		}
	}
	serve(h, "GET", "/api/badge?url=other.example&format=shields", "", "X-Test-Client", "192.0.2.9")
	if p.counts["scan:anonymous:192.0.2.9"] != 1 {
		t.Errorf("a same-site badge miss did not spend one scan: %v", p.counts)
	}
}
