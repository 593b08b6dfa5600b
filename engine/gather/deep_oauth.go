package gather

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/commerce"
	"github.com/agentready/agentready/engine/parse/wellknown"
	"github.com/agentready/agentready/engine/weburl"
)

// The deep probes oauth.metadata and oauth.challenge: the site's OAuth
// discovery documents (RFC 8414 / OpenID discovery, RFC 9728) followed the
// way an agent follows them, then, when the authorization server offers
// anonymous client credentials, a token obtained and used on the API.

// Well-known suffixes of the OAuth discovery documents.
const (
	WellKnownAS   = "/.well-known/oauth-authorization-server"
	WellKnownOIDC = "/.well-known/openid-configuration"
	WellKnownPRM  = "/.well-known/oauth-protected-resource"
)

// maxScopes caps the scopes asked for in the token request.
const maxScopes = 10

// MetadataURLs are where the metadata of issuer is published, in the order
// MCP clients try them: RFC 8414's suffix inserted before the issuer's path,
// OpenID's inserted, then OpenID's appended (the last two coincide for an
// issuer without a path). nil for an issuer that is not an http(s) URL.
func MetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil
	}
	// RFC 8414 §3.1: a terminating "/" of the issuer's path is removed first.
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	root := u.Scheme + "://" + u.Host
	out := []string{root + WellKnownAS + p, root + WellKnownOIDC + p}
	if p != "" {
		out = append(out, root+p+WellKnownOIDC)
	}
	return out
}

// IssuerOf is the issuer a metadata URL was built from (the inverse of
// MetadataURLs), "" when the URL is not a metadata URL.
func IssuerOf(metadataURL string) string {
	u, err := url.Parse(metadataURL)
	if err != nil || u.Host == "" {
		return ""
	}
	root, p := u.Scheme+"://"+u.Host, u.EscapedPath()
	for _, wk := range []string{WellKnownAS, WellKnownOIDC} {
		if rest, ok := strings.CutPrefix(p, wk); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return root + rest
		}
	}
	if rest, ok := strings.CutSuffix(p, WellKnownOIDC); ok {
		return root + rest
	}
	return ""
}

// IsLoopback reports a loopback host (fixture sites on 127.0.0.1), where
// plain http is the site's own scheme and not a downgrade.
func IsLoopback(u *url.URL) bool {
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// OAuthMetadata is what oauth.metadata judges (with OAuthToken, the one
// exchange with the token endpoint): the free scan's protected-resource
// metadata and the authorization-server metadata an agent reaches from it
// (or from the site's origin).
type OAuthMetadata struct {
	PRM       *fetch.Response        // the free scan's answer at /.well-known/oauth-protected-resource
	PRMFields *wellknown.OAuthFields // nil unless found and a JSON object
	// Issuer is the authorization server looked up: the first same-site
	// entry of the PRM's authorization_servers, else the site's origin.
	Issuer string
	// FromPRM is set when Issuer came from the PRM's authorization_servers.
	FromPRM bool
	// CrossSite lists authorization servers on another registrable domain
	// (not fetched; at most 20).
	CrossSite []string
	AS        *fetch.Response // the metadata found, or the last URL tried; nil when none was tried
	ASTried   []string
	ASFields  *wellknown.OAuthFields // nil unless AS was found and is a JSON object
}

// Found reports that either discovery document exists.
func (m *OAuthMetadata) Found() bool {
	return m != nil && (m.PRM.Found() || m.AS.Found())
}

// ExpectedIssuer is the issuer the authorization-server metadata was
// fetched for: the one its URL was built from.
func (m *OAuthMetadata) ExpectedIssuer() string {
	if m == nil || m.AS == nil {
		return ""
	}
	return IssuerOf(m.AS.RequestURL)
}

// Rejected reports authorization-server metadata that must not be used:
// RFC 8414 §3.3 requires its issuer to be the one its URL was built from
// ("If these values are not identical, the data contained in the response
// MUST NOT be used"); a trailing "/" aside, as IssuerOf cannot tell. No
// endpoint a rejected document names is contacted.
func (m *OAuthMetadata) Rejected() bool {
	return m != nil && m.ASFields != nil && !SameIssuer(m.ASFields.Issuer, m.ExpectedIssuer())
}

// SameIssuer compares two issuer identifiers, a trailing "/" aside; an
// empty one matches nothing.
func SameIssuer(a, b string) bool {
	return a != "" && b != "" && strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// canonicalURL is how two spellings of one server's URL (an issuer, a token
// endpoint, a metadata URL) are told to be the same: scheme and host in
// lower case, the scheme's default port dropped, a terminating "/" of the
// path dropped (RFC 8414 §3.1 does as much for issuers), the fragment
// dropped. "" for what is not an absolute http(s) URL. It decides what the
// deep scan treats as one authorization server, never what a report calls
// identical: RFC 8414 §3.3's comparison stays SameIssuer's.
func canonicalURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	out := scheme + "://" + host + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// SameServer reports two spellings of one URL, as canonicalURL reads them.
func SameServer(a, b string) bool {
	ca := canonicalURL(a)
	return ca != "" && ca == canonicalURL(b)
}

// OAuthMeta is the artifact of oauth.metadata.
var OAuthMeta = NewKey[*OAuthMetadata]("deep-oauth-metadata")

// At most 3 requests: the metadata URLs of a path issuer named by the PRM
// (the root ones are the free scan's, answered from the session's cache).
// The token endpoint is OAuthToken's, contacted once per scan.
var oauthMetaGatherer = deepGatherer(Define(OAuthMeta, "Authorization-server metadata reached the way an agent reaches it (from the protected-resource metadata's authorization_servers, else the site's root).",
	[]AnyKey{ProtectedResource, OAuthServer, OpenIDConfig},
	func(c *Ctx) (*OAuthMetadata, error) {
		prm := Get(c, ProtectedResource)
		out := &OAuthMetadata{PRM: prm.Resp}
		if prm.Parsed != nil {
			out.PRMFields = prm.Parsed.Fields
		}
		if out.PRMFields != nil && len(out.PRMFields.AuthorizationServers) > 0 {
			for _, as := range out.PRMFields.AuthorizationServers {
				switch {
				case !weburl.SameSite(c.Site.Target, as):
					if len(out.CrossSite) < 20 {
						out.CrossSite = append(out.CrossSite, as)
					}
				case out.Issuer == "":
					out.Issuer, out.FromPRM = as, true
				}
			}
		} else {
			out.Issuer = c.Site.Origin
		}
		if out.Issuer == "" {
			return out, nil
		}
		urls := MetadataURLs(out.Issuer)
		if len(urls) == 0 {
			return out, nil
		}
		reqs := make([]fetch.Request, len(urls))
		for i, u := range urls {
			// The same request as the free scan's, so the root documents
			// come from the session's cache.
			reqs[i] = fetch.Request{URL: u, Accept: acceptJSON}
		}
		out.ASTried = urls
		all := c.FetchAll(reqs)
		out.AS = all[len(all)-1]
		for i, r := range all {
			if r.Found() {
				out.AS, out.ASTried = r, urls[:i+1]
				out.ASFields = oauthFieldsOf(r, Get(c, OAuthServer), Get(c, OpenIDConfig))
				break
			}
		}
		return out, nil
	}))

// tokenEndpointSkip says why the token endpoint of usable metadata is not
// contacted ("" when it may be).
func (m *OAuthMetadata) tokenEndpointSkip(site Site) string {
	te := m.ASFields.TokenEndpoint
	u, err := url.Parse(te)
	switch {
	case te == "":
		return "no token_endpoint"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "not an absolute http(s) URL"
	case !weburl.SameSite(site.Target, te):
		return "on another site"
	}
	return ""
}

// OAuthTokenDoc is the deep scan's one exchange with the token endpoint of
// the authorization server oauth.metadata reached. Every probe that needs a
// token reads it from here: the scan obtains at most one token, from one
// authorization server, and never asks the token endpoint twice (some
// servers issue a token to any request that reaches it, a GET included).
type OAuthTokenDoc struct {
	// Issuer is the authorization server's issuer, as its metadata names
	// it; "" when there is no metadata that may be used.
	Issuer string
	// MetadataURL is where that metadata was found.
	MetadataURL string
	Endpoint    string // its token_endpoint
	// Skip says why the token endpoint was not contacted ("" when it was,
	// or there is no metadata that may be used).
	Skip string
	// Grant is set when the request was the client_credentials POST
	// (anonymous client credentials are advertised); otherwise it was a GET
	// that only asks whether the endpoint is there (405 is a healthy answer).
	Grant bool
	Scope string          // the scope asked for with the grant
	Resp  *fetch.Response // the one request; nil when Skip says why not
	Reply *TokenReply     // the grant's answer; nil unless a JSON object
}

// Usable reports a token to send: the grant answered 2xx with an access token.
func (t *OAuthTokenDoc) Usable() bool {
	return t != nil && t.Grant && t.Resp.OK() && t.Reply.HasToken()
}

// IssuedBy reports that the token comes from the authorization server
// whose issuer identifier is issuer, however the two are spelt.
func (t *OAuthTokenDoc) IssuedBy(issuer string) bool {
	return t != nil && t.Issuer != "" && SameServer(t.Issuer, issuer)
}

// authorization is the Authorization header that carries the token; "" when
// there is no token to send.
func (t *OAuthTokenDoc) authorization() string {
	if !t.Usable() {
		return ""
	}
	return "Bearer " + t.Reply.token
}

// OAuthToken is the artifact of the scan's one token request.
var OAuthToken = NewKey[*OAuthTokenDoc]("deep-oauth-token")

// One request at most, one round after the metadata.
var oauthTokenGatherer = deepGatherer(Define(OAuthToken, "The deep scan's one request to the token endpoint of the authorization server oauth.metadata reached, unless its metadata must not be used: with anonymous client credentials advertised, one client_credentials POST, whose token every probe that needs one reuses; otherwise one GET (is it there?).",
	[]AnyKey{OAuthMeta},
	func(c *Ctx) (*OAuthTokenDoc, error) {
		meta := Get(c, OAuthMeta)
		out := &OAuthTokenDoc{}
		// Rejected metadata (RFC 8414 §3.3) is not used: its token endpoint
		// gets no request.
		if meta.ASFields == nil || meta.Rejected() {
			return out, nil
		}
		out.Issuer, out.MetadataURL, out.Endpoint = meta.ASFields.Issuer, meta.AS.RequestURL, meta.ASFields.TokenEndpoint
		if out.Skip = meta.tokenEndpointSkip(c.Site); out.Skip != "" {
			return out, nil
		}
		if !meta.ASFields.AnonymousClientCredentials() {
			out.Resp = c.Fetch(fetch.Request{URL: out.Endpoint, Accept: acceptJSON, NoRedirect: true, MaxBody: 64 << 10, Round: After(meta.AS)})
			return out, nil
		}
		out.Grant = true
		out.Scope = ScopeFor(meta.PRMFields, meta.ASFields)
		form := url.Values{"grant_type": {"client_credentials"}}
		if out.Scope != "" {
			form.Set("scope", out.Scope)
		}
		// The only write of the deep scan's OAuth probes. Not redirected: a
		// 307 would resend the form to wherever the site points.
		out.Resp = c.Fetch(fetch.Request{Method: http.MethodPost, URL: out.Endpoint, Accept: "application/json",
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Body: []byte(form.Encode()),
			NoRedirect: true, NoOrigin: true, MaxBody: 64 << 10, Round: After(meta.AS)})
		if out.Resp.Err == nil && out.Resp.Complete() {
			out.Reply = ParseTokenReply(out.Resp.Body)
		}
		return out, nil
	}))

// oauthFieldsOf reads a metadata document: the free scan's reading when it
// read the same URL (the root documents), so a document is parsed once.
func oauthFieldsOf(r *fetch.Response, read ...*AuthMetadata) *wellknown.OAuthFields {
	for _, d := range read {
		if d != nil && d.Resp != nil && d.Parsed != nil && d.Resp.RequestURL == r.RequestURL {
			return d.Parsed.Fields
		}
	}
	f, _ := wellknown.ParseOAuthFields(r.Body)
	return f
}

// AuthChallenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1), as the one parser of that grammar reads it (engine/parse/commerce,
// which also reads MPP's Payment challenges).
type AuthChallenge = commerce.Challenge

// ParseChallenges reads WWW-Authenticate field values (bounded; malformed
// parts are Problems of their challenge, never a failure).
func ParseChallenges(values []string) []AuthChallenge { return commerce.ParseChallenges(values) }

// Bearer is the first Bearer challenge, if any.
func Bearer(cs []AuthChallenge) (AuthChallenge, bool) {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c, true
		}
	}
	return AuthChallenge{}, false
}

