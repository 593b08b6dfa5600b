package origin

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
	"github.com/valyala/fasthttp"
)

// requestContext is the context a JSON scan runs under. fasthttp gives no
// signal when a client hangs up mid-request, so it ends only when the server
// stops draining; the scan is bounded by its own deadline and its result is
// cached for the next caller either way.
func (s *Server) requestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(s.base)
}

func wantsJSON(ctx *fasthttp.RequestCtx) (bool, *APIError) {
	switch f := string(ctx.QueryArgs().Peek("format")); f {
	case "json":
		return true, nil
	case "":
	default:
		return false, apiErr(400, CodeUnsupportedFormat, "format="+f+" is not supported; use format=json, or omit it for a Server-Sent Events stream.")
	}
	for _, part := range strings.Split(string(ctx.Request.Header.Peek("Accept")), ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		if mt == "application/json" {
			return true, nil
		}
	}
	return false, nil
}

func freshRequested(ctx *fasthttp.RequestCtx) bool {
	f := string(ctx.QueryArgs().Peek("fresh"))
	return f == "1" || f == "true"
}

func (s *Server) getScan(ctx *fasthttp.RequestCtx) {
	url, aerr := s.scans.validateURL(string(ctx.QueryArgs().Peek("url")))
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	asJSON, aerr := wantsJSON(ctx)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	defer func() { s.audit(s.caller(ctx), "scan", url, strconv.Itoa(ctx.Response.StatusCode())) }()
	if !asJSON {
		s.streamScan(ctx, url, freshRequested(ctx))
		return
	}
	rctx, cancel := s.requestContext()
	defer cancel()
	res, err := s.scans.scan(rctx, url, freshRequested(ctx))
	if err != nil {
		writeError(ctx, toAPIError(err))
		return
	}
	writeScanned(ctx, res)
	ctx.SetBody(res.raw)
}

func writeScanned(ctx *fasthttp.RequestCtx, res *scanned) {
	ctx.SetContentType("application/json")
	h := &ctx.Response.Header
	if res.cached {
		h.Set("X-Cache", "HIT")
		h.Set("Age", strconv.Itoa(int(time.Since(res.scannedAt).Seconds())))
	} else {
		h.Set("X-Cache", "MISS")
	}
	h.Set("X-Scanned-At", res.scannedAt.UTC().Format(time.RFC3339))
	h.Set("Cache-Control", "private, max-age=60")
}

// SSE event names (documented in docs/api.md and /openapi.json).
const (
	EventStarted   = "scan.started"
	EventCheck     = "check"
	EventCompleted = "scan.completed"
	EventError     = "error"
	EventHeartbeat = "heartbeat"
)

type sseEvent struct {
	name string
	data []byte
}

// StartedData is the data of scan.started.
type StartedData struct {
	URL       string         `json:"url"`
	Cached    bool           `json:"cached"`
	ScannedAt *time.Time     `json:"scannedAt,omitempty"`
	Checks    []CheckPreview `json:"checks"`
	Levels    []report.Level `json:"levels"`
}

// CheckPreview names a check before its result exists.
type CheckPreview struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Level    int    `json:"level"`
	Category string `json:"category"`
}

func started(url string, cached *scanned) []byte {
	d := StartedData{URL: url, Levels: report.Levels[:4]}
	if cached != nil {
		d.Cached, d.ScannedAt = true, &cached.scannedAt
	}
	for _, c := range checks.Web() {
		d.Checks = append(d.Checks, CheckPreview{ID: c.ID, Name: c.Name, Level: c.Level, Category: c.Category})
	}
	b, _ := json.Marshal(d)
	return b
}

// streamScan answers with Server-Sent Events: scan.started, one check event
// per finished check, heartbeats, then scan.completed (or error). A cached
// result replays the same sequence. A client that goes away cancels the scan.
func (s *Server) streamScan(ctx *fasthttp.RequestCtx, url string, fresh bool) {
	var hit *scanned
	var release func()
	if !fresh {
		if c, ok := s.scans.cached(ctx, url); ok {
			hit = c
			s.m.cacheHits.Add(1)
		}
	}
	if hit == nil {
		var err error
		if release, err = s.scans.pool.acquire(ctx); err != nil {
			writeError(ctx, toAPIError(err))
			return
		}
	}
	ctx.SetContentType("text/event-stream; charset=utf-8")
	h := &ctx.Response.Header
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if hit != nil {
		h.Set("X-Cache", "HIT")
	} else {
		h.Set("X-Cache", "MISS")
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if release != nil {
			defer release()
		}
		scanCtx, cancel := context.WithCancel(s.base)
		defer cancel()
		events := make(chan sseEvent, 64)
		send := func(e sseEvent) {
			select {
			case events <- e:
			case <-scanCtx.Done():
			}
		}
		go func() {
			defer close(events)
			if hit != nil {
				r, err := hit.result()
				if err != nil {
					send(sseEvent{EventError, toAPIError(err).envelope()})
					return
				}
				send(sseEvent{EventStarted, started(url, hit)})
				for _, c := range r.Checks {
					b, _ := json.Marshal(c)
					send(sseEvent{EventCheck, b})
				}
				send(sseEvent{EventCompleted, hit.raw})
				return
			}
			res, err := s.scans.execute(scanCtx, url, func(e engine.Event) {
				switch e.Kind {
				case engine.EventStarted:
					send(sseEvent{EventStarted, started(url, nil)})
				case engine.EventCheckFinished:
					b, _ := json.Marshal(e.Check)
					send(sseEvent{EventCheck, b})
				}
			})
			if err != nil {
				send(sseEvent{EventError, toAPIError(err).envelope()})
				return
			}
			send(sseEvent{EventCompleted, res.raw})
		}()
		startedAt := time.Now()
		fmt.Fprintf(w, "retry: 3000\n\n")
		if w.Flush() != nil {
			return
		}
		tick := time.NewTicker(s.cfg.Heartbeat)
		defer tick.Stop()
		id := 0
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				id++
				fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, e.name, e.data)
				if w.Flush() != nil {
					return // client gone: the deferred cancel stops the scan
				}
			case <-tick.C:
				fmt.Fprintf(w, "event: %s\ndata: {\"elapsedMs\":%d}\n\n", EventHeartbeat, time.Since(startedAt).Milliseconds())
				if w.Flush() != nil {
					return
				}
			}
		}
	})
}

