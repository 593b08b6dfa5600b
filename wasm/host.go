package wasm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/edge/wasi/abi"
	"github.com/agentready/agentready/internal/edgehost"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Options configure a host.
type Options struct {
	OriginURL string            // where the module's origin calls go
	Dial      edgehost.Dialer   // connects to the origin instead of dialling OriginURL (an in-process origin)
	Limiter   ratelimit.Limiter // default: in-process GCRA
	Env       map[string]string // the module's environment (AGENTREADY_* settings and secrets)
	CacheDir  string            // compilation cache; default: the user cache directory
	Instances int               // warm instances; default: the number of CPUs (at least 2)
	// MaxInstances bounds the instances at once, when requests wait in host
	// calls (a badge's first scan, Redis); default: 4 × Instances, at least 16.
	// Each costs about 10 MB; those beyond Instances are closed when idle.
	MaxInstances int
	MaxBody      int64 // request bodies larger than this are refused (1 MiB)
	// Transport, when set, carries every request to the origin in place of a
	// pool to OriginURL (and Dial): several origins behind an
	// edgehost.Balancer (`serve --role edge`).
	Transport http.RoundTripper
}

// Host serves HTTP through the module.
type Host struct {
	o        Options
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	pool     *pool
	origin   *url.URL
	client   *http.Client
	proxy    *httputil.ReverseProxy
	byName   sync.Map // module name → *instance
	seq      atomic.Int64
	cache    edgehost.Cache
	// blockingLimiter: the limiter makes network round trips (Redis), so a
	// rate_allow call waits rather than computes.
	blockingLimiter bool
}

type instance struct {
	mod        api.Module
	inBuf      api.Function
	handle     api.Function
	stack      [1]uint64 // parameters and results of in_buf and handle
	frame      []byte    // the request frame, reused
	lastCache  []byte
	lastOrigin []byte
}

// DefaultCacheDir is where compiled modules are kept between runs.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agentready", "wazero")
	}
	return filepath.Join(os.TempDir(), "agentready-wazero")
}

