// Package edgehost is what the two hosts of the edge on our machines share,
// the native platform (edge/native) and the wazero host (wasm): the
// connection to the origin (transport and reverse proxy) and the in-memory
// cache. It imports nothing of the edge, so that the wazero host depends on
// the edge only through edge/wasi/abi.
package edgehost

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Cache is the edge's in-memory cache for native hosts (edge/native and the
// wazero host): entries expire, and past 10,000 entries one is evicted per put.
type Cache struct {
	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	val     []byte
	expires time.Time
}

// Get is the value under key, unless it expired by now.
func (c *Cache) Get(key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return e.val, true
}

// Put stores val under key until expires.
func (c *Cache) Put(key string, val []byte, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]entry{}
	}
	if len(c.entries) > 10000 {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = entry{val: val, expires: expires}
}

// Dialer connects to the origin in place of dialling its URL: the stack runs
// the origin in the same process and hands the edge an in-memory connection.
type Dialer func(ctx context.Context) (net.Conn, error)

// Transport is a connection pool to the origin for native hosts,
// through dial when it is set. net/http's default transport keeps two idle
// connections per host: with more requests in flight than that, most
// forwards dialled a connection of their own and closed it after one request.
func Transport(dial Dialer) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if dial != nil {
		t.Proxy = nil // never through an HTTP proxy: the origin is in this process
		t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }
	}
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
	// A response body is read (and so copied to the client) in chunks of at
	// most this size: 4 KiB, the default, made a 17 KB scan report five
	// writes to the client's socket.
	t.ReadBufferSize = 64 << 10
	return t
}

// Proxy forwards to origin through transport for native hosts: the
// caller's Host kept (the origin builds public URLs from it), Server-Sent
// Events streamed, and unavailable (the edge's 502 envelope) answering when
// the origin does not. ReverseProxy flushes every write of a response of unknown length
// and of every text/event-stream by itself; others are written in full
// (flushing each 32 KiB copy cost a system call per chunk).
func Proxy(origin *url.URL, transport http.RoundTripper, unavailable func(http.ResponseWriter)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(origin)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport:  transport,
		BufferPool: bufferPool{},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			unavailable(w)
		},
	}
}

// bufferPool lends ReverseProxy its copy buffers (it allocates 32 KiB per
// response without one).
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }
