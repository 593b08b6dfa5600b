package gather

import (
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/wellknown"
)

// The auth family: authorization-server metadata (OpenID configuration and
// RFC 8414) and protected-resource metadata (RFC 9728). Its checks are in
// engine/checks/auth.go.

// AuthMetadata is an authorization-server metadata document (OpenID or RFC 8414).
type AuthMetadata struct {
	Resp   *fetch.Response
	Parsed *wellknown.AuthServer // nil unless found and JSON
	Err    error
}

// ProtectedResourceDoc is RFC 9728 metadata.
type ProtectedResourceDoc struct {
	Resp   *fetch.Response
	Parsed *wellknown.ProtectedResource
	Err    error
}

func authMetadata(k Key[*AuthMetadata], path string) *Gatherer {
	return Define(k, path+" (authorization-server metadata).", nil, func(c *Ctx) (*AuthMetadata, error) {
		r := fetchDoc(c, path, acceptJSON)
		out := &AuthMetadata{Resp: r}
		if r.Found() {
			out.Parsed, out.Err = wellknown.ParseAuthServer(r.Body, c.Site.Origin)
		}
		return out, nil
	})
}

var protectedResourceGatherer = Define(ProtectedResource, "/.well-known/oauth-protected-resource (RFC 9728).", nil,
	func(c *Ctx) (*ProtectedResourceDoc, error) {
		r := fetchDoc(c, "/.well-known/oauth-protected-resource", acceptJSON)
		out := &ProtectedResourceDoc{Resp: r}
		if r.Found() {
			out.Parsed, out.Err = wellknown.ParseProtectedResource(r.Body, c.Site.Target)
		}
		return out, nil
	})
