package checks

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

var _ = deepProbe(&DeepProbe{ID: "oauth.metadata", Name: "OAuth metadata agrees",
	Doc: "Follows the protected-resource metadata (RFC 9728) to its authorization server's metadata (RFC 8414 or OpenID discovery) and checks that they agree: " +
		"the PRM's resource is this site, its authorization_servers include the AS issuer, the issuer equals the URL its metadata was fetched for, " +
		"token_endpoint is present, https and on the site's registrable domain, grant_types_supported is listed, and the token endpoint answers the scan's one request to it " +
		"(the client_credentials POST when anonymous client credentials are advertised, else a GET, where 405 is fine; nothing is sent when the issuer does not match, as such metadata must not be used).",
	Requires: []gather.AnyKey{gather.OAuthMeta, gather.OAuthToken}, Run: oauthMetadata})

var _ = deepProbe(&DeepProbe{ID: "oauth.challenge", Name: "Protected API challenge",
	Doc: "When the authorization server advertises anonymous client credentials (grant client_credentials, auth method none) in metadata that may be used " +
		"(RFC 8414 §3.3: its issuer is the one it was fetched for; otherwise nothing it names is contacted): the scan's one token request (its token is reused by every probe that needs one), " +
		"then the protected API (the PRM's resource, else the first parameterless GET operation of the OpenAPI description) without a token, " +
		"which must answer 401 with `WWW-Authenticate: Bearer resource_metadata=\"…\"` (RFC 9728 §5.1), and with the token, which must not answer 401 or 403.",
	Requires: []gather.AnyKey{gather.OAuthMeta, gather.OAuthToken, gather.OAuthChallengeKey}, Run: oauthChallenge})

// oauthFindings collects what a probe found wrong; a failure makes the verdict
// fail, anything else partial.
type oauthFindings struct {
	list   []string
	failed bool
}

func (f *oauthFindings) fail(format string, a ...any)    { f.failed = true; f.add(format, a...) }
func (f *oauthFindings) partial(format string, a ...any) { f.add(format, a...) }
func (f *oauthFindings) add(format string, a ...any) {
	if len(f.list) < 20 {
		f.list = append(f.list, fmt.Sprintf(format, a...))
	}
}

// verdict is the probe's status and message: pass with ok, else the
// problems (the first three in the message, all in details).
func (f *oauthFindings) verdict(ok string, details map[string]any) report.DeepProbe {
	if len(f.list) == 0 {
		return report.DeepProbe{Status: report.Pass, Message: ok, Details: details}
	}
	details["problems"] = f.list
	st := report.Partial
	if f.failed {
		st = report.Fail
	}
	shown := f.list
	more := ""
	if len(shown) > 3 {
		shown, more = shown[:3], fmt.Sprintf(" (%d more in details)", len(f.list)-3)
	}
	return report.DeepProbe{Status: st, Message: strings.Join(shown, " ") + more, Details: details}
}

// oauthMaxQuoted caps, in characters, a value the site wrote (a URL, an
// issuer, a token type) that a message or a detail quotes.
const oauthMaxQuoted = 160

// oauthAnswer says how a request went, for people: a status or fetch's wording
// of a transport failure (never a library's text).
func oauthAnswer(r *fetch.Response) string {
	switch {
	case r == nil:
		return "was not requested"
	case r.Err != nil:
		return "could not be reached: " + fetch.Describe(r.Err)
	case r.OK() && !r.Complete():
		return fmt.Sprintf("answered %d but its body was cut (%s)", r.Status, cutReason(r))
	case r.OK() && r.LooksHTML():
		return fmt.Sprintf("answered %d with an HTML page", r.Status)
	default:
		return fmt.Sprintf("answered %d", r.Status)
	}
}