// New compiles the module and starts the instance pool.
func New(ctx context.Context, module []byte, o Options) (*Host, error) {
	if o.Limiter == nil {
		o.Limiter = ratelimit.NewLocal()
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Instances <= 0 {
		o.Instances = max(2, runtime.NumCPU())
	}
	if o.MaxInstances < o.Instances {
		o.MaxInstances = max(16, 4*o.Instances)
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	u, err := url.Parse(o.OriginURL)
	if err != nil {
		return nil, err
	}
	cache, err := wazero.NewCompilationCacheWithDir(o.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("wazero compilation cache in %s: %w", o.CacheDir, err)
	}
	var transport http.RoundTripper = edgehost.Transport(o.Dial)
	if o.Transport != nil {
		transport = o.Transport
	}
	// 100 s: the paid deep scan (60 s deadline) plus its verification and
	// settlement must fit, or the payer gets a 502 for a scan that completes.
	h := &Host{o: o, origin: u, client: &http.Client{Timeout: 100 * time.Second, Transport: transport}}
	_, local := o.Limiter.(*ratelimit.Local)
	h.blockingLimiter = !local
	h.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
	wasi_snapshot_preview1.MustInstantiate(ctx, h.rt)
	if err := h.hostFunctions(ctx); err != nil {
		return nil, err
	}
	if h.compiled, err = h.rt.CompileModule(ctx, module); err != nil {
		return nil, fmt.Errorf("compiling the edge module: %w", err)
	}
	h.proxy = edgehost.Proxy(u, transport, originUnavailable)
	h.pool = &pool{warm: o.Instances, max: o.MaxInstances, fresh: h.instantiate, discard: h.discard}
	for i := 0; i < o.Instances; i++ {
		inst, err := h.instantiate(ctx)
		if err != nil {
			return nil, err
		}
		h.pool.live++
		h.pool.idle = append(h.pool.idle, inst)
	}
	return h, nil
}

func (h *Host) instantiate(ctx context.Context) (*instance, error) {
	name := fmt.Sprintf("edge-%d", h.seq.Add(1))
	cfg := wazero.NewModuleConfig().WithName(name).WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader).WithStderr(os.Stderr)
	for k, v := range h.o.Env {
		cfg = cfg.WithEnv(k, v)
	}
	inst := &instance{}
	h.byName.Store(name, inst)
	mod, err := h.rt.InstantiateModule(ctx, h.compiled, cfg)
	if err != nil {
		h.byName.Delete(name)
		return nil, fmt.Errorf("instantiating the edge module: %w", err)
	}
	inst.mod, inst.inBuf, inst.handle = mod, mod.ExportedFunction("in_buf"), mod.ExportedFunction("handle")
	if inst.inBuf == nil || inst.handle == nil {
		return nil, errors.New("the module does not export in_buf and handle (build it with -buildmode=c-shared from cmd/edgewasm)")
	}
	return inst, nil
}

func (h *Host) discard(inst *instance) {
	h.byName.Delete(inst.mod.Name())
	logDiscardErr(inst.mod.Close(context.Background()))
}

func (h *Host) instanceOf(m api.Module) *instance {
	v, _ := h.byName.Load(m.Name())
	return v.(*instance)
}

// Close releases the runtime.
func (h *Host) Close(ctx context.Context) error { return h.rt.Close(ctx) }

// request is what the host frames for the module.
type request struct {
	method, uri, host, peer string
	header                  http.Header
	body                    []byte
}

// call runs one request through a pooled instance. The response's body is
// the host's own copy.
func (h *Host) call(ctx context.Context, req *request) (abi.Response, error) {
	inst, err := h.pool.get(ctx)
	if err != nil {
		return abi.Response{}, err
	}
	resp, err := h.callOn(ctx, inst, req)
	if err != nil {
		// A trapped instance is not reused: its slot goes to a fresh one.
		h.discard(inst)
		h.pool.release()
		return resp, err
	}
	h.pool.put(inst)
	return resp, nil
}

func (h *Host) callOn(ctx context.Context, inst *instance, r *request) (abi.Response, error) {
	frame := abi.AppendRequest(inst.frame[:0], r.method, r.uri, r.host, r.peer, r.header, r.body)
	inst.frame = frame
	if cap(frame) > 64<<10 {
		inst.frame = nil // a large body's frame is not kept per instance
	}
	inst.stack[0] = uint64(len(frame))
	if err := inst.inBuf.CallWithStack(ctx, inst.stack[:]); err != nil {
		return abi.Response{}, err
	}
	if !inst.mod.Memory().Write(uint32(inst.stack[0]), frame) {
		return abi.Response{}, errors.New("request does not fit the module's memory")
	}
	inst.stack[0] = uint64(len(frame))
	if err := inst.handle.CallWithStack(ctx, inst.stack[:]); err != nil {
		return abi.Response{}, err
	}
	ptr, n := uint32(inst.stack[0]>>32), uint32(inst.stack[0])
	view, ok := inst.mod.Memory().Read(ptr, n)
	if !ok {
		return abi.Response{}, errors.New("response outside the module's memory")
	}
	// Parsed in place while the instance is ours; only the body is copied.
	resp, err := abi.ParseResponse(view)
	if err != nil {
		return abi.Response{}, fmt.Errorf("the module answered a malformed response frame: %w", err)
	}
	resp.Body = bytes.Clone(resp.Body)
	return resp, nil
}

// ServeHTTP frames the request for the module and answers with its response,
// or streams from the origin when the module asks to forward.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(abi.PeerHeader)
	req := request{method: r.Method, uri: r.URL.RequestURI(), host: r.Host, header: r.Header}
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		req.peer = strings.Trim(ip, "[]")
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(io.LimitReader(r.Body, h.o.MaxBody+1))
		switch {
		case int64(len(body)) > h.o.MaxBody:
			payloadTooLarge(w)
			return
		case err != nil:
			badRequest(w)
			return
		}
		req.body = body
	}
	r.Header.Del("Content-Length")
	r.Header.Del("Transfer-Encoding")
	resp, err := h.call(r.Context(), &req)
	if err != nil {
		slog.Error("edge module failed", "err", err)
		internalError(w)
		return
	}
	if resp.Status == 0 {
		h.forward(w, r, req.body, resp.Header, resp.Forward)
		return
	}
	hdr := w.Header()
	for k, v := range resp.Header {
		hdr[k] = v
	}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// forward proxies r to the origin as the module asked: respHeader on the
