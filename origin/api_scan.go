package origin

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/scanreq"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
)

// requestContext is the context a JSON scan runs under. fasthttp gives no
// signal when a client hangs up mid-request, so it ends only when the server
// stops draining; the scan is bounded by its own deadline and its result is
// cached for the next caller either way.
func (s *Server) requestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(s.base)
}

func wantsJSON(ctx *fasthttp.RequestCtx) (bool, *apierr.Error) {
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

// siteQuery is the site a GET names in ?url=, normalised as a scan's key;
// a missing or invalid one is answered here, and ok is false.
func (s *Server) siteQuery(ctx *fasthttp.RequestCtx) (url string, ok bool) {
	url, aerr := s.scans.validateURL(string(ctx.QueryArgs().Peek("url")))
	if aerr != nil {
		writeError(ctx, aerr)
		return "", false
	}
	return url, true
}

// profileQuery reads the optional profile=: the kind of site to judge the
// report as (scanreq.Profiles). Absent or empty, the report keeps the
// profile the site declared, else the detected one; an unknown one is
// answered 400 here (ok false), and the message never repeats it.
func profileQuery(ctx *fasthttp.RequestCtx) (p string, ok bool) {
	p = string(ctx.QueryArgs().Peek("profile"))
	if p == "" || scanreq.ValidProfile(p) {
		return p, true
	}
	writeError(ctx, apiErr(400, CodeInvalidProfile, scanreq.ProfileMessage))
	return "", false
}

// judgedAs is res's JSON judged as profile p, and that result: the cached
// bytes themselves and a nil result when p is "" (the scan judged it as
// declared or detected). The cache never keys on the profile: profile.As
// re-judges a copy of the result at answer time, from what it holds,
// without a new scan; checks[] and score stay as scanned.
func judgedAs(res *scanned, p string) ([]byte, *report.Result, error) {
	if p == "" {
		return res.raw, nil, nil
	}
	r, err := res.result()
	if err != nil {
		return nil, nil, err
	}
	jr, err := profile.As(r, p)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(jr)
	return b, jr, err
}

func (s *Server) getScan(ctx *fasthttp.RequestCtx) {
	url, ok := s.siteQuery(ctx)
	if !ok {
		return
	}
	as, ok := profileQuery(ctx)
	if !ok {
		return
	}
	asJSON, aerr := wantsJSON(ctx)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	if !asJSON {
		s.streamScan(ctx, url, freshRequested(ctx), as)
		return
	}
	defer func() { s.audit(s.caller(ctx), "scan", url, outcome(ctx)) }()
	rctx, cancel := s.requestContext()
	defer cancel()
	res, err := s.scans.scan(rctx, url, freshRequested(ctx), nil)
	if err != nil {
		writeError(ctx, toAPIError(err))
		return
	}
	body, _, err := judgedAs(res, as)
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, "The cached report could not be decoded; retry with fresh=1 to scan again."))
		return
	}
	writeScanned(ctx, res)
	ctx.SetBody(body)
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
	// EventReadCheck carries one check of the read suite (R.1…, not in the
	// 48-check score), after the last check and before the signals.
	EventReadCheck = "read_check"
	// EventSignal carries one identity or commerce signal (not scored),
	// after the read checks and before scan.completed.
	EventSignal = "signal"
	// The paid deep scan's stream adds these.
	EventProbe   = "probe"           // a deep probe finished
	EventSettled = "payment.settled" // the settlement, before scan.completed
)

