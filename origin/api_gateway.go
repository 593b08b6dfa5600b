package origin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/origin/payment"
)

// newGateway builds the paid deep scan: payment through the configured
// facilitator, records in the state store, the deep scan from a scanner
// that also renders the homepage when the service has a browser.
func (s *Server) newGateway(sc *engine.Scanner) *payment.Gateway {
	deep := sc
	if s.cfg.PaidBrowser != nil {
		opts := sc.Options()
		opts.Renderer = s.cfg.PaidBrowser.Renderer()
		deep = engine.New(opts)
	}
	fac := payment.FacilitatorOrDefault(s.cfg.FacilitatorURL)
	return &payment.Gateway{
		Pay:         s.cfg.Payment,
		Facilitator: payment.NewFacilitator(fac, s.outboundPolicy(s.cfg.FacilitatorPrivate), 0),
		Records:     s.store.Idempotency(),
		// The deep scan's deadline plus its capture: a retry of the same
		// payment waits (409) until then rather than buying it twice.
		Lease:    deep.Options().DeepDeadline + 30*time.Second,
		Lifetime: s.base,
		// Before the settlement: the site's address is checked and a worker
		// taken, and nothing is sent to the site.
		Reserve: func(ctx context.Context, target string) (payment.Scan, func(), error) {
			if err := deep.Admits(ctx, target); err != nil {
				return nil, nil, toAPIError(err)
			}
			release, err := s.scans.pool.acquire(ctx)
			if err != nil {
				return nil, nil, toAPIError(err)
			}
			var once sync.Once
			free := func() { once.Do(release) }
			return func(ctx context.Context, progress func(engine.Event)) ([]byte, error) {
				return s.deepScan(ctx, deep, target, progress, free)
			}, free, nil
		},
	}
}

// PaymentMode is how the gateway takes payment.
type PaymentMode struct {
	Pay         x402.Config
	Facilitator string
}

// PaymentConfig is how the gateway takes payment, for the operator's log.
func (s *Server) PaymentConfig() PaymentMode {
	return PaymentMode{s.cfg.Payment, payment.FacilitatorOrDefault(s.cfg.FacilitatorURL)}
}

// deepScan runs one paid deep scan on its reserved worker (given back by
// release once the scan is done), then, when a browser is present,
// captures the homepage on the paid browser and links the screenshot. A
// render that failed is stated in the report's rendered block
// (docs/deep-scan.md says why).
func (s *Server) deepScan(ctx context.Context, deep *engine.Scanner, target string, progress func(engine.Event), release func()) ([]byte, error) {
	res, _, err := deep.DeepScan(ctx, target, progress)
	release()
	if err != nil {
		return nil, toAPIError(err)
	}
	if s.cfg.PaidBrowser != nil {
		if q := s.shots.captureForDeepScan(ctx, res.URL); q != "" {
			res.Deep.Screenshot = s.gatewayBase(ctx) + "/api/screenshot?" + q
		}
	}
	return json.Marshal(res)
}

type baseKey struct{}

func (s *Server) gatewayBase(ctx context.Context) string {
	b, _ := ctx.Value(baseKey{}).(string)
	return b
}

// scanGateway is POST /api/v1/scan-gateway: the paid deep scan over x402.
// The payment is verified and settled before anything is sent to the site;
// a caller that leaves before the settlement is not charged, and one that
// leaves after it collects its report with the receipt.
func (s *Server) scanGateway(ctx *fasthttp.RequestCtx) {
	target, ok := s.scanTarget(ctx, ", and the payment in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1)")
	if !ok {
		return
	}
	key, _, ok := idempotencyKey(ctx)
	if !ok {
		return
	}
	base := s.baseURL(ctx)
	caller := s.caller(ctx)
	// Not ctx: fasthttp recycles it while a stream may still run. rctx ends
	// when the caller hangs up (watchGone) until the payment is settled.
	rctx, cancel := context.WithCancel(context.WithValue(s.base, baseKey{}, base))
	defer cancel()
	stopWatching := watchGone(ctx, cancel)
	req := payment.Request{URL: target, Base: base,
		V2: string(ctx.Request.Header.Peek(x402.HeaderSignature)), V1: string(ctx.Request.Header.Peek(x402.HeaderPaymentV1)),
		Receipt: string(ctx.Request.Header.Peek(payment.HeaderReceipt)), IdempotencyKey: key}
	purchase, done := s.gateway.Begin(rctx, req)
	if done == nil {
		done = purchase.Settle(rctx)
	}
	if done == nil && wantsStream(ctx) {
		stopWatching()
		s.streamPurchase(ctx, target, base, purchase)
		return
	}
	a := done
	if a == nil {
		ran := purchase.Run(rctx, nil)
		a = &ran
	}
	gone := stopWatching()
	writeAnswer(ctx, *a)
	s.auditPurchase(caller, target, *a, !gone)
}

