package checks

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/wellknown"
	"github.com/agentready/agentready/engine/report"
)

const oauthOrigin = "https://shop.example" // the origin of these synthetic sites

func oauthProbe(t *testing.T, id string) *DeepProbe {
	t.Helper()
	for _, p := range Deep() {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no deep probe %s", id)
	return nil
}

func oauthJSON(u string, status int, body string) *fetch.Response {
	return &fetch.Response{RequestURL: u, FinalURL: u, Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

func oauthFieldsOf(t *testing.T, body string) *wellknown.OAuthFields {
	t.Helper()
	f, err := wellknown.ParseOAuthFields([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// goodOAuthMeta is metadata that agrees; cases break one thing each.
func goodOAuthMeta(t *testing.T) *gather.OAuthMetadata {
	prm := `{"resource":"` + oauthOrigin + `","authorization_servers":["` + oauthOrigin + `"],"scopes_supported":["r"]}`
	as := `{"issuer":"` + oauthOrigin + `","token_endpoint":"` + oauthOrigin + `/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["none"]}`
	return &gather.OAuthMetadata{
		PRM: oauthJSON(oauthOrigin+gather.WellKnownPRM, 200, prm), PRMFields: oauthFieldsOf(t, prm),
		Issuer: oauthOrigin, FromPRM: true,
		AS: oauthJSON(oauthOrigin+gather.WellKnownAS, 200, as), ASTried: []string{oauthOrigin + gather.WellKnownAS}, ASFields: oauthFieldsOf(t, as),
	}
}

// goodOAuthToken is the scan's one exchange with that metadata's token
// endpoint: the anonymous client_credentials POST, which issued a token.
func goodOAuthToken() *gather.OAuthTokenDoc {
	resp := oauthJSON(oauthOrigin+"/token", 200, `{"access_token":"`+oauthSecret+`","token_type":"Bearer","expires_in":60}`)
	return &gather.OAuthTokenDoc{Issuer: oauthOrigin, MetadataURL: oauthOrigin + gather.WellKnownAS, Endpoint: oauthOrigin + "/token",
		Grant: true, Scope: "r", Resp: resp, Reply: gather.ParseTokenReply(resp.Body)}
}

func judgeOAuth(t *testing.T, id string, m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) report.DeepProbe {
	t.Helper()
	target, _ := url.Parse(oauthOrigin + "/")
	set := gather.NewSet(gather.Site{Target: target, Origin: oauthOrigin})
	gather.Put(set, gather.OAuthMeta, m)
	gather.Put(set, gather.OAuthToken, tok)
	gather.Put(set, gather.OAuthChallengeKey, ch)
	return oauthProbe(t, id).Judge(set)
}

func TestOAuthMetadataVerdicts(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc)
		status report.Status
		words  []string
	}{
		{"agrees", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {}, report.Pass,
			[]string{oauthOrigin + gather.WellKnownPRM, oauthOrigin + "/token", "answered 200 to the scan's client_credentials request"}},
		{"agrees, confidential clients only", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.AuthMethods = []string{"client_secret_basic"}
			tok.Grant, tok.Scope, tok.Reply, tok.Resp = false, "", nil, oauthJSON(oauthOrigin+"/token", 405, `{"error":"invalid_request"}`)
		}, report.Pass, []string{oauthOrigin + "/token", "answered 405 to a GET"}},
		{"nothing published", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			*m = gather.OAuthMetadata{PRM: oauthJSON(oauthOrigin+gather.WellKnownPRM, 404, ""), Issuer: oauthOrigin, AS: oauthJSON(oauthOrigin+gather.WellKnownOIDC, 404, "")}
		}, report.NA, []string{"neither", oauthOrigin + gather.WellKnownPRM}},
		{"resource on another site", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.PRMFields.Resource = "https://api.other.example"
		}, report.Fail, []string{"https://api.other.example", "RFC 9728 §3.3"}},
		{"resource is a path", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.PRMFields.Resource = oauthOrigin + "/api"
		}, report.Partial, []string{oauthOrigin + gather.WellKnownPRM + "/api"}},
		{"PRM not JSON", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.PRMFields = nil
		}, report.Fail, []string{"not a JSON object"}},
		{"issuer differs from its URL", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.Issuer = "https://login.shop.example"
			*tok = gather.OAuthTokenDoc{} // the gatherer contacts nothing rejected metadata names
		}, report.Fail, []string{"https://login.shop.example", "RFC 8414 §3.3", "not contacted"}},
		{"issuer differs by a slash", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.Issuer, m.PRMFields.AuthorizationServers = oauthOrigin+"/", []string{oauthOrigin + "/"}
		}, report.Partial, []string{"character for character"}},
		{"only cross-site authorization servers", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			*m = gather.OAuthMetadata{PRM: m.PRM, PRMFields: m.PRMFields, CrossSite: []string{"https://login.idp.example"}}
			m.PRMFields.AuthorizationServers = m.CrossSite
		}, report.Partial, []string{"https://login.idp.example", "another site"}},
		{"token endpoint in clear text", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.TokenEndpoint = "http://shop.example/token"
		}, report.Fail, []string{"not https"}},
		{"no token endpoint", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.TokenEndpoint, tok.Endpoint, tok.Resp, tok.Reply, tok.Skip = "", "", nil, nil, "no token_endpoint"
		}, report.Fail, []string{"no token_endpoint"}},
		{"token endpoint on another site", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.TokenEndpoint, tok.Endpoint, tok.Resp, tok.Reply, tok.Skip = "https://idp.example/token", "https://idp.example/token", nil, nil, "on another site"
		}, report.Partial, []string{"https://idp.example/token", "another site"}},
		{"token endpoint unreachable", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			tok.Resp, tok.Reply = &fetch.Response{RequestURL: oauthOrigin + "/token", Err: &oauthNetErr{}}, nil
		}, report.Fail, []string{oauthOrigin + "/token", "could not be reached"}},
		{"token endpoint 502", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			tok.Resp, tok.Reply = oauthJSON(oauthOrigin+"/token", 502, ""), nil
		}, report.Fail, []string{"502", "anonymous client_credentials request"}},
		{"token endpoint 502 to a GET", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.AuthMethods = nil
			tok.Grant, tok.Resp, tok.Reply = false, oauthJSON(oauthOrigin+"/token", 502, ""), nil
		}, report.Fail, []string{"502", "to a GET"}},
		{"token refused (the metadata is still right)", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			tok.Resp = oauthJSON(oauthOrigin+"/token", 400, `{"error":"invalid_scope"}`)
			tok.Reply = gather.ParseTokenReply(tok.Resp.Body)
		}, report.Pass, []string{"answered 400 to the scan's client_credentials request"}},
		{"no grant types", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.ASFields.HasGrantTypes, m.ASFields.GrantTypes = false, nil
		}, report.Partial, []string{"grant_types_supported", "authorization_code and implicit"}},
		{"PRM names an authorization server with no metadata", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.AS, m.ASFields, *tok = oauthJSON(oauthOrigin+gather.WellKnownOIDC, 404, ""), nil, gather.OAuthTokenDoc{}
		}, report.Fail, []string{"no metadata answers", oauthOrigin + gather.WellKnownAS, "answered 404"}},
		{"no PRM", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc) {
			m.PRM, m.PRMFields, m.FromPRM = oauthJSON(oauthOrigin+gather.WellKnownPRM, 404, ""), nil, false
		}, report.Partial, []string{"no protected-resource metadata", "answered 404"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, tok := goodOAuthMeta(t), goodOAuthToken()
			c.edit(m, tok)
			got := judgeOAuth(t, "oauth.metadata", m, tok, &gather.OAuthChallenge{})
			if got.Status != c.status {
				t.Fatalf("%s: %s", got.Status, got.Message)
			}
			for _, w := range c.words {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			if got.Status != report.Pass && got.Status != report.NA && len(got.Details["problems"].([]string)) == 0 {
				t.Error("no problems in details")
			}
		})
	}
}

