// Package native runs the edge handler as ordinary Go: a reverse proxy to the
// origin, limits from internal/ratelimit (redis_rate on Redis, or the
// in-process GCRA), and an in-memory cache. Tests use it, and so can a
// self-hosted deployment that does not want WebAssembly.
package native

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/internal/ratelimit"
)

// Platform implements edge.Platform natively.
type Platform struct {
	origin  *url.URL
	client  *http.Client
	limiter ratelimit.Limiter
	proxy   *httputil.ReverseProxy
	clock   func() time.Time
	cache   Cache
}

// New builds a platform forwarding to origin (e.g. http://127.0.0.1:9090),
// connecting through dial when it is not nil.
func New(origin string, limiter ratelimit.Limiter, dial Dialer) (*Platform, error) {
	u, err := url.Parse(origin)
	if err != nil {
		return nil, err
	}
	return NewWithTransport(u, limiter, OriginTransport(dial)), nil
}

// NewWithTransport builds a platform whose requests to the origin go
// through t: several origins behind an edgehost.Balancer (`serve --role
// edge`), origin being the one its requests are addressed to before t
// picks.
func NewWithTransport(origin *url.URL, limiter ratelimit.Limiter, t http.RoundTripper) *Platform {
	if limiter == nil {
		limiter = ratelimit.NewLocal()
	}
	return &Platform{origin: origin, client: &http.Client{Timeout: 60 * time.Second, Transport: t}, limiter: limiter, clock: time.Now, proxy: OriginProxy(origin, t)}
}

func (p *Platform) Now() time.Time { return p.clock() }

func (p *Platform) Allow(ctx context.Context, key string, limit int, period time.Duration, n int) (edge.Decision, error) {
	r, err := p.limiter.AllowN(ctx, key, ratelimit.Limit{Rate: limit, Burst: limit, Period: period}, n)
	if err != nil {
		return edge.Decision{}, err
	}
	return edge.Decision{Allowed: r.Allowed > 0, Limit: limit, Remaining: r.Remaining, RetryAfter: r.RetryAfter, ResetAfter: r.ResetAfter}, nil
}

func (p *Platform) Fetch(ctx context.Context, r *http.Request) (*http.Response, error) {
	u := *p.origin
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	out := r.Clone(ctx)
	out.URL, out.RequestURI = &u, ""
	if out.Host == "" {
		out.Host = p.origin.Host
	}
	return p.client.Do(out)
}

func (p *Platform) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	for k, v := range reqHeaders {
		r.Header[k] = v
	}
	for k, v := range respHeaders {
		w.Header()[k] = v
	}
	p.proxy.ServeHTTP(w, r)
}

func (p *Platform) CacheGet(key string) ([]byte, bool) { return p.cache.Get(key, p.clock()) }

func (p *Platform) CachePut(key string, val []byte, ttl time.Duration) {
	p.cache.Put(key, val, p.clock().Add(ttl))
}

// ClientIP is the socket's peer: a directly exposed edge trusts no forwarding header.
func (p *Platform) ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return strings.Trim(host, "[]")
}

var _ edge.Platform = (*Platform)(nil)