type sseEvent struct {
	name   string
	data   []byte
	status int           // the final event's outcome: 200, or the error's status
	code   string        // and its error code
	err    *apierr.Error // an error event's error, answered as JSON if nothing was streamed yet
	cached bool          // the stream replays a cached result
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

// streamingKey marks a request answered by a stream: the stream records its
// metrics and audit line itself when it ends, with the scan's real outcome
// (the status line said 200 before the scan ran).
const streamingKey = "agentready.streaming"

// Outcomes of a stream that did not complete.
const statusClientGone = 499 // nginx's "client closed request": the caller left mid-stream

// streamScan answers with Server-Sent Events: scan.started, one check event
// per finished check, one read_check event per read check, one signal event
// per signal, heartbeats, then scan.completed (or error), whose data is the
// full result judged as profile as (profile=; "" for the scan's own). A cached
// result replays the same sequence. The scan is the shared one (s.scans.scan):
// a stream that joins a running scan gets its events from the first. A client
// that goes away leaves the scan, which is canceled if nobody else waits.
func (s *Server) streamScan(ctx *fasthttp.RequestCtx, url string, fresh bool, as string) {
	caller := s.caller(ctx)
	// Not ctx: fasthttp recycles it for the connection's next request while
	// the scan may still watch it. The stream writer cancels this when the
	// client goes away.
	scanCtx, cancel := context.WithCancel(s.base)
	events := make(chan sseEvent, 64)
	send := func(e sseEvent) {
		select {
		case events <- e:
		case <-scanCtx.Done():
		}
	}
	go func() {
		defer close(events)
		res, err := s.scans.scan(scanCtx, url, fresh, func(e engine.Event) {
			switch e.Kind {
			case engine.EventStarted:
				send(sseEvent{name: EventStarted, data: started(url, nil)})
			case engine.EventCheckFinished:
				b, _ := json.Marshal(e.Check)
				send(sseEvent{name: EventCheck, data: b})
			case engine.EventReadCheckFinished:
				b, _ := json.Marshal(e.Check)
				send(sseEvent{name: EventReadCheck, data: b})
			case engine.EventSignalFinished:
				b, _ := json.Marshal(e.Signal)
				send(sseEvent{name: EventSignal, data: b})
			}
		})
		if err == nil && res.cached {
			err = replay(url, res, send)
		}
		var body []byte
		if err == nil {
			if body, _, err = judgedAs(res, as); err != nil {
				err = apiErr(500, CodeInternal, "The cached report could not be decoded; retry with fresh=1 to scan again.")
			}
		}
		if err != nil {
			e := toAPIError(err)
			send(sseEvent{name: EventError, data: e.Envelope().JSON(), status: e.HTTPStatus(), code: string(e.Code), err: e})
			return
		}
		send(sseEvent{name: EventCompleted, data: body, status: 200})
	}()
	// Errors before the first event (the store does not answer, no free
	// worker, a url the scanner refuses) are ordinary JSON answers: the
	// status line has not been sent yet.
	first, ok := <-events
	if !ok || first.err != nil {
		cancel()
		if first.err == nil {
			first.err = toAPIError(context.Canceled)
		}
		writeError(ctx, first.err)
		s.audit(caller, "scan", url, outcome(ctx))
		return
	}
	ctx.SetUserValue(streamingKey, true)
	ctx.SetContentType("text/event-stream; charset=utf-8")
	h := &ctx.Response.Header
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if first.cached {
		h.Set("X-Cache", "HIT")
	} else {
		h.Set("X-Cache", "MISS")
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		// The outcome is what the client was last told: scan.completed (200),
		// an error event (the status the JSON API answers for it), or nothing
		// because it went away.
		status, code := statusClientGone, "client_gone"
		defer func() {
			s.m.request("/api/scan", status)
			s.audit(caller, "scan", url, streamOutcome(status, code))
		}()
		status, code = s.pumpEvents(w, events, &first)
	})
}

// streamOutcome is a stream's outcome for the audit log: the status the
// client was last told, and its error code.
func streamOutcome(status int, code string) string {
	if code == "" {
		return strconv.Itoa(status)
	}
	return strconv.Itoa(status) + " " + code
}

// pumpEvents writes a stream's events (first, when set, then the channel's
// until it closes) with heartbeats between them. It returns the outcome the
// client was last told: the final event's status and code, or
// statusClientGone when the client left or nothing final was sent.
func (s *Server) pumpEvents(w *bufio.Writer, events <-chan sseEvent, first *sseEvent) (status int, code string) {
	status, code = statusClientGone, "client_gone"
	startedAt := time.Now()
	fmt.Fprintf(w, "retry: 3000\n\n")
	if w.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	id := 0
	pending := first
	for {
		e, ok := sseEvent{}, true
		if pending != nil {
			e, pending = *pending, nil
		} else {
			select {
			case e, ok = <-events:
			case <-tick.C:
				fmt.Fprintf(w, "event: %s\ndata: {\"elapsedMs\":%d}\n\n", EventHeartbeat, time.Since(startedAt).Milliseconds())
				if w.Flush() != nil {
					return
				}
				continue
			}
		}
		if !ok {
			return
		}
		id++
		fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, e.name, e.data)
		if w.Flush() != nil {
			return // client gone: the caller's deferred cancel leaves the scan
		}
		if e.status != 0 {
			status, code = e.status, e.code
		}
	}
}