// scanRequest is the POST /api/scan body.
type scanRequest struct {
	URL *string `json:"url"`
}

func validIdemKey(k string) bool {
	if len(k) == 0 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func (s *Server) postScan(ctx *fasthttp.RequestCtx) {
	if mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); mt != "application/json" {
		writeError(ctx, apiErr(415, CodeUnsupportedMedia, "Send the body as JSON with Content-Type: application/json, e.g. {\"url\": \"https://example.com\"}."))
		return
	}
	body := ctx.PostBody()
	var req scanRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(ctx, apiErr(400, CodeInvalidJSON, "The body is not valid JSON ("+err.Error()+"); send {\"url\": \"https://example.com\"}."))
		return
	}
	if req.URL == nil {
		writeError(ctx, apiErr(400, CodeMissingURL, "The body must carry url: {\"url\": \"https://example.com\"}."))
		return
	}
	url, aerr := s.scans.validateURL(*req.URL)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	key := string(ctx.Request.Header.Peek("Idempotency-Key"))
	if key == "" && len(ctx.Request.Header.Peek("Idempotency-Key")) == 0 {
		s.finishPost(ctx, url)
		return
	}
	if !validIdemKey(key) {
		writeError(ctx, apiErr(400, CodeInvalidIdemKey, "Idempotency-Key must be 1–255 visible ASCII characters (a UUID is ideal)."))
		return
	}
	sum := sha256.Sum256(body)
	fp := hex.EncodeToString(sum[:])
	scope := "ip:" + ctx.RemoteIP().String()
	idem := s.store.Idempotency()
	lease := s.scans.engine.Options().Deadline + time.Minute
	started, existing, err := idem.Begin(ctx, scope, key, fp, lease)
	if err != nil {
		writeError(ctx, apiErr(503, CodeInternal, "The idempotency store does not answer; retry shortly."))
		return
	}
	if !started {
		switch {
		case existing.Fingerprint != fp:
			writeError(ctx, apiErr(422, CodeIdemKeyReused, "This Idempotency-Key was used with a different request body; use a new key for a new request."))
		case existing.State == store.IdemInFlight:
			e := apiErr(409, CodeIdemInFlight, "A request with this Idempotency-Key is still being processed; retry after it finishes.")
			e.RetryAfter = 1
			writeError(ctx, e)
		default:
			for k, v := range existing.Header {
				ctx.Response.Header.Set(k, v)
			}
			ctx.SetStatusCode(existing.Status)
			ctx.Response.Header.Set("Idempotent-Replayed", "true")
			ctx.Response.Header.Set("Idempotency-Key", key)
			ctx.SetBody(existing.Body)
		}
		return
	}
	s.finishPost(ctx, url)
	status := ctx.Response.StatusCode()
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if status >= 500 {
		_ = idem.Release(bg, scope, key) // nothing worth replaying: let the client retry with the same key
		return
	}
	rec := store.IdemRecord{Fingerprint: fp, Status: status, Body: append([]byte(nil), ctx.Response.Body()...), Created: time.Now().UTC(),
		Header: map[string]string{"Content-Type": string(ctx.Response.Header.ContentType())}}
	for _, h := range []string{"X-Cache", "X-Scanned-At"} {
		if v := ctx.Response.Header.Peek(h); len(v) > 0 {
			rec.Header[h] = string(v)
		}
	}
	_ = idem.Complete(bg, scope, key, rec, s.cfg.IdempotencyTTL)
	ctx.Response.Header.Set("Idempotency-Key", key)
}

func (s *Server) finishPost(ctx *fasthttp.RequestCtx, url string) {
	defer func() { s.audit(s.caller(ctx), "scan.brief", url, strconv.Itoa(ctx.Response.StatusCode())) }()
	rctx, cancel := s.requestContext()
	defer cancel()
	res, err := s.scans.scan(rctx, url, false)
	if err != nil {
		writeError(ctx, toAPIError(err))
		return
	}
	r, err := res.result()
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, err.Error()))
		return
	}
	b, err := json.Marshal(r.Brief())
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, err.Error()))
		return
	}
	writeScanned(ctx, res)
	ctx.SetBody(b)
}