// TokenReply is what a token endpoint answered (RFC 6749 §5.1, §5.2). The
// access token itself is kept unexported: it is used once and never reported.
type TokenReply struct {
	TokenType  string
	ExpiresIn  float64
	HasExpires bool
	Scope      string
	Error      string // the OAuth error code of a refusal, when it is a plain code
	token      string
}

// HasToken reports an access token in the reply.
func (t *TokenReply) HasToken() bool { return t != nil && t.token != "" }

// ParseTokenReply reads a token endpoint's JSON answer; nil when the body is
// not a JSON object.
func ParseTokenReply(body []byte) *TokenReply {
	var m struct {
		AccessToken any `json:"access_token"`
		TokenType   any `json:"token_type"`
		ExpiresIn   any `json:"expires_in"`
		Scope       any `json:"scope"`
		Error       any `json:"error"`
	}
	if json.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &m) != nil {
		return nil
	}
	t := &TokenReply{}
	if s, ok := m.AccessToken.(string); ok && len(s) <= 16<<10 && oauthHeaderSafe(s) {
		t.token = s
	}
	t.TokenType, _ = m.TokenType.(string)
	t.TokenType = clip.To(t.TokenType, 40)
	if f, ok := m.ExpiresIn.(float64); ok {
		t.ExpiresIn, t.HasExpires = f, true
	}
	t.Scope, _ = m.Scope.(string)
	t.Scope = clip.To(t.Scope, 200)
	if e, ok := m.Error.(string); ok && isOAuthErrorCode(e) {
		t.Error = e
	}
	return t
}