// replay streams a cached result as the live sequence: scan.started (cached),
// every check, every read check, every signal; the caller sends
// scan.completed.
func replay(url string, res *scanned, send func(sseEvent)) error {
	r, err := res.result()
	if err != nil {
		return err
	}
	send(sseEvent{name: EventStarted, data: started(url, res), cached: true})
	for _, c := range r.Checks {
		b, _ := json.Marshal(c)
		send(sseEvent{name: EventCheck, data: b})
	}
	if r.Read != nil {
		for _, c := range r.Read.Checks {
			b, _ := json.Marshal(c)
			send(sseEvent{name: EventReadCheck, data: b})
		}
	}
	for _, sg := range r.Signals {
		b, _ := json.Marshal(sg)
		send(sseEvent{name: EventSignal, data: b})
	}
	return nil
}

// scanRequest is the POST /api/scan body.
type scanRequest struct {
	URL *string `json:"url"`
}

// scanTarget reads a POST body {"url": …} and validates the URL, answering
// the request itself when it cannot (415, 400). extra is said after the
// media-type advice (what else the endpoint expects).
func (s *Server) scanTarget(ctx *fasthttp.RequestCtx, extra string) (string, bool) {
	if mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); mt != "application/json" {
		writeError(ctx, apiErr(415, CodeUnsupportedMedia, "Send the body as JSON with Content-Type: application/json, e.g. {\"url\": \"https://example.com\"}"+extra+"."))
		return "", false
	}
	var req scanRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeError(ctx, apiErr(400, CodeInvalidJSON, "The body is not valid JSON ("+jsonProblem(err)+"); send {\"url\": \"https://example.com\"}."))
		return "", false
	}
	if req.URL == nil {
		writeError(ctx, apiErr(400, CodeMissingURL, "The body must carry url: {\"url\": \"https://example.com\"}."))
		return "", false
	}
	url, aerr := s.scans.validateURL(*req.URL)
	if aerr != nil {
		writeError(ctx, aerr)
		return "", false
	}
	return url, true
}

func (s *Server) postScan(ctx *fasthttp.RequestCtx) {
	url, ok := s.scanTarget(ctx, "")
	if !ok {
		return
	}
	body := ctx.PostBody()
	s.idempotent(ctx, body, func() { s.finishPost(ctx, url) })
}

// idempotencyKey is the request's Idempotency-Key: sent once and well
// formed, or answered 400 here (ok false). Present but empty is not absent:
// a client that meant to send a key and sent none must hear so, not get an
// unprotected retry.
func idempotencyKey(ctx *fasthttp.RequestCtx) (key string, sent, ok bool) {
	keys := ctx.Request.Header.PeekAll("Idempotency-Key")
	if len(keys) == 0 {
		return "", false, true
	}
	if len(keys) > 1 || !scanreq.ValidIdempotencyKey(string(keys[0])) {
		writeError(ctx, apiErr(400, CodeInvalidIdemKey, "Idempotency-Key must be sent once, as 1–255 visible ASCII characters (a UUID is ideal)."))
		return "", true, false
	}
	return string(keys[0]), true, true
}

