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
