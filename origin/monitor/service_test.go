package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

func ptr(s string) *string { return &s }

// hostTable resolves fixed names, as /etc/hosts and a public DNS would;
// other names do not exist.
type hostTable map[string][]string

func (h hostTable) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := h[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.9.8.7:53", IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// names is the resolver of these tests: public receivers, and names that
// lead inside.
var names = hostTable{
	"hooks.example.com": {"93.184.216.34"},
	"h.example":         {"93.184.216.34"},
	"v6.example.com":    {"2606:2800:220:1:248:1893:25c8:1946"},
	"localhost":         {"127.0.0.1"},
	"loopback.example":  {"127.0.0.2"},
	"private.example":   {"10.0.0.3"},
	"ula.example":       {"fd12:3456::1"},
	"linklocal.example": {"169.254.10.10"},
	"metadata.example":  {"169.254.169.254"},
	"mapped.example":    {"::ffff:127.0.0.1"},
	"mixed.example":     {"93.184.216.34", "10.0.0.3"},
}

func newTestService(t *testing.T, cfg Config) *Service {
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newServiceOn(st, cfg)
}

func newServiceOn(st store.Backend, cfg Config) *Service {
	if cfg.Resolver == nil {
		cfg.Resolver = names
	}
	return New(cfg, Deps{Store: st.Monitors(), ValidateURL: func(raw string) (string, error) {
		if strings.Contains(raw, " ") {
			return "", errors.New("not a URL")
		}
		return "https://" + strings.TrimPrefix(raw, "https://") + "/", nil
	}})
}

// The create rules, each refusal naming its field with its own code.
func TestCreateValidation(t *testing.T) {
	s := newTestService(t, Config{MaxPerTier: map[identity.Tier]int{identity.Anonymous: 1}})
	anon := identity.Caller{Tier: identity.Anonymous, Subject: "192.0.2.1"}
	ok := func(r CreateRequest) CreateRequest {
		if r.URL == nil {
			r.URL = ptr("example.com")
		}
		if r.CallbackURL == nil {
			r.CallbackURL = ptr("https://hooks.example.com/agentready")
		}
		return r
	}
	for _, c := range []struct {
		name string
		req  CreateRequest
		code apierr.Code
		says string
	}{
		{"no url", CreateRequest{CallbackURL: ptr("https://h.example/")}, apierr.MissingURL, "url"},
		{"bad url", ok(CreateRequest{URL: ptr("not a url")}), apierr.InvalidURL, "url"},
		{"no callback", CreateRequest{URL: ptr("example.com")}, apierr.InvalidCallbackURL, "callback_url"},
		{"ftp callback", ok(CreateRequest{CallbackURL: ptr("ftp://h.example/")}), apierr.InvalidCallbackURL, "https"},
		{"http callback", ok(CreateRequest{CallbackURL: ptr("http://h.example/")}), apierr.InvalidCallbackURL, "https"},
		{"relative callback", ok(CreateRequest{CallbackURL: ptr("/hook")}), apierr.InvalidCallbackURL, "callback_url"},
		{"private callback", ok(CreateRequest{CallbackURL: ptr("https://10.1.2.3/hook")}), apierr.InvalidCallbackURL, "10.1.2.3 is a private address"},
		{"loopback callback", ok(CreateRequest{CallbackURL: ptr("https://127.0.0.1:8443/hook")}), apierr.InvalidCallbackURL, "loopback"},
		{"metadata callback", ok(CreateRequest{CallbackURL: ptr("https://169.254.169.254/latest")}), apierr.InvalidCallbackURL, "link-local"},
		{"mapped loopback callback", ok(CreateRequest{CallbackURL: ptr("https://[::ffff:127.0.0.1]/hook")}), apierr.InvalidCallbackURL, "loopback"},
		{"localhost callback", ok(CreateRequest{CallbackURL: ptr("https://localhost/hook")}), apierr.InvalidCallbackURL, "localhost resolves to a loopback address"},
		{"name of a private address", ok(CreateRequest{CallbackURL: ptr("https://private.example/hook")}), apierr.InvalidCallbackURL, "private.example resolves to a private address"},
		{"unresolvable callback", ok(CreateRequest{CallbackURL: ptr("https://nowhere.example/hook")}), apierr.InvalidCallbackURL, "nowhere.example does not resolve"},
		{"cadence words only", ok(CreateRequest{Cadence: ptr("soon")}), apierr.InvalidCadence, "cadence"},
		{"cadence too short", ok(CreateRequest{Cadence: ptr("5m")}), apierr.CadenceTooShort, "minimum of 15 minutes"},
		{"cadence too long", ok(CreateRequest{Cadence: ptr("2000h")}), apierr.InvalidCadence, "maximum"},
		{"unknown event", ok(CreateRequest{Events: []string{"scan.started"}}), apierr.InvalidEvents, "events"},
		{"no events", ok(CreateRequest{Events: []string{}}), apierr.InvalidEvents, "events"},
	} {
		_, err := s.Create(context.Background(), anon, "https://agentready.example", c.req)
		var me *apierr.Error
		if !errors.As(err, &me) || me.Code != c.code || !strings.Contains(me.Message, c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
	}
	created, err := s.Create(context.Background(), anon, "https://agentready.example/", ok(CreateRequest{Cadence: ptr("hourly"), Events: []string{"score.changed", "score.changed"}}))
	if err != nil {
		t.Fatal(err)
	}
	m := created.Monitor
	if m.Interval != time.Hour || len(m.Events) != 1 || m.Owner != "" || !strings.HasPrefix(created.Secret, "whsec_") || len(m.ID) != len("mon_")+26 {
		t.Errorf("created %+v secret %q", m, created.Secret)
	}
	_, err = s.Create(context.Background(), anon, "https://agentready.example", ok(CreateRequest{}))
	var me *apierr.Error
	if !errors.As(err, &me) || me.Code != apierr.TooManyMonitors {
		t.Errorf("a second monitor over a maximum of 1: %v", err)
	}
	keyed := identity.Caller{Tier: identity.APIKey, Subject: "acme"}
	km, err := s.Create(context.Background(), keyed, "https://agentready.example", ok(CreateRequest{}))
	if err != nil || km.Monitor.Owner != keyed.Key() {
		t.Fatalf("an API key's monitor is bound to it: %+v %v", km.Monitor, err)
	}
	if _, err := s.Get(context.Background(), anon, km.Monitor.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another caller reads a bound monitor: %v, want not found", err)
	}
	if _, err := s.Get(context.Background(), keyed, km.Monitor.ID); err != nil {
		t.Errorf("its owner cannot read it: %v", err)
	}
	if _, err := s.Get(context.Background(), keyed, m.ID); err != nil {
		t.Errorf("an unbound monitor is readable by whoever holds its id: %v", err)
	}
}

// The guard applies at every attempt, whatever the stored URL says: a name
// that resolves to loopback is refused at dial time and nothing is sent.
func TestDeliveriesGoThroughTheGuard(t *testing.T) {
	var hits atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer recv.Close()
	s := newTestService(t, Config{Timeout: 2 * time.Second})
	port := recv.URL[strings.LastIndex(recv.URL, ":"):]
	m := store.Monitor{ID: "mon_x", CallbackURL: "http://localhost" + port + "/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	out := s.sender.send(context.Background(), m, store.Delivery{ID: "evt_x", Type: "scan.completed", Payload: []byte(`{}`)}, time.Now())
	if out.delivered() || out.code != 0 || !strings.Contains(out.err, "not a public address") && !strings.Contains(out.err, "private") && !strings.Contains(out.err, "loopback") {
		t.Errorf("a loopback receiver by name: %+v", out)
	}
	if strings.Contains(out.err, "127.0.0.1") {
		t.Errorf("the cause names the address: %q", out.err)
	}
	if hits.Load() != 0 {
		t.Errorf("the receiver was reached %d times", hits.Load())
	}
	// Redirects are not followed: a 3xx is a failed attempt, and its target is never asked.
	var redirected atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) }))
	defer target.Close()
	hop := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer hop.Close()
	s = newTestService(t, Config{AllowPrivate: true, Timeout: 2 * time.Second})
	m.CallbackURL = hop.URL
	out = s.sender.send(context.Background(), m, store.Delivery{ID: "evt_x", Type: "scan.completed", Payload: []byte(`{}`)}, time.Now())
	if out.delivered() || out.code != 307 || !strings.Contains(out.err, "redirects are not followed") || redirected.Load() != 0 {
		t.Errorf("a redirecting receiver: %+v (target reached %d times)", out, redirected.Load())
	}
}

