package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/openapi"
)

// Checks of the auth family (engine/gather/auth.go): API key
// authentication (2.4) and scoped keys (2.5) as the OpenAPI description
// declares them, the OpenID or RFC 8414 metadata (2.6) and RFC 9728
// protected-resource metadata (2.10).

func interactiveOnly(s openapi.Scheme) bool {
	if s.Type == "openIdConnect" {
		return true
	}
	if s.Type != "oauth2" {
		return false
	}
	for _, f := range s.Flows {
		if f.Kind == "clientCredentials" || f.Kind == "password" {
			return false
		}
	}
	return true
}

func apiKeyAuth(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	s := spec.Spec
	if s == nil {
		return na(noSpec)
	}
	var machine, interactive []string
	for _, sc := range s.Schemes {
		if interactiveOnly(sc) {
			interactive = append(interactive, sc.Name+" ("+sc.Type+")")
		} else if sc.Type != "" {
			machine = append(machine, sc.Name+" ("+sc.Type+schemeSuffix(sc)+")")
		}
	}
	writes := false
	for _, o := range s.Operations {
		writes = writes || o.IsWrite()
	}
	det := map[string]any{"nonInteractive": machine, "interactiveOnly": interactive}
	switch {
	case len(machine) > 0:
		return pass("Agents can authenticate without a browser: "+strings.Join(machine, ", ")+".", det, at(spec.Resp))
	case len(interactive) > 0:
		return partial("Only interactive OAuth2/OpenID Connect flows are declared; an agent needs a person to log in.", "Add an API key or the OAuth2 client-credentials flow for machine clients.", det, at(spec.Resp))
	case writes:
		return fail("The API declares write operations but no security scheme at all.", "", nil)
	}
	return na("A public read-only API: no credential is needed.")
}

func schemeSuffix(s openapi.Scheme) string {
	if s.Scheme != "" {
		return " " + s.Scheme
	}
	for _, f := range s.Flows {
		if f.Kind == "clientCredentials" {
			return " clientCredentials"
		}
	}
	return ""
}

func scopedKeys(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	s := spec.Spec
	if s == nil {
		return na(noSpec)
	}
	if len(s.Schemes) == 0 {
		return na("The API declares no security schemes.")
	}
	flowScopes := 0
	for _, sc := range s.Schemes {
		for _, f := range sc.Flows {
			flowScopes += f.Scopes
		}
	}
	opScopes := map[string]bool{}
	for _, o := range s.Operations {
		for _, sc := range o.Scopes {
			opScopes[sc] = true
		}
	}
	if flowScopes > 0 || len(opScopes) > 0 {
		return pass(fmt.Sprintf("Access is scoped: %d scopes declared in OAuth2 flows, %d named by operations.", flowScopes, len(opScopes)), map[string]int{"flowScopes": flowScopes, "operationScopes": len(opScopes)}, at(spec.Resp))
	}
	return fail("Security schemes exist but no scopes are declared or required: every credential is all-powerful.", "", nil)
}

func declaresOAuth(s *openapi.Spec) bool {
	if s == nil {
		return false
	}
	for _, sc := range s.Schemes {
		if sc.Type == "oauth2" || sc.Type == "openIdConnect" {
			return true
		}
	}
	return false
}

func openIDConfig(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	docs := []*gather.AuthMetadata{gather.Get(in, gather.OpenIDConfig), gather.Get(in, gather.OAuthServer)}
	var problems []string
	var found *fetch.Response
	for _, d := range docs {
		r := d.Resp
		if !r.Found() {
			continue
		}
		if found == nil {
			found = r
		}
		as, err := d.Parsed, d.Err
		if err != nil {
			problems = append(problems, r.RequestURL+": not JSON")
			continue
		}
		if len(as.Problems) == 0 {
			return pass(fmt.Sprintf("Authorization-server metadata at %s names issuer %s and token endpoint %s.", r.RequestURL, as.Issuer, as.TokenEndpoint), as, at(r))
		}
		for _, p := range as.Problems {
			problems = append(problems, r.RequestURL+": "+p)
		}
	}
	if found != nil {
		return partial("Authorization-server metadata exists but is invalid: "+strings.Join(problems, "; ")+".", "", map[string]any{"problems": problems}, at(found))
	}
	if declaresOAuth(spec.Spec) {
		return fail("The OpenAPI document declares OAuth2/OpenID Connect, but there is no /.well-known/openid-configuration or /.well-known/oauth-authorization-server.", "", nil)
	}
	return na("The site publishes no OAuth discovery document and its API declares no OAuth.")
}

func usesBearer(s *openapi.Spec) bool {
	if s == nil {
		return false
	}
	for _, sc := range s.Schemes {
		if sc.Type == "oauth2" || sc.Type == "openIdConnect" || (sc.Type == "http" && sc.Scheme == "bearer") {
			return true
		}
	}
	return false
}

func protectedResource(in gather.Source) Outcome {
	doc, spec := gather.Get(in, gather.ProtectedResource), gather.Get(in, gather.Spec)
	r := doc.Resp
	if r.Found() {
		pr, err := doc.Parsed, doc.Err
		if err != nil {
			return partial("/.well-known/oauth-protected-resource is not JSON.", "", nil, at(r))
		}
		if len(pr.Problems) == 0 {
			return pass(fmt.Sprintf("RFC 9728 metadata names resource %s and %s.", pr.Resource, plural(len(pr.AuthorizationServers), "authorization server", "authorization servers")), pr, at(r))
		}
		return partial("Protected-resource metadata is incomplete: "+strings.Join(pr.Problems, "; ")+".", "", pr, at(r))
	}
	if usesBearer(spec.Spec) {
		return fail("The API uses bearer/OAuth2 authentication but publishes no /.well-known/oauth-protected-resource.", "", probeOf(r))
	}
	return na("No protected-resource metadata, and the API uses no bearer or OAuth2 authentication.")
}