// idempotent runs handle under the request's Idempotency-Key, if it has one:
// the first request with a key runs and its answer is kept for
// IdempotencyTTL; a retry with the same key and body gets that answer again
// (Idempotent-Replayed: true) instead of running twice. Keys are scoped to
// the caller, and the fingerprint covers the method and path too, so one
// key cannot replay another endpoint's answer. The key is never sent back:
// an answer carries nothing the caller sent (the caller knows its key, and
// a header echoed from the request is what response splitting and cache
// poisoning feed on).
func (s *Server) idempotent(ctx *fasthttp.RequestCtx, body []byte, handle func()) {
	key, sent, ok := idempotencyKey(ctx)
	switch {
	case !ok:
		return
	case !sent:
		handle()
		return
	}
	h := sha256.New()
	h.Write(ctx.Method())
	h.Write([]byte(" "))
	h.Write(ctx.Path())
	h.Write([]byte("\n"))
	h.Write(body)
	fp := hex.EncodeToString(h.Sum(nil))
	// Scoped to the caller, not the socket: behind the edge every request
	// comes from the edge's address.
	scope := s.caller(ctx).Key()
	idem := s.store.Idempotency()
	// Store calls never run under the fasthttp ctx: it is recycled for the
	// connection's next request, while a derived context may still watch it.
	claim, existing, err := idem.Begin(s.base, scope, key, fp, s.cfg.IdempotencyLease)
	if err != nil {
		writeError(ctx, stateUnavailable(err))
		return
	}
	if claim == nil {
		switch {
		case existing.Fingerprint != fp:
			writeError(ctx, apiErr(422, CodeIdemKeyReused, "This Idempotency-Key was used with a different request (body, method or path); use a new key for a new request."))
		case existing.State == store.IdemInFlight:
			e := apiErr(409, CodeIdemInFlight, "A request with this Idempotency-Key is still being processed; retry after Retry-After seconds (the stored response is replayed once it is done).")
			e.RetryAfter = leaseLeft(existing.Expires, time.Now())
			writeError(ctx, e)
		default:
			for k, v := range existing.Header {
				ctx.Response.Header.Set(k, v)
			}
			ctx.SetStatusCode(existing.Status)
			ctx.Response.Header.Set("Idempotent-Replayed", "true")
			ctx.SetBody(existing.Body)
		}
		return
	}
	stopRenewing := s.renewLease(idem, claim)
	handle()
	stopRenewing()
	status := ctx.Response.StatusCode()
	bg, cancel := context.WithTimeout(context.Background(), 2*time.Second) // even while draining: the response went out
	defer cancel()
	if status >= 400 {
		// Only an outcome (a scan's report, a created monitor) is kept for
		// replay. A refusal did nothing worth replaying: the client may fix
		// the request, or retry later, with the same key.
		_ = idem.Release(bg, claim)
		return
	}
	rec := store.IdemRecord{Fingerprint: fp, Status: status, Body: append([]byte(nil), ctx.Response.Body()...), Created: time.Now().UTC(),
		Header: map[string]string{"Content-Type": string(ctx.Response.Header.ContentType())}}
	for _, h := range []string{"X-Cache", "X-Scanned-At", "Location"} {
		if v := ctx.Response.Header.Peek(h); len(v) > 0 {
			rec.Header[h] = string(v)
		}
	}
	// A lost lease (the store was down longer than the lease, and another
	// request took the key) leaves the key to its new holder.
	_ = idem.Complete(bg, claim, rec, s.cfg.IdempotencyTTL)
}

// leaseLeft is the Retry-After for a key in flight: the seconds until its
// lease ends (rounded up, at least 1). By then the request is done and its
// response replays, or its holder is gone and the key is free.
func leaseLeft(expires, now time.Time) int {
	if expires.IsZero() {
		return 1
	}
	return max(1, int(math.Ceil(expires.Sub(now).Seconds())))
}

// renewLease keeps claim's lease alive until the returned stop is called.
// Leases are short and renewed while the request runs, so a key whose holder
// died (kill -9, a lost origin) frees itself within one lease, and the 409 a
// waiting caller gets says how long that is at most.
func (s *Server) renewLease(idem store.Idempotency, claim *store.Claim) (stop func()) {
	lease := s.cfg.IdempotencyLease
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				c, cancel := context.WithTimeout(s.base, lease/3)
				err := idem.Renew(c, claim, lease)
				cancel()
				if errors.Is(err, store.ErrLeaseLost) {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished // no renewal may land after Complete or Release
	}
}

// jsonProblem says what is wrong with a JSON body in a few fixed words:
// encoding/json's messages quote the offending input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "syntax error at byte " + strconv.FormatInt(syn.Offset, 10)
	case errors.As(err, &typ) && typ.Field == "url":
		return "url must be a string"
	case errors.As(err, &typ):
		return "the body must be a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends early"
	}
	return "it could not be decoded"
}

func (s *Server) finishPost(ctx *fasthttp.RequestCtx, url string) {
	defer func() { s.audit(s.caller(ctx), "scan.brief", url, outcome(ctx)) }()
	rctx, cancel := s.requestContext()
	defer cancel()
	res, err := s.scans.scan(rctx, url, false, nil)
	if err != nil {
		writeError(ctx, toAPIError(err))
		return
	}
	r, err := res.result()
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, "The cached report could not be decoded; retry with a GET and fresh=1 to scan again."))
		return
	}
	b, err := json.Marshal(r.Brief())
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, "The brief report could not be encoded; retry, or use GET /api/scan for the full report."))
		return
	}
	writeScanned(ctx, res)
	ctx.SetBody(b)
}