func TestNextRun(t *testing.T) {
	due := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now  time.Time
		want time.Time
	}{
		{due.Add(time.Second), due.Add(time.Hour)},                   // on time
		{due.Add(90 * time.Minute), due.Add(time.Hour)},              // late by less than a cadence past the next slot: no slot skipped
		{due.Add(5*time.Hour + time.Minute), due.Add(6 * time.Hour)}, // down for hours: this run stands for the missed ones; the next slot after now, on the cadence's phase
	} {
		if got := nextRun(due, time.Hour, c.now); !got.Equal(c.want) {
			t.Errorf("now %s: next %s, want %s", c.now.Format(time.TimeOnly), got.Format(time.TimeOnly), c.want.Format(time.TimeOnly))
		}
	}
}

// Every numeric and special spelling of a host that the scanner's URL guard
// refuses is refused as a callback at creation, with invalid_callback_url:
// numbers in non-standard IPv4 notations, localhost in any case or with a
// trailing dot, fullwidth digits, IPv6 loopback, private and mapped forms,
// and names that resolve inside (through the resolver deliveries use). A
// public receiver, by name or address and on any port, is accepted.
func TestCallbackSpellings(t *testing.T) {
	refused := []string{
		"https://LOCALHOST/", "https://localhost./", "https://LocalHost.:8443/x", "https://api.localhost/",
		"https://2130706434/", "https://0x7f000002/", "https://0x7F.0.0.2/", "https://127.2/", "https://127.0.2/", "https://0177.0.0.2/",
		"https://017700000002/", "https://0/", "https://0.0.0.0/", "https://127.0.0.2./",
		"https://１２７.０.０.２/", "https://１２７．０．０．２/", "https://２１３０７０６４３４/",
		"https://127.0.0.2/", "https://10.0.0.1/", "https://192.168.1.1:8443/", "https://169.254.169.254/", "https://100.64.0.1/",
		"https://[::1]/", "https://[::]/", "https://[fc00::1]/", "https://[fd12:3456::1]/", "https://[fe80::1]/",
		"https://[::ffff:127.0.0.2]/", "https://[::ffff:7f00:2]/", "https://[::127.0.0.2]/", "https://[::ffff:10.0.0.1]/", "https://[64:ff9b::7f00:2]/",
		"https://loopback.example/", "https://private.example/", "https://ula.example/", "https://linklocal.example/",
		"https://metadata.example/", "https://mapped.example/", "https://mixed.example/", "https://nowhere.example/",
		"https://intranet/",
	}
	accepted := []string{"https://hooks.example.com/agentready", "https://HOOKS.example.com.:8443/x", "https://93.184.216.34/hook", "https://[2606:2800:220:1:248:1893:25c8:1946]:8443/", "https://v6.example.com/"}
	for _, opaque := range []bool{false, true} {
		s := newTestService(t, Config{Policy: fetch.AddressPolicy{Opaque: opaque}, MaxPerTier: map[identity.Tier]int{identity.Anonymous: 100}})
		caller := identity.Caller{Tier: identity.Anonymous, Subject: "192.0.2.1"}
		for _, cb := range refused {
			_, err := s.Create(context.Background(), caller, "https://agentready.example", CreateRequest{URL: ptr("example.com"), CallbackURL: ptr(cb)})
			var me *apierr.Error
			if !errors.As(err, &me) || me.Code != apierr.InvalidCallbackURL {
				t.Errorf("opaque=%v %s: %v, want invalid_callback_url", opaque, cb, err)
				continue
			}
			if strings.Contains(me.Message, "10.9.8.7") || strings.Contains(me.Message, "lookup ") {
				t.Errorf("%s: %q leaks the resolver", cb, me.Message)
			}
		}
		for _, cb := range accepted {
			if _, err := s.Create(context.Background(), caller, "https://agentready.example", CreateRequest{URL: ptr("example.com"), CallbackURL: ptr(cb)}); err != nil {
				t.Errorf("opaque=%v %s: %v", opaque, cb, err)
			}
		}
	}
}

