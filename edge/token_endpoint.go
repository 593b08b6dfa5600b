package edge

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/token"
)

// oauthError is RFC 6749 §5.2's error body and our envelope at once: error
// is the OAuth code (so OAuth clients read it), code repeats it, message
// repeats the description, and docs links the list of codes.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Docs        string `json:"docs"`
}

// tokenBodyMax bounds a token request: a grant type and a scope.
const tokenBodyMax = 16 << 10

// issueToken is the anonymous OAuth 2.0 client-credentials token endpoint
// (RFC 6749 §4.4, without client authentication: see the authorization
// server metadata, token_endpoint_auth_methods_supported = none).
func (h *Handler) issueToken(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	fail := func(code apierr.Code, desc string) {
		writeJSON(w, code.Status(), oauthError{string(code), desc, string(code), desc, DocsURL})
	}
	if len(h.cfg.TokenKeys) == 0 {
		fail(apierr.OAuthTemporarilyUnavailable, "token issuance is not configured on this deployment (AGENTREADY_TOKEN_KEYS)")
		return
	}
	body, refused := readBody(r, tokenBodyMax)
	switch {
	case refused != nil && refused.Code == apierr.PayloadTooLarge:
		refused.write(w)
		return
	case refused != nil:
		fail(apierr.OAuthInvalidRequest, "the request body could not be read to the end; resend it")
		return
	}
	var grant, scope string
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		var req struct {
			GrantType string `json:"grant_type"`
			Scope     string `json:"scope"`
		}
		if json.Unmarshal(body, &req) != nil {
			fail(apierr.OAuthInvalidRequest, "the body is not valid JSON; send {\"grant_type\":\"client_credentials\",\"scope\":\"scan:read\"}")
			return
		}
		grant, scope = req.GrantType, req.Scope
	case "application/x-www-form-urlencoded":
		v, err := url.ParseQuery(string(body))
		if err != nil {
			fail(apierr.OAuthInvalidRequest, "the form body does not parse")
			return
		}
		if len(v["grant_type"]) > 1 || len(v["scope"]) > 1 {
			fail(apierr.OAuthInvalidRequest, "grant_type and scope may appear once")
			return
		}
		grant, scope = v.Get("grant_type"), v.Get("scope")
	default:
		fail(apierr.OAuthInvalidRequest, "send application/json or application/x-www-form-urlencoded")
		return
	}
	switch {
	case grant == "":
		fail(apierr.OAuthInvalidRequest, "grant_type is required (client_credentials)")
		return
	case grant != "client_credentials":
		fail(apierr.OAuthUnsupportedGrantType, "only the client_credentials grant is supported")
		return
	case scope != "" && strings.TrimSpace(scope) != token.Scope:
		fail(apierr.OAuthInvalidScope, "the only scope is scan:read")
		return
	}
	// Minting is limited per address so tokens cannot multiply the free allowance.
	ip := h.addressKey(h.p.ClientIP(r))
	d, err := h.p.Allow(r.Context(), "mint:"+ip, h.cfg.TokenMintsPerHour, time.Hour, 1)
	if err != nil {
		fail(apierr.OAuthTemporarilyUnavailable, "the allowance store does not answer; retry shortly")
		return
	}
	if !d.Allowed {
		w.Header().Set("Retry-After", rateHeaders(d, h.p.Now()).Get("RateLimit-Reset"))
		fail(apierr.OAuthSlowDown, "too many tokens requested from this address; reuse the token you have until it expires")
		return
	}
	now := h.p.Now()
	tok, err := h.cfg.TokenKeys.Sign(token.Claims{Subject: token.RandomSubject(), Scope: token.Scope, Audience: h.base(r), IssuedAt: now.Unix(),
		Expires: now.Add(h.cfg.TokenTTL).Unix(), Minter: token.MinterOf(h.minterKey(), ip)})
	if err != nil {
		fail(apierr.OAuthServerError, "the token could not be signed; retry, and report it if it persists")
		return
	}
	writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(h.cfg.TokenTTL.Seconds()), "scope": token.Scope})
}

// minterKey keys the Minter claim. The identity secret is shared with the
// origin and rotates rarely; token keys rotate by design, and a new key
// would give every address a fresh ceiling of monitors. Without an
// identity secret (an edge that vouches for no one) the signing key serves.
func (h *Handler) minterKey() []byte {
	if len(h.cfg.IdentitySecret) > 0 {
		return h.cfg.IdentitySecret
	}
	return h.cfg.TokenKeys[0].Secret
}