// answer, reqHeader (the signed identity) on the request.
func (h *Host) forward(w http.ResponseWriter, r *http.Request, body []byte, respHeader, reqHeader http.Header) {
	for _, k := range identityHeaders {
		r.Header.Del(k)
	}
	// The module routed and signed the canonical path; the origin takes
	// only that spelling, so the host's copy of the client's request goes
	// out under it.
	if p := reqHeader.Get(abi.PathHeader); p != "" {
		r.URL.Path, r.URL.RawPath = p, ""
	}
	for k, v := range reqHeader {
		if k != abi.PathHeader {
			r.Header[k] = v
		}
	}
	hdr := w.Header()
	for k, v := range respHeader {
		hdr[k] = v
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 { // another origin may take it (edgehost.Balancer)
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	r.ContentLength = int64(len(body))
	h.proxy.ServeHTTP(w, r)
}

// hostFunctions implements the imports of edge/abi. They are Go module
// functions (values on the stack), not reflective WithFunc wrappers: each
// request calls at least one, and reflection cost more than the work.
func (h *Host) hostFunctions(ctx context.Context) error {
	read := func(m api.Module, ptr, n uint64) []byte {
		b, _ := m.Memory().Read(uint32(ptr), uint32(n))
		return b
	}
	i32 := api.ValueTypeI32
	fn := func(f func(ctx context.Context, m api.Module, s []uint64)) api.GoModuleFunc { return f }
	_, err := h.rt.NewHostModuleBuilder(abi.HostModule).
		// rate_allow(key, keyLen, limit, period, n, out) → 0 | 1
		NewFunctionBuilder().WithGoModuleFunction(fn(func(ctx context.Context, m api.Module, s []uint64) {
		k := string(read(m, s[0], s[1]))
		limit, period, n, out := int(uint32(s[2])), time.Duration(uint32(s[3]))*time.Second, int(uint32(s[4])), uint32(s[5])
		if h.blockingLimiter {
			h.pool.block() // a round trip to Redis
			defer h.pool.unblock()
		}
		res, err := h.o.Limiter.AllowN(ctx, k, ratelimit.Limit{Rate: limit, Burst: limit, Period: period}, n)
		if err != nil {
			s[0] = 1
			return
		}
		var b [32]byte
		if res.Allowed > 0 {
			binary.LittleEndian.PutUint64(b[0:], 1)
		}
		binary.LittleEndian.PutUint64(b[8:], uint64(res.Remaining))
		binary.LittleEndian.PutUint64(b[16:], uint64(res.RetryAfter.Milliseconds()))
		binary.LittleEndian.PutUint64(b[24:], uint64(res.ResetAfter.Milliseconds()))
		m.Memory().Write(out, b[:])
		s[0] = 0
	}), []api.ValueType{i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}).Export("rate_allow").
		// cache_get(key, keyLen) → length | 0xFFFFFFFF
		NewFunctionBuilder().WithGoModuleFunction(fn(func(_ context.Context, m api.Module, s []uint64) {
		inst := h.instanceOf(m)
		val, ok := h.cache.Get(string(read(m, s[0], s[1])), time.Now())
		if !ok {
			s[0] = 0xFFFFFFFF
			return
		}
		inst.lastCache = val
		s[0] = uint64(len(val))
	}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("cache_get").
		// cache_read(ptr, n)
		NewFunctionBuilder().WithGoModuleFunction(fn(func(_ context.Context, m api.Module, s []uint64) {
		inst := h.instanceOf(m)
		m.Memory().Write(uint32(s[0]), inst.lastCache[:min(int(uint32(s[1])), len(inst.lastCache))])
	}), []api.ValueType{i32, i32}, nil).Export("cache_read").
		// cache_put(key, keyLen, val, valLen, ttl)
		NewFunctionBuilder().WithGoModuleFunction(fn(func(_ context.Context, m api.Module, s []uint64) {
		k, v := string(read(m, s[0], s[1])), bytes.Clone(read(m, s[2], s[3]))
		h.cache.Put(k, v, time.Now().Add(time.Duration(uint32(s[4]))*time.Second))
	}), []api.ValueType{i32, i32, i32, i32, i32}, nil).Export("cache_put").
		// origin_fetch(req, n) → length | 0
		NewFunctionBuilder().WithGoModuleFunction(fn(func(ctx context.Context, m api.Module, s []uint64) {
		inst := h.instanceOf(m)
		h.pool.block() // the origin may scan for seconds
		out, err := h.originCall(ctx, read(m, s[0], s[1]))
		h.pool.unblock()
		if err != nil {
			s[0] = 0
			return
		}
		inst.lastOrigin = out
		s[0] = uint64(len(out))
	}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("origin_fetch").
		// origin_read(ptr, n)
		NewFunctionBuilder().WithGoModuleFunction(fn(func(_ context.Context, m api.Module, s []uint64) {
		inst := h.instanceOf(m)
		m.Memory().Write(uint32(s[0]), inst.lastOrigin[:min(int(uint32(s[1])), len(inst.lastOrigin))])
	}), []api.ValueType{i32, i32}, nil).Export("origin_read").
		Instantiate(ctx)
	return err
}

// originCall sends a raw request from the module to the origin and returns the raw response.
func (h *Host) originCall(ctx context.Context, raw []byte) ([]byte, error) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, err
	}
	u := *h.origin
	u.Path, u.RawQuery = req.URL.Path, req.URL.RawQuery
	req.URL, req.RequestURI = &u, ""
	// The module asks for Connection: close (it frames one request); the
	// host's connections to the origin are pooled all the same.
	req.Close = false
	req.Header.Del("Connection")
	resp, err := h.client.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.TransferEncoding = nil
	resp.Header.Del("Transfer-Encoding")
	var buf bytes.Buffer
	if err := resp.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