func oauthSameURL(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

func oauthMetadata(in gather.Source) report.DeepProbe {
	m, tok := gather.Get(in, gather.OAuthMeta), gather.Get(in, gather.OAuthToken)
	site := gather.SiteOf(in)
	prmURL := site.Origin + gather.WellKnownPRM
	if !m.Found() && len(m.CrossSite) == 0 {
		return report.DeepProbe{Status: report.NA, Message: fmt.Sprintf(
			"Nothing to check: the site publishes neither protected-resource metadata (%s) nor authorization-server metadata (%s%s or %s%s).",
			prmURL, site.Origin, gather.WellKnownAS, site.Origin, gather.WellKnownOIDC)}
	}
	d := map[string]any{}
	var f oauthFindings
	var notes []string
	if m.PRM != nil {
		prmURL = m.PRM.RequestURL
	}
	prm := m.PRMFields
	switch {
	case m.PRM.Found() && prm == nil:
		d["protectedResource"] = prmURL
		f.fail("%s is not a JSON object: agents cannot read it.", prmURL)
	case prm != nil:
		d["protectedResource"] = prmURL
		d["resource"] = clip.To(prm.Resource, oauthMaxQuoted)
		d["authorizationServers"] = oauthCap(prm.AuthorizationServers)
		switch u, err := url.Parse(prm.Resource); {
		case prm.Resource == "":
			f.fail("%s has no resource member (RFC 9728 requires it): set it to %s.", prmURL, site.Origin)
		case oauthSameURL(prm.Resource, site.Origin):
		case err == nil && strings.EqualFold(u.Scheme+"://"+u.Host, site.Origin):
			f.partial("%s names the resource %s, but the document at the root describes %s (RFC 9728 §3.3): set resource to %s, and publish %s's own metadata at %s%s%s.",
				prmURL, clip.To(prm.Resource, oauthMaxQuoted), site.Origin, site.Origin, clip.To(prm.Resource, oauthMaxQuoted), site.Origin, gather.WellKnownPRM, clip.To(u.EscapedPath(), oauthMaxQuoted))
		default:
			f.fail("%s names the resource %s, not this site (%s): clients reject metadata whose resource differs from the one they asked about (RFC 9728 §3.3).",
				prmURL, clip.To(prm.Resource, oauthMaxQuoted), site.Origin)
		}
		for _, p := range prm.Problems {
			f.partial("In %s, %s.", prmURL, p)
		}
		if len(prm.AuthorizationServers) == 0 {
			f.partial("%s lists no authorization_servers: an agent that meets your API cannot find where to get a token; list your authorization server's issuer.", prmURL)
		}
	default:
		f.partial("There is no protected-resource metadata at %s (%s): agents that meet your API first cannot find its authorization server; publish RFC 9728 metadata naming it.", prmURL, oauthAnswer(m.PRM))
	}
	if len(m.CrossSite) > 0 {
		d["crossSite"] = m.CrossSite
		if m.Issuer == "" {
			f.partial("The authorization servers %s are on another site and were not checked (the deep scan follows declarations on the site's own registrable domain only).", strings.Join(oauthShortAll(m.CrossSite, 3), ", "))
		} else {
			notes = append(notes, fmt.Sprintf("%s on another site not checked", plural(len(m.CrossSite), "authorization server", "authorization servers")))
		}
	}
	if m.Issuer != "" {
		judgeOAuthAS(m, tok, site, d, &f)
	}
	ok := fmt.Sprintf("The protected-resource metadata at %s names this site and the authorization server %s, whose metadata at %s agrees: its issuer matches, and its token endpoint %s %s%s.",
		prmURL, m.Issuer, at(m.AS), oauthTokenEndpoint(m), oauthAnswer(tok.Resp), oauthTokenRequest(tok))
	if len(notes) > 0 {
		ok = strings.TrimSuffix(ok, ".") + " (" + strings.Join(notes, "; ") + ")."
	}
	return f.verdict(ok, d)
}

func oauthTokenEndpoint(m *gather.OAuthMetadata) string {
	if m.ASFields == nil {
		return ""
	}
	return clip.To(m.ASFields.TokenEndpoint, oauthMaxQuoted)
}

// oauthTokenRequest names the request the token endpoint answered, for a
// message that quotes its answer.
func oauthTokenRequest(tok *gather.OAuthTokenDoc) string {
	switch {
	case tok.Resp == nil:
		return ""
	case tok.Grant:
		return " to the scan's client_credentials request"
	}
	return " to a GET"
}

func oauthShortAll(list []string, n int) []string {
	var out []string
	for i, s := range list {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(list)-n))
			break
		}
		out = append(out, clip.To(s, oauthMaxQuoted))
	}
	return out
}

