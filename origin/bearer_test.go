package origin_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/origin"
)

// Bearer tokens are verified at the origin too: reached directly, a valid
// token is its holder's credential; behind the edge, it must belong to the
// caller the edge vouched for.
func TestOriginVerifiesBearerTokens(t *testing.T) {
	keys, _ := token.ParseKeys("k1:0123456789abcdef0123456789abcdef")
	other, _ := token.ParseKeys("k1:ffffffffffffffffffffffffffffffff")
	secret := []byte("edge-secret-for-the-bearer-test-0001")
	o := startOrigin(t, origin.Config{TokenKeys: keys, EdgeSecret: secret}, nil)
	s := site(t, "empty")
	now := time.Now()
	claims := func(sub, scope, aud string) token.Claims {
		return token.Claims{Subject: sub, Scope: scope, Audience: aud, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()}
	}
	valid, _ := keys.Sign(claims("anon_alice", token.Scope, o.URL))
	wrongKey, _ := other.Sign(claims("anon_alice", token.Scope, o.URL))
	wrongAud, _ := keys.Sign(claims("anon_alice", token.Scope, "https://elsewhere.example"))
	unscoped, _ := keys.Sign(claims("anon_alice", "monitors:write", o.URL))
	path := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	signed := func(c identity.Caller) []string {
		var h []string
		for k, v := range identity.Sign(secret, c, "127.0.0.1", identity.Request{Method: "GET", Path: "/api/scan", Query: strings.TrimPrefix(path, "/api/scan?")}, now) {
			h = append(h, k, v)
		}
		return h
	}
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
		code   string
	}{
		{"valid token, direct", []string{"Authorization", "Bearer " + valid}, 200, ""},
		{"no token", nil, 200, ""},
		{"other key", []string{"Authorization", "Bearer " + wrongKey}, 401, "invalid_token"},
		{"other audience", []string{"Authorization", "Bearer " + wrongAud}, 401, "invalid_token"},
		{"tampered", []string{"Authorization", "Bearer " + valid + "x"}, 401, "invalid_token"},
		{"not bearer", []string{"Authorization", "Basic " + valid}, 401, "invalid_token"},
		{"without scan:read", []string{"Authorization", "Bearer " + unscoped}, 403, "insufficient_scope"},
		{"edge vouches for the token's subject", append(signed(identity.Caller{Tier: identity.Token, Subject: "anon_alice"}), "Authorization", "Bearer "+valid), 200, ""},
		{"edge vouches for someone else", append(signed(identity.Caller{Tier: identity.Token, Subject: "anon_mallory"}), "Authorization", "Bearer "+valid), 401, "invalid_identity"},
	} {
		resp, b := get(t, o.URL+path, c.hdr...)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
			continue
		}
		if c.code == "" {
			continue
		}
		var env struct{ Code string }
		json.Unmarshal(b, &env)
		if env.Code != c.code {
			t.Errorf("%s: code %q, want %q", c.name, env.Code, c.code)
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		if wants := c.code != "invalid_identity"; wants != strings.Contains(challenge, `resource_metadata="`+o.URL+`/.well-known/oauth-protected-resource", error="`+c.code+`"`) {
			t.Errorf("%s: WWW-Authenticate %q", c.name, challenge)
		}
	}
}
