package native

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/agentready/agentready/edge"
)

// Cache is the edge's in-memory cache for native hosts (this platform and the
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

// OriginProxy forwards to origin for native hosts: the caller's Host kept
// (the origin builds public URLs from it), Server-Sent Events streamed, and
// the edge's 502 envelope when the origin does not answer.
func OriginProxy(origin *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(origin)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			edge.OriginUnavailable(w)
		},
	}
}