func oauthCap(list []string) []string {
	if len(list) > 20 {
		return list[:20]
	}
	return list
}

// judgeOAuthAS checks the authorization-server metadata m.Issuer led to.
func judgeOAuthAS(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, site gather.Site, d map[string]any, f *oauthFindings) {
	d["authorizationServerTried"] = m.ASTried
	as := m.ASFields
	if as == nil {
		switch {
		case m.AS.Found():
			f.fail("%s is not a JSON object: agents cannot read the authorization server's metadata.", at(m.AS))
		case len(m.ASTried) == 0:
			f.fail("The authorization server %s is not a valid issuer (an absolute http(s) URL without query or fragment, RFC 8414 §2), so its metadata cannot be found.", clip.To(m.Issuer, oauthMaxQuoted))
		case m.FromPRM:
			f.fail("The protected-resource metadata names the authorization server %s, but no metadata answers for it (%s %s): publish RFC 8414 metadata there.",
				clip.To(m.Issuer, oauthMaxQuoted), m.ASTried[0], oauthAnswer(m.AS))
		case m.PRM.Found():
			f.fail("The API declares itself protected, but there is no authorization-server metadata at %s or %s: agents cannot get a token; publish RFC 8414 metadata and list its issuer in authorization_servers.",
				site.Origin+gather.WellKnownAS, site.Origin+gather.WellKnownOIDC)
		}
		return
	}
	asURL := m.AS.RequestURL
	d["authorizationServer"] = asURL
	d["issuer"] = clip.To(as.Issuer, oauthMaxQuoted)
	d["tokenEndpoint"] = clip.To(as.TokenEndpoint, oauthMaxQuoted)
	if as.HasGrantTypes {
		d["grantTypes"] = oauthCap(as.GrantTypes)
	}
	for _, p := range as.Problems {
		f.partial("In %s, %s.", asURL, p)
	}
	expected := m.ExpectedIssuer()
	switch {
	case as.Issuer == "":
		f.fail("%s has no issuer (RFC 8414 requires it): set it to %s. Until then clients must not use it, and its token endpoint was not contacted.", asURL, expected)
	case m.Rejected():
		f.fail("%s names the issuer %s, but it was fetched for the issuer %s: clients reject metadata whose issuer differs from the one they built its URL from (RFC 8414 §3.3), so its token endpoint was not contacted.",
			asURL, clip.To(as.Issuer, oauthMaxQuoted), expected)
	case m.FromPRM && as.Issuer != m.Issuer:
		f.partial("The protected-resource metadata lists the authorization server %s but its metadata names the issuer %s: clients compare them character for character; make them identical.",
			clip.To(m.Issuer, oauthMaxQuoted), clip.To(as.Issuer, oauthMaxQuoted))
	}
	te := as.TokenEndpoint
	switch u, err := url.Parse(te); {
	case te == "":
		f.fail("%s has no token_endpoint: agents cannot get a token; add it.", asURL)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		f.fail("%s gives token_endpoint %s, which is not an absolute http(s) URL.", asURL, clip.To(te, oauthMaxQuoted))
	case u.Scheme != "https" && !(gather.IsLoopback(site.Target) && u.Scheme == site.Target.Scheme):
		f.fail("The token endpoint %s is not https: tokens and client credentials would cross the network in clear text; serve it over https.", clip.To(te, oauthMaxQuoted))
	}
	switch r := tok.Resp; {
	case tok.Skip == "on another site":
		f.partial("The token endpoint %s is on another site and was not checked; serve it from your own registrable domain or expect agents to trust that site.", clip.To(te, oauthMaxQuoted))
	case r != nil && r.Err != nil:
		f.fail("The token endpoint %s %s.", clip.To(te, oauthMaxQuoted), oauthAnswer(r))
	case r != nil && r.Status >= 500 && tok.Grant:
		f.fail("The token endpoint %s answered %d %s to an anonymous client_credentials request: it looks broken.", clip.To(te, oauthMaxQuoted), r.Status, http.StatusText(r.Status))
	case r != nil && r.Status >= 500:
		f.fail("The token endpoint %s answered %d %s to a GET: it looks broken (a working one answers 405 or 400).", clip.To(te, oauthMaxQuoted), r.Status, http.StatusText(r.Status))
	}
	if r := tok.Resp; r != nil {
		d["tokenEndpointStatus"] = r.Status
		d["tokenEndpointLatencyMs"] = r.Elapsed.Milliseconds()
		d["tokenEndpointRequest"] = map[bool]string{true: "POST client_credentials", false: "GET"}[tok.Grant]
	}
	switch {
	case !as.HasGrantTypes:
		f.partial("%s lists no grant_types_supported, so RFC 8414's default applies (authorization_code and implicit) and agents cannot tell which grants work; list them, e.g. [\"client_credentials\"].", asURL)
	case len(as.GrantTypes) == 0:
		f.partial("%s has an empty grant_types_supported; list the grants the server accepts.", asURL)
	}
}

