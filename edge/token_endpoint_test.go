package edge

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
)

// addressPlatform is the fake platform with a client address the test sets.
type addressPlatform struct {
	forwardHeaders
	ip *string
}

func (p addressPlatform) ClientIP(*http.Request) string { return *p.ip }

// A token carries the minter of the address that asked for it: the same for
// every token one address mints, another for another address, never the
// address itself. The edge passes it on in the signed identity of the
// token's requests, and a client cannot state one of its own.
func TestTokensCarryTheirMinter(t *testing.T) {
	keys, _ := token.ParseKeys("k1:" + strings.Repeat("k", 32))
	secret := []byte("edge-identity-secret-for-the-minter")
	var sent http.Header
	ip := "203.0.113.9"
	p := addressPlatform{forwardHeaders{&fakePlatform{}, &sent}, &ip}
	h := New(Config{TokenKeys: keys, IdentitySecret: secret, BaseURL: "https://ar.example"}, p)
	mint := func(addr string) (string, token.Claims) {
		t.Helper()
		ip = addr
		w := serve(h, "POST", "/api/agent/token", `{"grant_type":"client_credentials"}`, "Content-Type", "application/json")
		var out struct {
			AccessToken string `json:"access_token"`
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &out) != nil {
			t.Fatalf("mint from %s: %d %s", addr, w.Code, w.Body)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.Split(out.AccessToken, ".")[2])
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), addr) {
			t.Errorf("the claims a holder can read carry the address: %s", raw)
		}
		var c token.Claims
		json.Unmarshal(raw, &c)
		return out.AccessToken, c
	}
	tokA1, a1 := mint("203.0.113.9")
	_, a2 := mint("203.0.113.9")
	_, b := mint("2001:db8::9")
	if a1.Minter == "" || a1.Minter != a2.Minter || a1.Subject == a2.Subject {
		t.Errorf("two tokens of one address: minters %q %q, subjects %q %q", a1.Minter, a2.Minter, a1.Subject, a2.Subject)
	}
	if b.Minter == a1.Minter {
		t.Errorf("another address has the same minter %q", b.Minter)
	}
	if a1.Minter != token.MinterOf(secret, "203.0.113.9") || token.MinterOf([]byte("another secret of 32 bytes......"), "203.0.113.9") == a1.Minter {
		t.Error("the minter is the keyed hash of the address under the identity secret")
	}

	// Its requests carry the minter, signed; a client's own minter header
	// is dropped from an anonymous request.
	w := serve(h, "POST", "/api/monitors", `{}`, "Content-Type", "application/json", "Authorization", "Bearer "+tokA1)
	monitors := identity.Request{Method: "POST", Path: "/api/monitors", Body: []byte(`{}`)}
	c, _, _, ok := identity.Verify(secret, sent.Get, monitors, p.Now())
	if w.Code != 299 || !ok || c.Tier != identity.Token || c.Subject != a1.Subject || c.Minter != a1.Minter {
		t.Fatalf("forwarded identity %+v ok=%v (status %d)", c, ok, w.Code)
	}
	serve(h, "POST", "/api/monitors", `{}`, "Content-Type", "application/json", identity.HeaderMinter, a1.Minter)
	c, _, _, ok = identity.Verify(secret, sent.Get, monitors, p.Now())
	last := p.forwarded[len(p.forwarded)-1]
	if !ok || c.Tier != identity.Anonymous || c.Minter != "" || last.Header.Get(identity.HeaderMinter) != "" {
		t.Errorf("an anonymous request stated a minter: %+v ok=%v, forwarded %q", c, ok, last.Header.Get(identity.HeaderMinter))
	}
}