// auditPurchase records what a paid request really did: whether this
// request settled a payment (and its on-chain transaction), and whether
// its answer reached the caller.
func (s *Server) auditPurchase(c identity.Caller, target string, a payment.Answer, delivered bool) {
	if s.cfg.Audit == nil {
		return
	}
	var e struct {
		Code string `json:"code"`
	}
	if a.Status != 200 {
		_ = json.Unmarshal(a.Body, &e)
	}
	settled := "no"
	switch {
	case a.Settled:
		settled = "yes"
	case a.Header["Idempotent-Replayed"] == "true":
		settled = "earlier"
	}
	s.cfg.Audit.Info("agent action", "action", "scan.deep", "actor_type", string(c.Tier), "client_id", c.Key(), "target", target,
		"outcome", streamOutcome(a.Status, e.Code), "settled", settled, "transaction", a.Transaction, "delivered", delivered)
}

// watchGone calls gone when the caller hangs up while the handler works
// (before anything is written back, a closed connection is only seen by
// reading it). The connection is closed after this answer, so no next
// request is read from it while it is watched, and the watch ends with
// it. stop reports whether the caller had gone; it does not wait for the
// watch to end, since not every connection (fasthttp's in-memory pipes)
// lets a deadline cut a read short.
func watchGone(ctx *fasthttp.RequestCtx, gone func()) (stop func() (left bool)) {
	conn := ctx.Conn()
	ctx.SetConnectionClose()
	var stopped, left atomic.Bool
	go func() {
		var b [1]byte
		for {
			_, err := conn.Read(b[:])
			var ne net.Error
			switch {
			case stopped.Load():
				return
			case err == nil:
				continue // a client may send more: the connection closes after this answer anyway
			case errors.As(err, &ne) && ne.Timeout():
				conn.SetReadDeadline(time.Time{}) // the server's read timeout, not the caller
				continue
			}
			left.Store(true)
			gone()
			return
		}
	}()
	return func() bool {
		stopped.Store(true)
		conn.SetReadDeadline(time.Now()) // ends the read on a TCP connection now
		return left.Load()
	}
}

func writeAnswer(ctx *fasthttp.RequestCtx, a payment.Answer) {
	for k, v := range a.Header {
		ctx.Response.Header.Set(k, v)
	}
	ctx.SetStatusCode(a.Status)
	ctx.SetBody(a.Body)
}

// wantsStream: the gateway answers a settled purchase as Server-Sent
// Events when the caller accepts only text/event-stream or prefers it.
func wantsStream(ctx *fasthttp.RequestCtx) bool {
	acc := string(ctx.Request.Header.Peek("Accept"))
	return strings.Contains(acc, "text/event-stream") && !strings.Contains(acc, "application/json")
}

// streamPurchase runs a settled purchase as a stream: payment.settled
// first (the settlement, as the PAYMENT-RESPONSE header would carry it,
// and the receipt), then scan.started, every check, signal and deep probe
// as it finishes, and scan.completed with the report (or an error event).
// Refusals, the settlement's included, never get here: they are ordinary
// answers. The scan runs to its end when the client leaves; its buyer
// collects the report by sending the payment again with the receipt.
func (s *Server) streamPurchase(ctx *fasthttp.RequestCtx, target, base string, p *payment.Purchase) {
	caller := s.caller(ctx)
	left, leave := context.WithCancel(context.WithValue(s.base, baseKey{}, base))
	events := make(chan sseEvent, 64)
	send := func(e sseEvent) {
		select {
		case events <- e:
		case <-left.Done():
		}
	}
	var answer payment.Answer
	header, value := p.Settlement()
	receipt := p.Receipt()
	go func() {
		defer close(events)
		settled := map[string]string{"header": header, "value": value}
		if receipt != "" { // a buyer resuming its scan has its receipt already
			settled["receipt"] = receipt
		}
		b, _ := json.Marshal(settled)
		send(sseEvent{name: EventSettled, data: b})
		send(sseEvent{name: EventStarted, data: started(target, nil)})
		answer = p.Run(left, func(e engine.Event) {
			switch e.Kind {
			case engine.EventCheckFinished:
				b, _ := json.Marshal(e.Check)
				send(sseEvent{name: EventCheck, data: b})
			case engine.EventReadCheckFinished:
				b, _ := json.Marshal(e.Check)
				send(sseEvent{name: EventReadCheck, data: b})
			case engine.EventSignalFinished:
				b, _ := json.Marshal(e.Signal)
				send(sseEvent{name: EventSignal, data: b})
			case engine.EventProbeFinished:
				b, _ := json.Marshal(e.Probe)
				send(sseEvent{name: EventProbe, data: b})
			}
		})
		if answer.Status != 200 {
			var e struct {
				Code string `json:"code"`
			}
			_ = json.Unmarshal(answer.Body, &e)
			send(sseEvent{name: EventError, data: answer.Body, status: answer.Status, code: e.Code})
			return
		}
		send(sseEvent{name: EventCompleted, data: answer.Body, status: 200})
	}()
	ctx.SetUserValue(streamingKey, true)
	ctx.SetContentType("text/event-stream; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.Response.Header.Set(header, value)
	ctx.Response.Header.Set("Access-Control-Expose-Headers", header)
	if receipt != "" {
		ctx.Response.Header.Set(payment.HeaderReceipt, receipt)
		ctx.Response.Header.Set("Access-Control-Expose-Headers", header+", "+payment.HeaderReceipt)
	}
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		status, _ := s.pumpEvents(w, events, nil)
		leave() // Run goes on without the client; only sends stop
		for range events {
		}
		s.m.request(x402.GatewayPath, status)
		s.auditPurchase(caller, target, answer, status != statusClientGone)
	})
}