func oauthChallenge(in gather.Source) report.DeepProbe {
	m, td, ch := gather.Get(in, gather.OAuthMeta), gather.Get(in, gather.OAuthToken), gather.Get(in, gather.OAuthChallengeKey)
	site := gather.SiteOf(in)
	na := func(msg string) report.DeepProbe { return report.DeepProbe{Status: report.NA, Message: msg} }
	as := m.ASFields
	switch {
	case as == nil:
		return na("Not tried: no authorization-server metadata was found, so there is no token endpoint to ask. An agent could try this site's protected API on its own only with RFC 8414 metadata that advertises client_credentials and the token_endpoint_auth_methods_supported value \"none\".")
	case m.Rejected():
		named := "names no issuer"
		if as.Issuer != "" {
			named = "names the issuer " + clip.To(as.Issuer, oauthMaxQuoted)
		}
		unused := "nothing it names was contacted"
		if as.TokenEndpoint != "" {
			unused = "its token endpoint " + clip.To(as.TokenEndpoint, oauthMaxQuoted) + " was not contacted"
		}
		return na(fmt.Sprintf("Not tried: the authorization-server metadata at %s %s, not %s, the issuer it was fetched for. RFC 8414 §3.3 says such metadata MUST NOT be used, so %s. Make its issuer %s and this probe will try the protected API.",
			at(m.AS), named, m.ExpectedIssuer(), unused, m.ExpectedIssuer()))
	case !as.AnonymousClientCredentials():
		return na(fmt.Sprintf("Not tried: the authorization server's metadata (%s) does not advertise anonymous client credentials (\"client_credentials\" in grant_types_supported and \"none\" in token_endpoint_auth_methods_supported), so an agent needs registered credentials, which this probe does not have.", at(m.AS)))
	case td.Skip == "on another site":
		return na(fmt.Sprintf("Not tried: the token endpoint %s is on another site; the deep scan sends no request to other sites.", clip.To(as.TokenEndpoint, oauthMaxQuoted)))
	case td.Skip != "" || !ch.Tried:
		return report.DeepProbe{Status: report.Fail, Message: fmt.Sprintf("%s advertises anonymous client credentials but its token_endpoint is unusable (%s): agents cannot get a token; give an absolute https URL.", at(m.AS), td.Skip)}
	}
	te := clip.To(as.TokenEndpoint, oauthMaxQuoted)
	d := map[string]any{"tokenEndpoint": te}
	if ch.Scope != "" {
		d["scopeRequested"] = ch.Scope
	}
	latency := map[string]int64{}
	d["latencyMs"] = latency
	var f oauthFindings
	tok := ch.Token
	if tok != nil {
		latency["token"] = tok.Elapsed.Milliseconds()
		d["tokenStatus"] = tok.Status
	}
	switch {
	case tok == nil || tok.Err != nil:
		f.fail("The token request to %s failed: it %s.", te, oauthAnswer(tok))
	case tok.Status >= 500:
		f.fail("%s broke on an anonymous client_credentials request: it answered %d %s.", te, tok.Status, http.StatusText(tok.Status))
	case !tok.OK():
		code := ""
		if ch.Reply != nil && ch.Reply.Error != "" {
			code = " (error " + ch.Reply.Error + ")"
		}
		f.fail("%s refused an anonymous client_credentials request: it answered %d%s. Accept it, or stop advertising \"none\" in token_endpoint_auth_methods_supported.", te, tok.Status, code)
	case ch.Reply == nil:
		f.fail("%s answered %d to the token request, but not with a JSON object (RFC 6749 §5.1).", te, tok.Status)
	case !ch.Reply.HasToken():
		f.fail("%s answered %d to the token request without a usable access_token (RFC 6749 §5.1).", te, tok.Status)
	}
	if r := ch.Reply; r != nil && tok.OK() && r.HasToken() {
		d["tokenType"] = r.TokenType
		if r.HasExpires {
			d["expiresIn"] = r.ExpiresIn
		}
		switch {
		case r.TokenType == "":
			f.partial("The token reply of %s has no token_type (RFC 6749 §5.1 requires it; say \"Bearer\").", te)
		case !strings.EqualFold(r.TokenType, "Bearer"):
			f.partial("The token reply of %s says token_type %q; agents send it as a Bearer token, which the API must accept.", te, clip.To(r.TokenType, oauthMaxQuoted))
		}
	}
	if ch.Target == "" {
		if !f.failed {
			f.partial("%s issues tokens, but there was no protected API to try them on: %s. Set the protected-resource metadata's resource to your API's URL, or describe a GET operation in your OpenAPI description.", te, ch.TargetSkip)
		}
		return f.verdict("", d)
	}
	target := ch.Target
	d["target"], d["targetSource"] = target, ch.TargetSource
	anon := ch.Anon
	if anon != nil {
		latency["withoutToken"] = anon.Elapsed.Milliseconds()
		d["statusWithoutToken"] = anon.Status
	}
	challengeOK := judgeOAuthChallenge(m, ch, site, d, &f)
	if a := ch.Authed; a != nil {
		latency["withToken"] = a.Elapsed.Milliseconds()
		d["statusWithToken"] = a.Status
		switch {
		case a.Err != nil:
			f.fail("With the token, GET %s %s.", target, oauthAnswer(a))
		case a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden:
			f.fail("GET %s with the token %s just issued answered %d %s: the API refuses the authorization server's tokens (check audience, scope and signing keys).", target, te, a.Status, http.StatusText(a.Status))
		case a.Status >= 500:
			f.fail("GET %s with a valid token answered %d %s.", target, a.Status, http.StatusText(a.Status))
		case a.Status >= 300 && a.Status < 400:
			f.partial("GET %s with a valid token answered %d (a redirect) instead of the resource; agents do not resend tokens to redirect targets.", target, a.Status)
		}
	}
	ok := fmt.Sprintf("An anonymous client_credentials request to %s returned a Bearer token; GET %s (%s) without it answered 401 with a Bearer challenge naming %s, and with it answered %d.",
		te, target, ch.TargetSource, challengeOK, oauthStatus(ch.Authed))
	return f.verdict(ok, d)
}

