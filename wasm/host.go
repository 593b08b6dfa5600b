package wasm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/agentready/agentready/edge/native"
	"io"
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

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/wasi"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Options configure a host.
type Options struct {
	OriginURL string            // where the module's origin calls go
	Limiter   ratelimit.Limiter // default: in-process GCRA
	Env       map[string]string // the module's environment (AGENTREADY_* settings and secrets)
	CacheDir  string            // compilation cache; default: the user cache directory
	Instances int               // warm instances; default: the number of CPUs (at least 2)
	MaxBody   int64             // request bodies larger than this are refused (1 MiB)
}

// Host serves HTTP through the module.
type Host struct {
	o        Options
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	pool     chan *instance
	origin   *url.URL
	client   *http.Client
	proxy    *httputil.ReverseProxy
	byName   sync.Map // module name → *instance
	seq      atomic.Int64
	cache    native.Cache
}

type instance struct {
	mod        api.Module
	inBuf      api.Function
	handle     api.Function
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
	h := &Host{o: o, origin: u, client: &http.Client{Timeout: 60 * time.Second}}
	h.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
	wasi_snapshot_preview1.MustInstantiate(ctx, h.rt)
	if err := h.hostFunctions(ctx); err != nil {
		return nil, err
	}
	if h.compiled, err = h.rt.CompileModule(ctx, module); err != nil {
		return nil, fmt.Errorf("compiling the edge module: %w", err)
	}
	h.proxy = native.OriginProxy(u)
	h.pool = make(chan *instance, o.Instances)
	for i := 0; i < o.Instances; i++ {
		inst, err := h.instantiate(ctx)
		if err != nil {
			return nil, err
		}
		h.pool <- inst
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

func (h *Host) instanceOf(m api.Module) *instance {
	v, _ := h.byName.Load(m.Name())
	return v.(*instance)
}

// Close releases the runtime.
func (h *Host) Close(ctx context.Context) error { return h.rt.Close(ctx) }

// call runs one raw request through a pooled instance.
func (h *Host) call(ctx context.Context, raw []byte) ([]byte, error) {
	var inst *instance
	select {
	case inst = <-h.pool:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out, err := h.callOn(ctx, inst, raw)
	if err != nil {
		// A trapped instance is not reused: replace it.
		h.byName.Delete(inst.mod.Name())
		inst.mod.Close(context.Background())
		if fresh, ferr := h.instantiate(context.Background()); ferr == nil {
			inst = fresh
		}
	}
	h.pool <- inst
	return out, err
}

func (h *Host) callOn(ctx context.Context, inst *instance, raw []byte) ([]byte, error) {
	res, err := inst.inBuf.Call(ctx, uint64(len(raw)))
	if err != nil {
		return nil, err
	}
	if !inst.mod.Memory().Write(uint32(res[0]), raw) {
		return nil, errors.New("request does not fit the module's memory")
	}
	res, err = inst.handle.Call(ctx, uint64(len(raw)))
	if err != nil {
		return nil, err
	}
	ptr, n := uint32(res[0]>>32), uint32(res[0])
	view, ok := inst.mod.Memory().Read(ptr, n)
	if !ok {
		return nil, errors.New("response outside the module's memory")
	}
	return bytes.Clone(view), nil
}

// ServeHTTP frames the request for the module and answers with its response,
// or streams from the origin when the module asks to forward.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(wasi.PeerHeader)
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		r.Header.Set(wasi.PeerHeader, strings.Trim(ip, "[]"))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.o.MaxBody+1))
	if err != nil || int64(len(body)) > h.o.MaxBody {
		http.Error(w, `{"error":"Request body too large","code":"payload_too_large","message":"The request body is over 1 MiB.","docs":""}`, http.StatusRequestEntityTooLarge)
		return
	}
	r.Header.Del("Content-Length")
	r.Header.Del("Transfer-Encoding")
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.Method, r.URL.RequestURI(), r.Host)
	r.Header.Write(&buf)
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body)
	out, err := h.call(r.Context(), buf.Bytes())
	if err != nil {
		http.Error(w, "edge module failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), r)
	if err != nil {
		http.Error(w, "edge module answered malformed HTTP", http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	if resp.Header.Get(wasi.ForwardHeader) == "1" {
		h.forward(w, r, body, resp.Header)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// forward proxies r to the origin as the module asked.
func (h *Host) forward(w http.ResponseWriter, r *http.Request, body []byte, asked http.Header) {
	for _, k := range []string{identity.HeaderCaller, identity.HeaderCallerTS, identity.HeaderCallerSig, identity.HeaderClientIP, wasi.PeerHeader} {
		r.Header.Del(k)
	}
	for k, v := range asked {
		switch {
		case k == wasi.ForwardHeader, k == "Content-Length":
		case strings.HasPrefix(k, wasi.ForwardReqPrefix):
			r.Header[strings.TrimPrefix(k, wasi.ForwardReqPrefix)] = v
		default:
			w.Header()[k] = v
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	h.proxy.ServeHTTP(w, r)
}

func (h *Host) hostFunctions(ctx context.Context) error {
	read := func(m api.Module, ptr, n uint32) []byte {
		b, _ := m.Memory().Read(ptr, n)
		return b
	}
	_, err := h.rt.NewHostModuleBuilder(wasi.HostModule).
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module, key, keyLen, limit, period, n, out uint32) uint32 {
		k := string(read(m, key, keyLen))
		res, err := h.o.Limiter.AllowN(ctx, k, ratelimit.Limit{Rate: int(limit), Burst: int(limit), Period: time.Duration(period) * time.Second}, int(n))
		if err != nil {
			return 1
		}
		var b [32]byte
		if res.Allowed > 0 {
			binary.LittleEndian.PutUint64(b[0:], 1)
		}
		binary.LittleEndian.PutUint64(b[8:], uint64(res.Remaining))
		binary.LittleEndian.PutUint64(b[16:], uint64(res.RetryAfter.Milliseconds()))
		binary.LittleEndian.PutUint64(b[24:], uint64(res.ResetAfter.Milliseconds()))
		m.Memory().Write(out, b[:])
		return 0
	}).Export("rate_allow").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, key, keyLen uint32) uint32 {
		inst := h.instanceOf(m)
		val, ok := h.cache.Get(string(read(m, key, keyLen)), time.Now())
		if !ok {
			return 0xFFFFFFFF
		}
		inst.lastCache = val
		return uint32(len(val))
	}).Export("cache_get").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) {
		inst := h.instanceOf(m)
		m.Memory().Write(ptr, inst.lastCache[:min(int(n), len(inst.lastCache))])
	}).Export("cache_read").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, key, keyLen, val, valLen, ttl uint32) {
		k, v := string(read(m, key, keyLen)), bytes.Clone(read(m, val, valLen))
		h.cache.Put(k, v, time.Now().Add(time.Duration(ttl)*time.Second))
	}).Export("cache_put").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module, req, n uint32) uint32 {
		inst := h.instanceOf(m)
		out, err := h.originCall(ctx, read(m, req, n))
		if err != nil {
			return 0
		}
		inst.lastOrigin = out
		return uint32(len(out))
	}).Export("origin_fetch").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) {
		inst := h.instanceOf(m)
		m.Memory().Write(ptr, inst.lastOrigin[:min(int(n), len(inst.lastOrigin))])
	}).Export("origin_read").
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