// For the hosted service (Opaque), a callback on a loopback name, a private
// literal, a link-local address or name, and a name that does not resolve
// get one answer; the precise policy (the CLI, --allow-private) tells them
// apart. The same holds of a delivery whose name moved inside after
// creation.
func TestHostedCallbackRefusalsSayOneThing(t *testing.T) {
	cases := map[string]string{ // callback → its host as the message names it
		"https://loopback.example/hook": "loopback.example", "https://10.0.0.1/hook": "10.0.0.1", "https://169.254.169.254/": "169.254.169.254",
		"https://linklocal.example/": "linklocal.example", "https://nowhere.example/hook": "nowhere.example", "https://[fd12:3456::1]/": "fd12:3456::1",
		"https://localhost/": "localhost",
	}
	answer := func(opaque bool) map[string]string {
		s := newTestService(t, Config{Policy: fetch.AddressPolicy{Opaque: opaque}})
		out := map[string]string{}
		for cb, host := range cases {
			_, err := s.Create(context.Background(), identity.Caller{Tier: identity.Anonymous, Subject: "192.0.2.1"}, "https://agentready.example", CreateRequest{URL: ptr("example.com"), CallbackURL: ptr(cb)})
			var me *apierr.Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: %v", cb, err)
			}
			out[cb] = fmt.Sprintf("%d %s %s", me.Code.Status(), me.Code, strings.Replace(me.Message, host, "HOST", 1))
		}
		return out
	}
	hosted, precise := answer(true), answer(false)
	var first string
	for cb, a := range hosted {
		if first == "" {
			first = a
		}
		if a != first {
			t.Errorf("hosted answers differ:\n%s\n%s (%s)", first, a, cb)
		}
	}
	if !strings.HasPrefix(first, "400 invalid_callback_url ") {
		t.Errorf("hosted answer %q", first)
	}
	distinct := map[string]bool{}
	for _, a := range precise {
		distinct[a] = true
	}
	if len(distinct) < 4 {
		t.Errorf("the precise answers should tell the kinds apart: %v", precise)
	}

	// A delivery to a name that now resolves inside, and to one that no
	// longer resolves, fails with that same description.
	s := newTestService(t, Config{Policy: fetch.AddressPolicy{Opaque: true}, Timeout: 2 * time.Second})
	var errs []string
	for _, host := range []string{"loopback.example", "nowhere.example", "private.example"} {
		m := store.Monitor{ID: "mon_x", CallbackURL: "https://" + host + "/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
		out := s.sender.send(context.Background(), m, store.Delivery{ID: "evt_x", Type: "scan.completed", Payload: []byte(`{}`)}, time.Now())
		errs = append(errs, strings.Replace(out.err, host, "HOST", 1))
	}
	if errs[0] != errs[1] || errs[1] != errs[2] || errs[0] == "" {
		t.Errorf("hosted delivery failures differ: %q", errs)
	}
}

