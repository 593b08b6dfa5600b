package workerd_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cacheService is the HTTP service workerd sends Cache API calls to
// (cacheApiOutbound): match is a GET answered with Cf-Cache-Status HIT or MISS,
// put is a PUT whose body is the serialised response, delete is PURGE.
// Cloudflare runs its own cache in production; workerd ships none.
type cacheService struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
	srv     *httptest.Server
}

type cacheEntry struct {
	raw     []byte
	expires time.Time
}

var maxAge = regexp.MustCompile(`(?:s-maxage|max-age)=(\d+)`)

func newCacheService() *cacheService {
	c := &cacheService{entries: map[string]cacheEntry{}}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

func (c *cacheService) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Host + r.URL.RequestURI()
	switch r.Method {
	case http.MethodPut:
		raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		resp, err := parseStored(raw)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		ttl := 0
		if m := maxAge.FindStringSubmatch(resp.Header.Get("Cache-Control")); m != nil {
			ttl, _ = strconv.Atoi(m[1])
		}
		if ttl > 0 {
			c.mu.Lock()
			c.entries[key] = cacheEntry{raw, time.Now().Add(time.Duration(ttl) * time.Second)}
			c.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	case "PURGE":
		c.mu.Lock()
		_, ok := c.entries[key]
		delete(c.entries, key)
		c.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
		}
	default:
		c.mu.Lock()
		e, ok := c.entries[key]
		c.mu.Unlock()
		if !ok || time.Now().After(e.expires) {
			w.Header().Set("Cf-Cache-Status", "MISS")
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		resp, _ := parseStored(e.raw)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Cf-Cache-Status", "HIT")
		w.WriteHeader(resp.StatusCode)
		w.Write(resp.body)
	}
}

type storedResponse struct {
	StatusCode int
	Header     http.Header
	body       []byte
}

// parseStored reads a serialised response. workerd writes the header block
// with the live response's Transfer-Encoding but the body itself unframed, so
// the body is simply everything after the blank line.
func parseStored(raw []byte) (storedResponse, error) {
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		return storedResponse{}, errors.New("no header block")
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...))))
	status, err := tp.ReadLine()
	if err != nil {
		return storedResponse{}, err
	}
	parts := strings.SplitN(status, " ", 3)
	code, err := strconv.Atoi(parts[min(1, len(parts)-1)])
	if err != nil {
		return storedResponse{}, fmt.Errorf("status line %q", status)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return storedResponse{}, err
	}
	h := http.Header(hdr)
	h.Del("Transfer-Encoding")
	h.Del("Content-Length")
	return storedResponse{code, h, body}, nil
}
