package origin

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

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
		// The deep scan's deadline plus verifying and settling: a retry of the
		// same payment waits (409) until then rather than buying it twice.
		Lease: deep.Options().DeepDeadline + 30*time.Second,
		Scan: func(ctx context.Context, target string, progress func(engine.Event)) ([]byte, error) {
			return s.deepScan(ctx, deep, target, progress)
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

// deepScan runs one deep scan with a scan worker, then, when a browser is
// present, captures the homepage on the paid browser and links the
// screenshot. A render that failed is stated in the report's rendered block
// and the scan is charged (docs/deep-scan.md says why).
func (s *Server) deepScan(ctx context.Context, deep *engine.Scanner, target string, progress func(engine.Event)) ([]byte, error) {
	// A failure is answered as the free scan answers it (toAPIError); the
	// payment is then not settled.
	release, err := s.scans.pool.acquire(ctx)
	if err != nil {
		return nil, toAPIError(err)
	}
	res, _, err := deep.DeepScan(ctx, target, progress)
	release()
	if err != nil {
		return nil, toAPIError(err)
	}
	if s.cfg.PaidBrowser != nil {
		s.shots.captureForDeepScan(ctx, res.URL)
		if _, err := s.store.Screenshots().Get(ctx, res.URL); err == nil {
			res.Deep.Screenshot = s.gatewayBase(ctx) + "/api/screenshot?url=" + url.QueryEscape(res.URL)
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
func (s *Server) scanGateway(ctx *fasthttp.RequestCtx) {
	target, ok := s.scanTarget(ctx, ", and the payment in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1)")
	if !ok {
		return
	}
	base := s.baseURL(ctx)
	stream := wantsStream(ctx)
	// Not ctx: fasthttp recycles it while a stream may still run.
	rctx, cancel := context.WithCancel(context.WithValue(s.base, baseKey{}, base))
	purchase, done := s.gateway.Begin(rctx, payment.Request{URL: target, Base: base,
		V2: string(ctx.Request.Header.Peek(x402.HeaderSignature)), V1: string(ctx.Request.Header.Peek(x402.HeaderPaymentV1))})
	if done == nil && stream {
		s.streamPurchase(ctx, target, purchase, rctx, cancel)
		return
	}
	defer cancel()
	a := done
	if a == nil {
		finished := purchase.Finish(rctx, nil)
		a = &finished
	}
	writeAnswer(ctx, *a)
	s.audit(s.caller(ctx), "scan.deep", target, outcome(ctx))
}

func writeAnswer(ctx *fasthttp.RequestCtx, a payment.Answer) {
	for k, v := range a.Header {
		ctx.Response.Header.Set(k, v)
	}
	ctx.SetStatusCode(a.Status)
	ctx.SetBody(a.Body)
}

// wantsStream: the gateway answers a verified purchase as Server-Sent
// Events when the caller accepts only text/event-stream or prefers it.
func wantsStream(ctx *fasthttp.RequestCtx) bool {
	acc := string(ctx.Request.Header.Peek("Accept"))
	return strings.Contains(acc, "text/event-stream") && !strings.Contains(acc, "application/json")
}

// streamPurchase runs a verified purchase as a stream: scan.started, every
// check and signal as it finishes (the free part), then, once the payment
// is settled, payment.settled (the settlement, as the PAYMENT-RESPONSE
// header would carry it), the deep probes and scan.completed with the
// report — or an error event, with nothing settled. Nothing paid is sent
// before the settlement: Finish holds the probes back until then. A client
// that leaves before the scan finished cancels it (nothing settled); after
// that, the settlement runs on and the same payment replays the report.
// Refusals before verification never get here: they are ordinary answers.
func (s *Server) streamPurchase(ctx *fasthttp.RequestCtx, target string, p *payment.Purchase, rctx context.Context, cancel context.CancelFunc) {
	caller := s.caller(ctx)
	events := make(chan sseEvent, 64)
	send := func(e sseEvent) {
		select {
		case events <- e:
		case <-rctx.Done():
		}
	}
	go func() {
		defer close(events)
		send(sseEvent{name: EventStarted, data: started(target, nil)})
		event := func(e engine.Event) {
			switch e.Kind {
			case engine.EventCheckFinished:
				b, _ := json.Marshal(e.Check)
				send(sseEvent{name: EventCheck, data: b})
			case engine.EventSignalFinished:
				b, _ := json.Marshal(e.Signal)
				send(sseEvent{name: EventSignal, data: b})
			case engine.EventProbeFinished:
				b, _ := json.Marshal(e.Probe)
				send(sseEvent{name: EventProbe, data: b})
			}
		}
		a := p.Finish(rctx, event)
		if a.Status != 200 {
			var e struct {
				Code string `json:"code"`
			}
			_ = json.Unmarshal(a.Body, &e) // the refusal's envelope: its code goes to the audit log
			send(sseEvent{name: EventError, data: a.Body, status: a.Status, code: e.Code})
			return
		}
		for _, h := range []string{x402.HeaderResponse, x402.HeaderResponseV1} {
			if v := a.Header[h]; v != "" {
				b, _ := json.Marshal(map[string]string{"header": h, "value": v})
				send(sseEvent{name: EventSettled, data: b})
			}
		}
		for _, e := range a.Paid {
			event(e)
		}
		send(sseEvent{name: EventCompleted, data: a.Body, status: 200})
	}()
	ctx.SetUserValue(streamingKey, true)
	ctx.SetContentType("text/event-stream; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		status, code := statusClientGone, "client_gone"
		defer func() {
			s.m.request(x402.GatewayPath, status)
			s.audit(caller, "scan.deep", target, streamOutcome(status, code))
		}()
		status, code = s.pumpEvents(w, events, nil)
	})
}
