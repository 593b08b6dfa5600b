package identity

import (
	"testing"
	"time"
)

// A signature covers the identity and the request it travels with: another
// path, query, body or method, another secret, an old timestamp or a
// forged tier is refused, and each signature carries a nonce of its own.
func TestSignedIdentity(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	req := Request{Method: "POST", Path: "/api/scan", Query: "format=json", Body: []byte(`{"url":"example.com"}`)}
	h := Sign(secret, Caller{Tier: APIKey, Subject: "acme"}, "203.0.113.7", req, now)
	get := func(k string) string { return h[k] }
	c, ip, nonce, ok := Verify(secret, get, req, now.Add(10*time.Second))
	if !ok || c.Tier != APIKey || c.Subject != "acme" || ip != "203.0.113.7" || len(nonce) != 32 {
		t.Fatalf("%v %v %q %v", c, ip, nonce, ok)
	}
	if again := Sign(secret, Caller{Tier: APIKey, Subject: "acme"}, "203.0.113.7", req, now); again[HeaderNonce] == nonce || again[HeaderCallerSig] == h[HeaderCallerSig] {
		t.Error("two signatures of one request share a nonce or a signature")
	}
	edit := func(f func(r *Request)) Request {
		r := req
		f(&r)
		return r
	}
	headers := func(f func(map[string]string)) func(string) string {
		h2 := map[string]string{}
		for k, v := range h {
			h2[k] = v
		}
		f(h2)
		return func(k string) string { return h2[k] }
	}
	for name, f := range map[string]func() bool{
		"another path": func() bool {
			_, _, _, ok := Verify(secret, get, edit(func(r *Request) { r.Path = "/api/mcp" }), now)
			return ok
		},
		"another query": func() bool {
			_, _, _, ok := Verify(secret, get, edit(func(r *Request) { r.Query = "format=json&fresh=1" }), now)
			return ok
		},
		"another body": func() bool {
			_, _, _, ok := Verify(secret, get, edit(func(r *Request) { r.Body = []byte(`{"url":"other.example"}`) }), now)
			return ok
		},
		"another method": func() bool {
			_, _, _, ok := Verify(secret, get, edit(func(r *Request) { r.Method = "GET" }), now)
			return ok
		},
		"query into path": func() bool {
			_, _, _, ok := Verify(secret, get, edit(func(r *Request) { r.Path, r.Query = "/api/scan|format=json", "" }), now)
			return ok
		},
		"another secret": func() bool { _, _, _, ok := Verify([]byte("x"), get, req, now); return ok },
		"too old":        func() bool { _, _, _, ok := Verify(secret, get, req, now.Add(2*time.Minute)); return ok },
		"another nonce": func() bool {
			_, _, _, ok := Verify(secret, headers(func(m map[string]string) { m[HeaderNonce] = "00000000000000000000000000000000" }), req, now)
			return ok
		},
		"no nonce": func() bool {
			_, _, _, ok := Verify(secret, headers(func(m map[string]string) { delete(m, HeaderNonce) }), req, now)
			return ok
		},
		"forged tier": func() bool {
			_, _, _, ok := Verify(secret, headers(func(m map[string]string) { m[HeaderCaller] = "key:someone-else" }), req, now)
			return ok
		},
		"no secret": func() bool { _, _, _, ok := Verify(nil, get, req, now); return ok },
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
	req := Request{Method: "POST", Path: "/api/monitors", Body: []byte(`{}`)}
	tok := Sign(secret, Caller{Tier: Token, Subject: "anon_1", Minter: "m_abc"}, "203.0.113.7", req, now)
	anon := Sign(secret, Caller{Tier: Anonymous, Subject: "203.0.113.7"}, "203.0.113.7", req, now)
	if _, present := anon[HeaderMinter]; present {
		t.Error("a caller without a minter sends the minter header")
	}
	verify := func(h map[string]string, change func(map[string]string)) (Caller, bool) {
		c := map[string]string{}
		for k, v := range h {
			c[k] = v
		}
		change(c)
		got, _, _, ok := Verify(secret, func(k string) string { return c[k] }, req, now)
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