// oauthNetErr is a transport error carrying an internal address, the kind a
// report must never repeat.
type oauthNetErr struct{}

func (*oauthNetErr) Error() string { return "dial tcp 10.1.2.3:443: connect: connection refused" }
func (*oauthNetErr) Unwrap() error { return syscall.ECONNREFUSED }

func TestOAuthMetadataNeverQuotesTransportErrors(t *testing.T) {
	m, tok := goodOAuthMeta(t), goodOAuthToken()
	tok.Resp, tok.Reply = &fetch.Response{RequestURL: oauthOrigin + "/token", Err: &oauthNetErr{}}, nil
	got := judgeOAuth(t, "oauth.metadata", m, tok, &gather.OAuthChallenge{})
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "10.1.2.3") || strings.Contains(string(b), "dial tcp") || strings.Contains(string(b), oauthSecret) {
		t.Errorf("the transport's text reached the report: %s", b)
	}
}

const oauthSecret = "SECRET-TOKEN-9f2"

// goodOAuthChallenge is a challenge that went right; cases break one thing each.
func goodOAuthChallenge(tok *gather.OAuthTokenDoc) *gather.OAuthChallenge {
	anon := oauthJSON(oauthOrigin+"/api/items", 401, `{}`)
	anon.Header.Set("WWW-Authenticate", `Bearer resource_metadata="`+oauthOrigin+gather.WellKnownPRM+`"`)
	return &gather.OAuthChallenge{
		Tried: true, Scope: tok.Scope, Token: tok.Resp, Reply: tok.Reply,
		Target: oauthOrigin + "/api/items", TargetSource: "the OpenAPI operation GET /items",
		Anon: anon, Challenges: gather.ParseChallenges(anon.Header.Values("WWW-Authenticate")),
		Authed: oauthJSON(oauthOrigin+"/api/items", 200, `[]`),
	}
}

