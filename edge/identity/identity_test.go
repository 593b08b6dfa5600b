package identity

import (
	"testing"
	"time"
)

func TestSignedIdentity(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	h := Sign(secret, Caller{Tier: APIKey, Subject: "acme"}, "203.0.113.7", "POST", "/api/mcp", now)
	get := func(k string) string { return h[k] }
	c, ip, ok := Verify(secret, get, "POST", "/api/mcp", now.Add(10*time.Second))
	if !ok || c.Tier != APIKey || c.Subject != "acme" || ip != "203.0.113.7" {
		t.Fatalf("%v %v %v", c, ip, ok)
	}
	for name, f := range map[string]func() bool{
		"other path":   func() bool { _, _, ok := Verify(secret, get, "POST", "/api/scan", now); return ok },
		"other secret": func() bool { _, _, ok := Verify([]byte("x"), get, "POST", "/api/mcp", now); return ok },
		"too old":      func() bool { _, _, ok := Verify(secret, get, "POST", "/api/mcp", now.Add(2*time.Minute)); return ok },
		"forged tier": func() bool {
			h2 := map[string]string{}
			for k, v := range h {
				h2[k] = v
			}
			h2[HeaderCaller] = "key:someone-else"
			_, _, ok := Verify(secret, func(k string) string { return h2[k] }, "POST", "/api/mcp", now)
			return ok
		},
		"no secret": func() bool { _, _, ok := Verify(nil, get, "POST", "/api/mcp", now); return ok },
	} {
		if f() {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A token caller's minter is signed with the rest: changing, adding or
// dropping it breaks the signature.
func TestSignedMinter(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	tok := Sign(secret, Caller{Tier: Token, Subject: "anon_1", Minter: "m_abc"}, "203.0.113.7", "POST", "/api/monitors", now)
	anon := Sign(secret, Caller{Tier: Anonymous, Subject: "203.0.113.7"}, "203.0.113.7", "POST", "/api/monitors", now)
	if _, present := anon[HeaderMinter]; present {
		t.Error("a caller without a minter sends the minter header")
	}
	verify := func(h map[string]string, change func(map[string]string)) (Caller, bool) {
		c := map[string]string{}
		for k, v := range h {
			c[k] = v
		}
		change(c)
		got, _, ok := Verify(secret, func(k string) string { return c[k] }, "POST", "/api/monitors", now)
		return got, ok
	}
	if c, ok := verify(tok, func(map[string]string) {}); !ok || c.Minter != "m_abc" || c.Subject != "anon_1" {
		t.Fatalf("%+v %v", c, ok)
	}
	for name, change := range map[string]func(map[string]string){
		"changed": func(h map[string]string) { h[HeaderMinter] = "m_other" },
		"dropped": func(h map[string]string) { delete(h, HeaderMinter) },
		"moved into the address": func(h map[string]string) {
			h[HeaderClientIP] += "|" + h[HeaderMinter]
			delete(h, HeaderMinter)
		},
	} {
		if _, ok := verify(tok, change); ok {
			t.Errorf("minter %s: accepted", name)
		}
	}
	if _, ok := verify(anon, func(h map[string]string) { h[HeaderMinter] = "m_abc" }); ok {
		t.Error("a minter added to an anonymous identity: accepted")
	}
}