// Monitors created with tokens count against the address that minted the
// tokens as well as against each token: however many tokens one address
// mints, they hold MaxPerMinter monitors together. Another address's tokens,
// API keys and anonymous callers are unaffected, and deleting a monitor
// frees its place. On both stores.
func TestTokenMonitorsCountAgainstTheirMinter(t *testing.T) {
	backends := map[string]func(t *testing.T) store.Backend{
		"embedded": func(t *testing.T) store.Backend {
			st, err := store.OpenEmbedded(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"redis": func(t *testing.T) store.Backend {
			r, err := store.OpenRedis(context.Background(), testenv.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r.WithPrefix(fmt.Sprintf("agentready-test:%s:%d:", t.Name(), time.Now().UnixNano()))
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			s := newServiceOn(open(t), Config{MaxPerTier: map[identity.Tier]int{identity.Token: 3, identity.Anonymous: 3}, MaxPerMinter: 10})
			ctx := context.Background()
			create := func(c identity.Caller) (Created, *apierr.Error) {
				created, err := s.Create(ctx, c, "https://agentready.example", CreateRequest{URL: ptr("example.com"), CallbackURL: ptr("https://hooks.example.com/x")})
				var me *apierr.Error
				if err != nil && !errors.As(err, &me) {
					t.Fatalf("%v: %v", c, err)
				}
				return created, me
			}
			// Twelve tokens from one address, each asking for as many as it may.
			var made []Created
			var refusals []string
			for i := range 12 {
				tok := identity.Caller{Tier: identity.Token, Subject: fmt.Sprintf("anon_%02d", i), Minter: "m_addressA"}
				for range 4 {
					c, me := create(tok)
					if me != nil {
						if me.Code != apierr.TooManyMonitors {
							t.Fatalf("%v", me)
						}
						refusals = append(refusals, me.Message)
						continue
					}
					made = append(made, c)
				}
			}
			if len(made) != 10 {
				t.Fatalf("the tokens of one address hold %d monitors, want the ceiling of 10", len(made))
			}
			var perToken, perMinter int
			for _, r := range refusals {
				switch {
				case strings.Contains(r, "tokens minted from this address already hold 10"):
					perMinter++
				case strings.Contains(r, "this caller already has 3"):
					perToken++
				}
			}
			if perMinter == 0 || perToken == 0 || perMinter+perToken != len(refusals) {
				t.Errorf("refusals: %d per token, %d per address, of %d: %q", perToken, perMinter, len(refusals), refusals)
			}
			for _, m := range made {
				if m.Monitor.Minter != "minter:m_addressA" || !strings.HasPrefix(m.Monitor.Owner, "token:anon_") {
					t.Fatalf("created %+v", m.Monitor)
				}
			}

			// Another address's tokens are unaffected; so are API keys and
			// anonymous callers (who have their own allowances).
			if _, me := create(identity.Caller{Tier: identity.Token, Subject: "anon_b", Minter: "m_addressB"}); me != nil {
				t.Errorf("another address's token: %v", me)
			}
			for i := range 12 {
				if _, me := create(identity.Caller{Tier: identity.APIKey, Subject: "acme"}); me != nil {
					t.Fatalf("API key, monitor %d: %v", i+1, me)
				}
			}
			if _, me := create(identity.Caller{Tier: identity.Anonymous, Subject: "192.0.2.1"}); me != nil {
				t.Errorf("anonymous: %v", me)
			}

			// Deleting one frees a place for any token of that address.
			victim := made[0]
			owner := identity.Caller{Tier: identity.Token, Subject: strings.TrimPrefix(victim.Monitor.Owner, "token:"), Minter: "m_addressA"}
			if err := s.Delete(ctx, owner, victim.Monitor.ID); err != nil {
				t.Fatal(err)
			}
			fresh := identity.Caller{Tier: identity.Token, Subject: "anon_fresh", Minter: "m_addressA"}
			if _, me := create(fresh); me != nil {
				t.Errorf("after a delete: %v", me)
			}
			if _, me := create(fresh); me == nil || !strings.Contains(me.Message, "tokens minted from this address") {
				t.Errorf("at the ceiling again: %v", me)
			}
		})
	}
}

// The per-address ceiling of token monitors is a setting; without it the
// default holds.
func TestMinterCeilingSetting(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := FromEnv(env(map[string]string{"AGENTREADY_MONITORS_PER_MINTER": "4"}))
	if err != nil || c.MaxPerMinter != 4 {
		t.Errorf("set: %d %v", c.MaxPerMinter, err)
	}
	if s := newTestService(t, Config{}); s.Config().MaxPerMinter != DefaultMaxPerMinter || DefaultMaxPerMinter != 10 {
		t.Errorf("default: %d", s.Config().MaxPerMinter)
	}
	for _, v := range []string{"0", "-1", "many"} {
		if _, err := FromEnv(env(map[string]string{"AGENTREADY_MONITORS_PER_MINTER": v})); err == nil || !strings.Contains(err.Error(), "AGENTREADY_MONITORS_PER_MINTER") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