func TestOAuthChallengeVerdicts(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge)
		status report.Status
		words  []string
	}{
		{"works", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {}, report.Pass,
			[]string{oauthOrigin + "/token", oauthOrigin + "/api/items", "answered 401", oauthOrigin + gather.WellKnownPRM, "answered 200"}},
		{"no metadata", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			m.ASFields, *ch = nil, gather.OAuthChallenge{}
		}, report.NA, []string{"Not tried", "client_credentials"}},
		{"confidential clients only", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			m.ASFields.AuthMethods, *ch = []string{"private_key_jwt"}, gather.OAuthChallenge{}
		}, report.NA, []string{"Not tried", `"none"`, "registered credentials"}},
		{"token endpoint on another site", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			m.ASFields.TokenEndpoint, *ch = "https://idp.example/token", gather.OAuthChallenge{}
			tok.Endpoint, tok.Grant, tok.Resp, tok.Reply, tok.Skip = "https://idp.example/token", false, nil, nil, "on another site"
		}, report.NA, []string{"https://idp.example/token", "another site"}},
		// RFC 8414 §3.3: metadata whose issuer is not the one it was fetched
		// for must not be used, however inviting its grants are.
		{"metadata rejected for its issuer", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			m.ASFields.Issuer, *tok, *ch = "https://login.shop.example", gather.OAuthTokenDoc{}, gather.OAuthChallenge{}
		}, report.NA, []string{"Not tried", "https://login.shop.example", "not " + oauthOrigin, "RFC 8414 §3.3", "MUST NOT be used", oauthOrigin + "/token was not contacted"}},
		{"metadata without an issuer", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			m.ASFields.Issuer, *tok, *ch = "", gather.OAuthTokenDoc{}, gather.OAuthChallenge{}
		}, report.NA, []string{"Not tried", "names no issuer", "RFC 8414 §3.3"}},
		{"token refused", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Token = oauthJSON(oauthOrigin+"/token", 401, `{"error":"invalid_client","error_description":"<script>"}`)
			ch.Reply, ch.Authed = gather.ParseTokenReply(ch.Token.Body), nil
		}, report.Fail, []string{"refused an anonymous client_credentials request", "401", "invalid_client"}},
		{"token reply without a token", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Reply, ch.Authed = gather.ParseTokenReply([]byte(`{"token_type":"Bearer"}`)), nil
		}, report.Fail, []string{"access_token"}},
		{"token refused by the API", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Authed = oauthJSON(oauthOrigin+"/api/items", 403, `{}`)
		}, report.Fail, []string{"403", "refuses the authorization server's tokens"}},
		{"not a Bearer token type", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Reply = gather.ParseTokenReply([]byte(`{"access_token":"x","token_type":"mac"}`))
		}, report.Partial, []string{`"mac"`}},
		{"API open without a token", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Anon, ch.Challenges = oauthJSON(oauthOrigin+"/api/items", 200, `[]`), nil
		}, report.Partial, []string{"without a token answered 200"}},
		{"401 without a challenge", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Challenges = nil
		}, report.Partial, []string{"without a Bearer challenge", "RFC 9728 §5.1"}},
		{"403 instead of 401", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Anon, ch.Challenges = oauthJSON(oauthOrigin+"/api/items", 403, `{}`), nil
		}, report.Partial, []string{"403", "should answer 401"}},
		{"resource_metadata on another site", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Challenges = gather.ParseChallenges([]string{`Bearer resource_metadata="https://evil.example/prm"`})
		}, report.Partial, []string{"https://evil.example/prm"}},
		{"resource_metadata for another resource", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Challenges = gather.ParseChallenges([]string{`Bearer resource_metadata="` + oauthOrigin + gather.WellKnownPRM + `/other"`})
			ch.Metadata = oauthJSON(oauthOrigin+gather.WellKnownPRM+"/other", 200, `{"resource":"`+oauthOrigin+`/other"}`)
			ch.MetadataFields, _ = wellknown.ParseOAuthFields(ch.Metadata.Body)
		}, report.Partial, []string{"does not cover"}},
		{"resource_metadata for this resource", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Challenges = gather.ParseChallenges([]string{`Bearer resource_metadata="` + oauthOrigin + gather.WellKnownPRM + `/api/items"`})
			ch.Metadata = oauthJSON(oauthOrigin+gather.WellKnownPRM+"/api/items", 200, `{"resource":"`+oauthOrigin+`/api/items"}`)
			ch.MetadataFields, _ = wellknown.ParseOAuthFields(ch.Metadata.Body)
		}, report.Pass, []string{oauthOrigin + gather.WellKnownPRM + "/api/items"}},
		{"no API to try", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Target, ch.TargetSkip, ch.Anon, ch.Authed, ch.Challenges = "", "the OpenAPI description has no GET operation without path parameters", nil, nil, nil
		}, report.Partial, []string{"no protected API", "no GET operation"}},
		{"API unreachable", func(m *gather.OAuthMetadata, tok *gather.OAuthTokenDoc, ch *gather.OAuthChallenge) {
			ch.Anon = &fetch.Response{RequestURL: oauthOrigin + "/api/items", Err: &oauthNetErr{}}
			ch.Authed = &fetch.Response{RequestURL: oauthOrigin + "/api/items", Err: &oauthNetErr{}}
		}, report.Fail, []string{"could not be reached"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, tok := goodOAuthMeta(t), goodOAuthToken()
			ch := goodOAuthChallenge(tok)
			c.edit(m, tok, ch)
			got := judgeOAuth(t, "oauth.challenge", m, tok, ch)
			if got.Status != c.status {
				t.Fatalf("%s: %s", got.Status, got.Message)
			}
			for _, w := range c.words {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			b, _ := json.Marshal(got)
			for _, leak := range []string{oauthSecret, "10.1.2.3", "<script>"} {
				if strings.Contains(string(b), leak) {
					t.Errorf("the report holds %q: %s", leak, b)
				}
			}
		})
	}
}

// Both probes are registered once, in ID order among the others, and every
// input they declare is one the deep plan produces.
func TestOAuthProbesRegistered(t *testing.T) {
	names := map[string]bool{}
	for _, g := range gather.DeepPlan().Gatherers() {
		names[g.Name] = true
	}
	for _, id := range []string{"oauth.metadata", "oauth.challenge"} {
		p := oauthProbe(t, id)
		if p.Name == "" || p.Doc == "" {
			t.Errorf("%s has no name or doc", id)
		}
		for _, k := range p.Requires {
			if !names[k.Name()] {
				t.Errorf("%s requires %q, which the deep plan does not produce", id, k.Name())
			}
		}
	}
}
