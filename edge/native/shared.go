package native

import (
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/internal/edgehost"
)

// Cache is the edge's in-memory cache (internal/edgehost).
type Cache = edgehost.Cache

// Dialer connects to the origin in place of dialling its URL (internal/edgehost).
type Dialer = edgehost.Dialer

// OriginTransport is a connection pool to the origin, through dial when it
// is set (internal/edgehost).
func OriginTransport(dial Dialer) *http.Transport { return edgehost.Transport(dial) }

// OriginProxy forwards to origin through transport, answering the edge's
// 502 envelope when the origin does not (internal/edgehost).
func OriginProxy(origin *url.URL, transport http.RoundTripper) *httputil.ReverseProxy {
	return edgehost.Proxy(origin, transport, edge.OriginUnavailable)
}
