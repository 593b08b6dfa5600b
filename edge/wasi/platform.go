//go:build wasip1

package wasi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"time"
	"unsafe"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/wasi/abi"
)

//go:wasmimport agentready rate_allow
func hostRateAllow(key unsafe.Pointer, keyLen, limit, period, n uint32, out unsafe.Pointer) uint32

//go:wasmimport agentready cache_get
func hostCacheGet(key unsafe.Pointer, keyLen uint32) uint32

//go:wasmimport agentready cache_read
func hostCacheRead(ptr unsafe.Pointer, n uint32)

//go:wasmimport agentready cache_put
func hostCachePut(key unsafe.Pointer, keyLen uint32, val unsafe.Pointer, valLen uint32, ttl uint32)

//go:wasmimport agentready origin_fetch
func hostOriginFetch(req unsafe.Pointer, n uint32) uint32

//go:wasmimport agentready origin_read
func hostOriginRead(ptr unsafe.Pointer, n uint32)

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Platform implements edge.Platform over the host functions.
type Platform struct{}

func (Platform) Now() time.Time { return time.Now() }

func (Platform) Allow(_ context.Context, key string, limit int, period time.Duration, n int) (edge.Decision, error) {
	k := []byte(key)
	var out [32]byte
	if hostRateAllow(ptr(k), uint32(len(k)), uint32(limit), uint32(period/time.Second), uint32(n), unsafe.Pointer(&out[0])) != 0 {
		return edge.Decision{}, errHost("rate limiter")
	}
	return edge.Decision{
		Allowed:    binary.LittleEndian.Uint64(out[0:]) == 1,
		Limit:      limit,
		Remaining:  int(binary.LittleEndian.Uint64(out[8:])),
		RetryAfter: time.Duration(int64(binary.LittleEndian.Uint64(out[16:]))) * time.Millisecond,
		ResetAfter: time.Duration(int64(binary.LittleEndian.Uint64(out[24:]))) * time.Millisecond,
	}, nil
}

type errHost string

func (e errHost) Error() string { return string(e) + " unavailable in the host" }

func (Platform) CacheGet(key string) ([]byte, bool) {
	k := []byte(key)
	n := hostCacheGet(ptr(k), uint32(len(k)))
	if n == 0xFFFFFFFF {
		return nil, false
	}
	buf := make([]byte, n)
	hostCacheRead(ptr(buf), n)
	return buf, true
}

func (Platform) CachePut(key string, val []byte, ttl time.Duration) {
	k := []byte(key)
	hostCachePut(ptr(k), uint32(len(k)), ptr(val), uint32(len(val)), uint32(ttl/time.Second))
}

func (Platform) Fetch(ctx context.Context, r *http.Request) (*http.Response, error) {
	var buf bytes.Buffer
	r.Header.Set("Connection", "close")
	if err := r.Write(&buf); err != nil {
		return nil, err
	}
	n := hostOriginFetch(ptr(buf.Bytes()), uint32(buf.Len()))
	if n == 0 {
		return nil, errHost("origin")
	}
	resp := make([]byte, n)
	hostOriginRead(ptr(resp), n)
	return http.ReadResponse(bufio.NewReader(bytes.NewReader(resp)), r)
}

// forwarding is the forward asked while handling the current request (an
// instance handles one at a time).
var forwarding struct {
	asked bool
	req   http.Header
}

// Forward asks the host to stream the request to the origin: the module's
// main answers with a forward frame (TakeForward).
func (Platform) Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header) {
	h := w.Header()
	for k, v := range respHeaders {
		h[k] = v
	}
	fwd := reqHeaders.Clone()
	if fwd == nil {
		fwd = http.Header{}
	}
	fwd.Set(abi.PathHeader, r.URL.Path) // the edge routed and signed this spelling
	forwarding.asked, forwarding.req = true, fwd
	w.WriteHeader(http.StatusOK)
}

// TakeForward reports whether the request just handled asked for a forward,
// with the request headers to add, and forgets it.
func TakeForward() (http.Header, bool) {
	req, asked := forwarding.req, forwarding.asked
	forwarding.asked, forwarding.req = false, nil
	return req, asked
}

func (Platform) ClientIP(r *http.Request) string { return r.Header.Get(abi.PeerHeader) }

var _ edge.Platform = Platform{}
