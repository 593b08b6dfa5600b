package origin

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/origin/store"
	"github.com/valyala/fasthttp"
)

// Config configures the origin. Zero fields take the defaults in parentheses.
type Config struct {
	AllowPrivate   bool          // scan loopback/private targets (local testing only)
	CacheTTL       time.Duration // scan cache lifetime (10 min)
	IdempotencyTTL time.Duration // how long a POST response is replayable (24 h)
	Workers        int           // concurrent scans (64: scans wait on the network, not the CPU)
	Queue          int           // scans waiting for a worker before 503 (256)
	Heartbeat      time.Duration // SSE heartbeat interval (10 s)
	MaxBody        int           // request body limit in bytes (64 KiB)
	Version        string
}

func (c *Config) defaults() {
	if c.CacheTTL <= 0 {
		c.CacheTTL = 10 * time.Minute
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = 24 * time.Hour
	}
	if c.Workers <= 0 {
		c.Workers = 64
	}
	if c.Queue <= 0 {
		c.Queue = 256
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 10 * time.Second
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 64 << 10
	}
	if c.Version == "" {
		c.Version = "1.0.0"
	}
}

// Server is the origin HTTP server.
type Server struct {
	cfg     Config
	store   store.Backend
	scans   *scanner
	m       *metrics
	srv     *fasthttp.Server
	base    context.Context
	stopAll context.CancelFunc
	closing chan struct{}
	once    sync.Once
}

// New builds a server over a store backend and a scanner.
func New(cfg Config, st store.Backend, sc *engine.Scanner) *Server {
	cfg.defaults()
	base, cancel := context.WithCancel(context.Background())
	m := newMetrics()
	s := &Server{cfg: cfg, store: st, m: m, base: base, stopAll: cancel, closing: make(chan struct{})}
	s.scans = &scanner{cfg: cfg, engine: sc, cache: st.ScanCache(), pool: newPool(cfg.Workers, cfg.Queue, m), m: m, base: base}
	s.srv = &fasthttp.Server{
		Handler:            s.Handle,
		Name:               "agentready",
		MaxRequestBodySize: cfg.MaxBody,
		ReadTimeout:        30 * time.Second,
		IdleTimeout:        60 * time.Second,
		CloseOnShutdown:    true,
		Logger:             quietLogger{},
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			if errors.Is(err, fasthttp.ErrBodyTooLarge) {
				writeError(ctx, apiErr(413, CodePayloadTooLarge, "The request body is larger than the 64 KiB limit; send {\"url\": \"…\"} only."))
				return
			}
			writeError(ctx, apiErr(400, CodeInvalidJSON, "The request could not be read: "+err.Error()))
		},
	}
	return s
}

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// Shutdown stops accepting connections, lets in-flight requests (and their
// scans) finish until ctx expires, then cancels what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() { close(s.closing) })
	err := s.srv.ShutdownWithContext(ctx)
	s.stopAll()
	if err != nil {
		// Give canceled handlers a moment to write their last bytes.
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = s.srv.ShutdownWithContext(c)
	}
	return err
}

func (s *Server) draining() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// quietLogger drops fasthttp's per-connection noise (clients sending oversized
// bodies, resets); those requests already get an error response.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

type route struct {
	name    string
	methods map[string]func(*fasthttp.RequestCtx)
}

// Handle routes a request.
func (s *Server) Handle(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	r := s.route(path)
	h, ok := r.methods[string(ctx.Method())]
	if !ok && string(ctx.Method()) == "HEAD" {
		h, ok = r.methods["GET"]
	}
	switch {
	case r.methods == nil:
		writeError(ctx, apiErr(404, CodeNotFound, "No endpoint at "+path+"; see /openapi.json for the API."))
	case !ok:
		allow := make([]string, 0, len(r.methods))
		for m := range r.methods {
			allow = append(allow, m)
		}
		writeError(ctx, apiErr(405, CodeMethodNotAllowed, string(ctx.Method())+" is not supported on "+path+"; use "+strings.Join(sortStrings(allow), " or ")+"."))
		ctx.Response.Header.Set("Allow", strings.Join(sortStrings(allow), ", "))
	case r.name == "/api/scan" && s.draining():
		writeError(ctx, &APIError{Status: 503, Code: CodeShuttingDown, Message: "This server is shutting down and takes no new scans; retry (another instance will answer).", RetryAfter: 1})
	default:
		h(ctx)
	}
	s.m.request(r.name, ctx.Response.StatusCode())
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}

func (s *Server) route(path string) route {
	get := func(name string, h func(*fasthttp.RequestCtx)) route {
		return route{name, map[string]func(*fasthttp.RequestCtx){"GET": h}}
	}
	switch {
	case path == "/api/scan":
		return route{"/api/scan", map[string]func(*fasthttp.RequestCtx){"GET": s.getScan, "POST": s.postScan}}
	case path == "/healthz":
		return get("/healthz", s.healthz)
	case path == "/metrics":
		return get("/metrics", s.metrics)
	case path == "/openapi.json":
		return get("/openapi.json", s.openapi)
	}
	if name, methods, ok := planned(path); ok {
		r := route{name, map[string]func(*fasthttp.RequestCtx){}}
		for _, m := range methods {
			r.methods[m] = s.notBuilt(name)
		}
		return r
	}
	return route{name: "other"}
}

// planned lists the endpoints of the interface spec not built yet; they answer
// 501 with a clear envelope until they are (and /openapi.json marks them).
func planned(path string) (string, []string, bool) {
	switch path {
	case "/api/v1/scan-gateway", "/api/mcp", "/api/agent/token", "/api/monitors":
		return path, []string{"POST"}, true
	case "/api/badge", "/api/screenshot", "/.well-known/api-catalog", "/.well-known/oauth-authorization-server",
		"/.well-known/oauth-protected-resource", "/.well-known/mcp.json":
		return path, []string{"GET"}, true
	}
	if rest, ok := strings.CutPrefix(path, "/api/monitors/"); ok && rest != "" {
		if strings.HasSuffix(rest, "/test") {
			return "/api/monitors/{id}/test", []string{"POST"}, true
		}
		if !strings.Contains(rest, "/") {
			return "/api/monitors/{id}", []string{"GET", "DELETE"}, true
		}
	}
	return "", nil, false
}

func (s *Server) notBuilt(name string) func(*fasthttp.RequestCtx) {
	return func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, apiErr(501, CodeNotImplemented, name+" is part of the API but not built yet; /openapi.json marks it with x-status: planned."))
	}
}

func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	c, cancel := context.WithTimeout(s.base, time.Second)
	defer cancel()
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if err := s.store.Ping(c); err != nil {
		ctx.SetStatusCode(503)
		ctx.SetBodyString(`{"status":"degraded","store":"` + s.store.Name() + `","error":"state store does not answer"}`)
		return
	}
	ctx.SetBodyString(`{"status":"ok","store":"` + s.store.Name() + `","version":"` + s.cfg.Version + `"}`)
}

func (s *Server) metrics(ctx *fasthttp.RequestCtx) {
	var b bytes.Buffer
	s.m.write(&b)
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.SetBody(b.Bytes())
}
