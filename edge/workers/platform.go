//go:build js

package workers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/syumai/workers/cloudflare"
	"github.com/syumai/workers/cloudflare/cache"
	"github.com/syumai/workers/cloudflare/fetch"
	"github.com/syumai/workers/cloudflare/sockets"

	"github.com/agentready/agentready/edge"
)

// Platform implements edge.Platform on Cloudflare Workers.
type Platform struct {
	origin *url.URL
	client *http.Client
	redis  Target
	rerr   error  // why Redis cannot be used (reported on the first decision)
	prefix string // Redis key prefix of the allowance counters
}

// New reads ORIGIN_URL, REDIS_URL (or REDIS_ADDR) and AGENTREADY_RATE_PREFIX (default
// "rate:", so deployments sharing a Redis can keep apart) from the Worker's environment.
func New() (*Platform, error) {
	o := cloudflare.Getenv("ORIGIN_URL")
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return nil, &edge.ConfigError{Setting: "ORIGIN_URL", Err: errors.New("not set to the origin's base URL")}
	}
	// syumai/workers v0.32.0's default fetch client panics ("Illegal invocation"):
	// bind fetch to globalThis explicitly.
	c := fetch.NewClient(fetch.WithBinding(js.Global().Get("globalThis"))).HTTPClient(fetch.RedirectModeManual)
	prefix := cloudflare.Getenv("AGENTREADY_RATE_PREFIX")
	if prefix == "" {
		prefix = "rate:"
	}
	t, rerr := ParseTarget(cloudflare.Getenv("REDIS_URL"), cloudflare.Getenv("REDIS_ADDR"))
	return &Platform{origin: u, client: c, redis: t, rerr: rerr, prefix: prefix}, nil
}

func (p *Platform) Now() time.Time { return time.Now() }

// Allow runs redis_rate's GCRA script in Redis over a Workers TCP socket.
func (p *Platform) Allow(_ context.Context, key string, limit int, period time.Duration, n int) (edge.Decision, error) {
	if p.rerr != nil {
		return edge.Decision{}, p.rerr
	}
	var opts *sockets.SocketOptions
	if p.redis.TLS {
		opts = &sockets.SocketOptions{SecureTransport: sockets.SecureTransportOn}
	}
	// The socket keeps the dial context for all I/O: never a context that ends early.
	conn, err := sockets.Connect(context.Background(), p.redis.Addr, opts)
	if err != nil {
		return edge.Decision{}, err
	}
	defer conn.Close()
	allowed, remaining, retry, reset, err := decide(conn, p.redis, p.prefix+key, limit, period, n)
	if err != nil {
		return edge.Decision{}, err
	}
	return edge.Decision{Allowed: allowed > 0, Limit: limit, Remaining: int(remaining),
		RetryAfter: time.Duration(retry * float64(time.Second)), ResetAfter: time.Duration(reset * float64(time.Second))}, nil
}

func (p *Platform) originRequest(ctx context.Context, r *http.Request, body io.Reader) *http.Request {
	u := *p.origin
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	out, _ := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	out.Header = r.Header.Clone()
	out.Header.Set("X-Forwarded-Host", r.Host)
	return out
}

func (p *Platform) Fetch(ctx context.Context, r *http.Request) (*http.Response, error) {
	return p.client.Do(p.originRequest(ctx, r, nil))
}

func (p *Platform) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	var body io.Reader
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		// The handler has read and bounded the body (413 over edge.MaxBody),
		// so this never truncates; the limit only guards a future caller.
		b, err := io.ReadAll(io.LimitReader(r.Body, edge.MaxBody+1))
		switch {
		case err != nil:
			edge.BadRequest(w)
			return
		case len(b) > edge.MaxBody:
			edge.PayloadTooLarge(w)
			return
		}
		body = bytes.NewReader(b)
	}
	out := p.originRequest(r.Context(), r, body)
	for k, v := range reqHeaders {
		out.Header[k] = v
	}
	resp, err := p.client.Do(out)
	if err != nil {
		edge.OriginUnavailable(w)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	for k, v := range respHeaders {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body) // streams: syumai/workers pipes the writer into the Response body
}

func cacheURL(key string) string {
	return "https://edge-cache.agentready.internal/" + url.PathEscape(key)
}

func (p *Platform) CacheGet(key string) ([]byte, bool) {
	req, _ := http.NewRequest(http.MethodGet, cacheURL(key), nil)
	resp, err := cache.New().Match(req, nil)
	if err != nil || resp == nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, err == nil
}

func (p *Platform) CachePut(key string, val []byte, ttl time.Duration) {
	req, _ := http.NewRequest(http.MethodGet, cacheURL(key), nil)
	req.Body = nil // the Cache API refuses GET requests with a body
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Cache-Control": {"public, max-age=" + strconv.Itoa(int(ttl.Seconds()))}}, Body: io.NopCloser(bytes.NewReader(val))}
	cache.New().Put(req, resp)
}

// ClientIP is CF-Connecting-IP, which Cloudflare sets and clients cannot forge.
// Outside Cloudflare (workerd in the tests) every caller shares one "unknown"
// bucket rather than trusting a header the caller chose.
func (p *Platform) ClientIP(r *http.Request) string {
	if ip := strings.TrimSpace(r.Header.Get("CF-Connecting-IP")); ip != "" {
		return ip
	}
	return "unknown"
}

var _ edge.Platform = (*Platform)(nil)
