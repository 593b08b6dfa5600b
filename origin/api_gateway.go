package origin

import (
	"context"
	"encoding/json"
	"mime"
	"net/url"
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
	if s.cfg.Browser != nil {
		opts := sc.Options()
		opts.Renderer = s.cfg.Browser.Renderer()
		deep = engine.New(opts)
	}
	fac := s.cfg.FacilitatorURL
	if fac == "" {
		fac = payment.DefaultFacilitator
	}
	return &payment.Gateway{
		Pay:         s.cfg.Payment,
		Facilitator: payment.NewFacilitator(fac, s.cfg.AllowPrivate || s.cfg.FacilitatorPrivate, 0),
		Records:     s.store.Idempotency(),
		// The deep scan's deadline plus verifying and settling: a retry of the
		// same payment waits (409) until then rather than buying it twice.
		Lease: deep.Options().DeepDeadline + 30*time.Second,
		Scan: func(ctx context.Context, target string) ([]byte, error) {
			return s.deepScan(ctx, deep, target)
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
	f := s.cfg.FacilitatorURL
	if f == "" {
		f = payment.DefaultFacilitator
	}
	return PaymentMode{s.cfg.Payment, f}
}

// deepScan runs one deep scan with a scan worker, then, when a browser is
// present, captures the homepage and links the screenshot.
func (s *Server) deepScan(ctx context.Context, deep *engine.Scanner, target string) ([]byte, error) {
	release, err := s.scans.pool.acquire(ctx)
	if err != nil {
		return nil, refusalOf(err)
	}
	res, _, err := deep.DeepScan(ctx, target, nil)
	release()
	if err != nil {
		return nil, refusalOf(err)
	}
	if s.cfg.Browser != nil {
		s.shots.capture(res.URL)
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

// refusalOf turns a scan failure into the gateway's refusal (the payment is
// then not settled).
func refusalOf(err error) *payment.Refusal {
	a := toAPIError(err)
	return &payment.Refusal{Status: a.Status, Code: a.Code, Message: a.Message, RetryAfter: a.RetryAfter}
}

// scanGateway is POST /api/v1/scan-gateway: the paid deep scan over x402.
func (s *Server) scanGateway(ctx *fasthttp.RequestCtx) {
	if mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); mt != "application/json" {
		writeError(ctx, apiErr(415, CodeUnsupportedMedia, "Send the body as JSON with Content-Type: application/json: {\"url\": \"https://example.com\"}, and the payment in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1)."))
		return
	}
	var req scanRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeError(ctx, apiErr(400, CodeInvalidJSON, "The body is not valid JSON ("+jsonProblem(err)+"); send {\"url\": \"https://example.com\"}."))
		return
	}
	if req.URL == nil {
		writeError(ctx, apiErr(400, CodeMissingURL, "The body must carry url: {\"url\": \"https://example.com\"}."))
		return
	}
	target, aerr := s.scans.validateURL(*req.URL)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	base := s.baseURL(ctx)
	rctx, cancel := context.WithCancel(context.WithValue(s.base, baseKey{}, base))
	defer cancel()
	a := s.gateway.Serve(rctx, payment.Request{URL: target, Base: base,
		V2: string(ctx.Request.Header.Peek(x402.HeaderSignature)), V1: string(ctx.Request.Header.Peek(x402.HeaderPaymentV1))})
	for k, v := range a.Header {
		ctx.Response.Header.Set(k, v)
	}
	ctx.SetStatusCode(a.Status)
	ctx.SetBody(a.Body)
	s.audit(s.caller(ctx), "scan.deep", target, outcome(ctx))
}