func oauthStatus(r *fetch.Response) int {
	if r == nil {
		return 0
	}
	return r.Status
}

// judgeOAuthChallenge checks the unauthenticated answer: 401 with a Bearer
// challenge whose resource_metadata leads to metadata for this resource.
// It returns the resource_metadata URL when all is well.
func judgeOAuthChallenge(m *gather.OAuthMetadata, ch *gather.OAuthChallenge, site gather.Site, d map[string]any, f *oauthFindings) string {
	anon, target := ch.Anon, ch.Target
	prmURL := site.Origin + gather.WellKnownPRM
	want := fmt.Sprintf("answer 401 with `WWW-Authenticate: Bearer resource_metadata=\"%s\"` (RFC 9728 §5.1)", prmURL)
	switch {
	case anon == nil || anon.Err != nil:
		f.fail("GET %s without a token failed: it %s.", target, oauthAnswer(anon))
		return ""
	case anon.Status == http.StatusUnauthorized:
	case anon.Status >= 200 && anon.Status < 300:
		f.partial("GET %s without a token answered %d: the API does not ask for the token its metadata describes. If it is protected, %s; if it is public, do not point agents at it as the protected resource.", target, anon.Status, want)
		return ""
	case anon.Status >= 300 && anon.Status < 400:
		f.partial("GET %s without a token redirects (%d, to %s) instead of challenging: agents cannot log in through a redirect; %s.", target, anon.Status, clip.To(anon.Header.Get("Location"), oauthMaxQuoted), want)
		return ""
	default:
		f.partial("GET %s without a token answered %d %s; it should %s.", target, anon.Status, http.StatusText(anon.Status), want)
		return ""
	}
	b, ok := gather.Bearer(ch.Challenges)
	if !ok {
		f.partial("GET %s without a token answered 401 but without a Bearer challenge in WWW-Authenticate; it should %s.", target, want)
		return ""
	}
	c := map[string]string{}
	for _, k := range []string{"resource_metadata", "scope", "error", "realm"} {
		if v, ok := b.Params[k]; ok {
			c[k] = clip.To(v, oauthMaxQuoted)
		}
	}
	d["challenge"] = c
	rm := b.Params["resource_metadata"]
	known := ""
	if m.PRM != nil {
		known = m.PRM.RequestURL
	}
	switch {
	case rm == "":
		f.partial("GET %s without a token answered 401 with a Bearer challenge but no resource_metadata, so agents cannot find the authorization server from the API; it should %s.", target, want)
	case rm == known && m.PRM.Found() && m.PRMFields != nil:
		return rm
	case rm == known:
		f.partial("The challenge of %s points to %s, which %s.", target, clip.To(rm, oauthMaxQuoted), oauthAnswer(m.PRM))
	case ch.Metadata == nil:
		f.partial("The challenge of %s points to resource metadata at %s, on another site or not an http(s) URL; point it to %s.", target, clip.To(rm, oauthMaxQuoted), prmURL)
	case ch.MetadataFields == nil:
		f.partial("The challenge of %s points to %s, which %s, not protected-resource metadata.", target, clip.To(rm, oauthMaxQuoted), oauthAnswer(ch.Metadata))
	case ch.MetadataFields.Resource == "" || !strings.HasPrefix(target, strings.TrimSuffix(ch.MetadataFields.Resource, "/")):
		f.partial("The challenge of %s points to %s, whose resource %s does not cover %s (RFC 9728 §3.3).", target, clip.To(rm, oauthMaxQuoted), clip.To(ch.MetadataFields.Resource, oauthMaxQuoted), target)
	default:
		return rm
	}
	return ""
}
