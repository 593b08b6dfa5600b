//go:build js && wasm

package workers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/agentready/agentready/edge"
)

// Platform implements edge.Platform on Cloudflare Workers, through the host
// functions of the entry module (index.mjs). It is made once per isolate and
// shared by every request: it holds settings, and what it has learnt of a
// Redis Cluster's slots (addresses, no sockets). Everything with I/O —
// origin fetches, cache reads and writes, Redis sockets — is started by the
// request's own goroutine and belongs to that request.
type Platform struct {
	s     Settings
	slots slotMap // where a Redis Cluster keeps its slots, as last learnt
}

// New builds the platform from settings read by ReadSettings.
func New(s Settings) *Platform { return &Platform{s: s} }

func (p *Platform) Now() time.Time { return time.Now() }

// Allow runs redis_rate's GCRA script in Redis over sockets of the request's
// own (Workers refuse a socket opened by another request: "Cannot perform I/O
// on behalf of a different request"), each closed before Allow returns: one
// socket, or on a Redis Cluster up to three when a MOVED or ASK redirects
// the decision. Why a decision failed goes to the Worker's log; the caller
// is told only that the allowance store does not answer.
func (p *Platform) Allow(ctx context.Context, key string, limit int, period time.Duration, n int) (edge.Decision, error) {
	id := idOf(ctx)
	dialer := func(addr string) (io.ReadWriteCloser, error) {
		c, err := dial(id, addr, p.s.Redis.TLS)
		if err != nil {
			return nil, err // not c: a nil *conn in the interface is not nil
		}
		return c, nil
	}
	v, err := decide(dialer,
		p.s.Redis, &p.slots, p.s.Prefix+key, limit, period, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "edge: allowance store:", err)
		return edge.Decision{}, err
	}
	return edge.Decision{Allowed: v.allowed > 0, Limit: limit, Remaining: int(v.remaining),
		RetryAfter: time.Duration(v.retry * float64(time.Second)), ResetAfter: time.Duration(v.reset * float64(time.Second))}, nil
}

// originURL is the origin's URL for r's path and query.
func (p *Platform) originURL(r *http.Request) string {
	u := *p.s.Origin
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, "", r.URL.RawQuery
	return u.String()
}

// originResponse is what the host's fetch settles with.
type originResponse struct {
	status int
	header http.Header
	body   []byte   // when buffered
	stream js.Value // when streamed
}

// fetch asks the origin; the answer's body is buffered (at most 8 MiB, the
// host's cap) unless stream is set, when it stays a ReadableStream (null for
// an answer without a body).
func fetch(method, target string, h http.Header, body []byte, stream bool) (originResponse, error) {
	b := js.Null()
	if body != nil {
		b = toJSBytes(body)
	}
	v, err := call("fetch", method, target, formatHeader(h), b, stream)
	if err != nil {
		return originResponse{}, err
	}
	out := originResponse{status: v.Get("status").Int(), header: parseHeader(v.Get("head").String())}
	if stream {
		out.stream = v.Get("stream")
	} else {
		out.body = bytesOf(v.Get("body"))
	}
	return out, nil
}

func (p *Platform) request(r *http.Request) (string, http.Header) {
	h := r.Header.Clone()
	h.Set("X-Forwarded-Host", r.Host)
	return p.originURL(r), h
}

func (p *Platform) Fetch(_ context.Context, r *http.Request) (*http.Response, error) {
	target, h := p.request(r)
	res, err := fetch(r.Method, target, h, nil, false)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: res.status, Header: res.header, Body: io.NopCloser(bytes.NewReader(res.body)),
		ContentLength: int64(len(res.body)), Request: r}, nil
}

func (p *Platform) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	rw := unwrap(w)
	if rw == nil {
		// The origin's body goes out as a stream only through the Worker's
		// own writer; a wrapper without Unwrap would need the bytes in Go.
		fmt.Fprintln(os.Stderr, "edge: Forward was given a ResponseWriter the Worker did not make")
		edge.InternalError(w)
		return
	}
	var body []byte
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
		body = b
	}
	target, h := p.request(r)
	for k, v := range reqHeaders {
		h[k] = v
	}
	res, err := fetch(r.Method, target, h, body, true)
	if err != nil {
		edge.OriginUnavailable(w)
		return
	}
	for k, v := range res.header {
		w.Header()[k] = v
	}
	for k, v := range respHeaders {
		w.Header()[k] = v
	}
	rw.WriteHeader(res.status)
	rw.streamFrom(res.stream) // streams (SSE too) without passing through Go
}

// unwrap finds the Worker's own writer under w.
func unwrap(w http.ResponseWriter) *responseWriter {
	for {
		switch v := w.(type) {
		case *responseWriter:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// cacheURL is the Cache API's key for an edge cache key.
func cacheURL(key string) string {
	return "https://edge-cache.agentready.internal/" + url.PathEscape(key)
}

func (p *Platform) CacheGet(key string) ([]byte, bool) {
	v, err := call("cacheGet", cacheURL(key))
	if err != nil || v.IsNull() || v.IsUndefined() {
		return nil, false
	}
	return bytesOf(v), true
}

// CachePut waits for the write: the request's I/O must finish before its
// answer, or the runtime cancels it.
func (p *Platform) CachePut(key string, val []byte, ttl time.Duration) {
	call("cachePut", cacheURL(key), toJSBytes(val), strconv.Itoa(int(ttl.Seconds())))
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

// conn is a TCP socket (cloudflare:sockets) the host opened for one request;
// its reads and writes time out on the host's side.
type conn struct {
	socket js.Value
	buf    []byte
	eof    bool
}

// dial opens a socket for request id; the host closes it with the request
// if the platform has not.
func dial(id int, addr string, tls bool) (*conn, error) {
	v, err := call("connect", id, addr, tls)
	if err != nil {
		return nil, err
	}
	return &conn{socket: v}, nil
}

func (c *conn) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		if c.eof {
			return 0, io.EOF
		}
		v, err := call("read", c.socket)
		if err != nil {
			return 0, err
		}
		if v.IsNull() {
			c.eof = true
			return 0, io.EOF
		}
		c.buf = bytesOf(v)
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *conn) Write(b []byte) (int, error) {
	if _, err := call("write", c.socket, toJSBytes(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *conn) Close() error {
	c.socket.Call("close")
	return nil
}

var _ io.ReadWriteCloser = (*conn)(nil)