// isOAuthErrorCode accepts the shape of RFC 6749 error codes, so a site's free
// text never reaches a report through this field.
func isOAuthErrorCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// oauthHeaderSafe refuses a token that would break the Authorization header.
func oauthHeaderSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// ScopeFor is the scope of the token request: the PRM's scopes_supported
// (what the resource asks for, as MCP clients do), else the authorization
// server's only scope, else none. Malformed scope tokens are dropped.
func ScopeFor(prm, as *wellknown.OAuthFields) string {
	var picked []string
	if prm != nil && len(prm.Scopes) > 0 {
		picked = prm.Scopes
	} else if as != nil && len(as.Scopes) == 1 {
		picked = as.Scopes
	}
	var out []string
	for _, s := range picked {
		if oauthScopeToken(s) && !slices.Contains(out, s) && len(out) < maxScopes {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// oauthScopeToken is RFC 6749 §3.3's scope-token.
func oauthScopeToken(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// OAuthChallenge is what oauth.challenge judges: the scan's anonymous
// client-credentials token (OAuthToken's), then the protected API called
// without and with it.
type OAuthChallenge struct {
	// Tried is false when the metadata gives nothing to try; the probe
	// reads OAuthMeta and OAuthToken to say why.
	Tried        bool
	Scope        string
	Token        *fetch.Response // OAuthToken's request (the OAuth probes' only write)
	Reply        *TokenReply     // nil unless Token's body is a JSON object
	Target       string          // the protected API URL, "" when none was found
	TargetSource string
	TargetSkip   string          // why no target was tried, when Target is ""
	Anon         *fetch.Response // GET Target without a token
	Challenges   []AuthChallenge // Anon's WWW-Authenticate
	// Metadata is resource_metadata fetched when it is not the PRM the
	// free scan read; MetadataFields its members.
	Metadata       *fetch.Response
	MetadataFields *wellknown.OAuthFields
	Authed         *fetch.Response // GET Target with the token; nil without a token
}

// OAuthChallengeKey is the artifact of oauth.challenge.
var OAuthChallengeKey = NewKey[*OAuthChallenge]("deep-oauth-challenge")

// At most 3 requests of its own, in two rounds after the token: the API
// without and with the token together, then (only when the challenge
// names a resource_metadata other than the known PRM) that document.
var oauthChallengeGatherer = deepGatherer(Define(OAuthChallengeKey, "With anonymous client credentials advertised: the scan's one client_credentials token (OAuthToken), then the protected API (the PRM's resource, else the first parameterless GET of the OpenAPI description) without and with it.",
	[]AnyKey{OAuthMeta, OAuthToken, Spec},
	func(c *Ctx) (*OAuthChallenge, error) {
		meta, tok, spec := Get(c, OAuthMeta), Get(c, OAuthToken), Get(c, Spec)
		out := &OAuthChallenge{}
		if !tok.Grant {
			return out, nil
		}
		out.Tried = true
		out.Target, out.TargetSource, out.TargetSkip = protectedTarget(c.Site, meta.PRMFields, spec)
		out.Scope, out.Token, out.Reply = tok.Scope, tok.Resp, tok.Reply
		if out.Target == "" {
			return out, nil
		}
		reqs := []fetch.Request{{URL: out.Target, Accept: acceptJSON, NoRedirect: true, MaxBody: 256 << 10}}
		if h := tok.authorization(); h != "" {
			// Not redirected either: the token must not follow a redirect to another host.
			reqs = append(reqs, fetch.Request{URL: out.Target, Accept: acceptJSON, NoRedirect: true, MaxBody: 256 << 10,
				Header: map[string]string{"Authorization": h}})
		}
		first := c.FetchAll(reqs)
		out.Anon = first[0]
		if len(first) > 1 {
			out.Authed = first[1]
		}
		if out.Anon.Err == nil {
			out.Challenges = ParseChallenges(out.Anon.Header.Values("WWW-Authenticate"))
		}
		if b, ok := Bearer(out.Challenges); ok {
			rm := b.Params["resource_metadata"]
			if rm != "" && rm != meta.PRM.RequestURL && weburl.SameSite(c.Site.Target, rm) {
				out.Metadata = c.Fetch(fetch.Request{URL: rm, Accept: acceptJSON, Round: After(out.Anon)})
				if out.Metadata.Found() {
					out.MetadataFields = oauthFieldsOf(out.Metadata)
				}
			}
		}
		return out, nil
	}))

// protectedTarget picks the API URL to call: the PRM's resource when it
// names a path on the site's origin, else the first GET operation of the
// OpenAPI description without parameters in its path (secured ones first).
func protectedTarget(site Site, prm *wellknown.OAuthFields, spec *OpenAPIDoc) (target, source, skip string) {
	if prm != nil && prm.Resource != "" && weburl.SameOrigin(site.Target, prm.Resource) {
		if u, err := url.Parse(prm.Resource); err == nil && u.Path != "" && u.Path != "/" && u.Fragment == "" {
			return prm.Resource, "the protected-resource metadata's resource", ""
		}
	}
	if spec == nil || spec.Spec == nil {
		return "", "", "the protected-resource metadata's resource is the site's root and no OpenAPI description was found"
	}
	base := site.Origin
	if s := spec.Spec.ServerURL; s != "" {
		if strings.Contains(s, "{") || !weburl.SameOrigin(site.Target, s) {
			return "", "", "the OpenAPI description's server " + clip.To(s, 200) + " is not on the site's origin"
		}
		base = s
	}
	base = strings.TrimSuffix(base, "/")
	for _, secured := range []bool{true, false} {
		for _, op := range spec.Spec.Operations {
			if op.Method != http.MethodGet || op.Secured != secured || strings.Contains(op.Path, "{") || !strings.HasPrefix(op.Path, "/") {
				continue
			}
			return base + op.Path, "the OpenAPI operation GET " + op.Path, ""
		}
	}
	return "", "", "the OpenAPI description has no GET operation without path parameters"
}
