package payment

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/origin/store"
)

// Gateway sells deep scans.
type Gateway struct {
	Pay         x402.Config
	Facilitator *Facilitator
	Records     store.Idempotency // one record per payment, in the shared state store
	// Scan runs the deep scan of url and returns its report as JSON. A
	// failure the caller can act on is an *apierr.Error; the payment is then
	// not settled.
	Scan func(ctx context.Context, url string, progress func(engine.Event)) ([]byte, error)
	// Lease is how long a payment being served stays with its origin after
	// its last renewal (renewed while it is served) before a retry may take
	// it over.
	Lease time.Duration

	mu         sync.Mutex
	feePayer   string
	feePayerAt time.Time
}

// Answer is what a gateway request gets.
type Answer struct {
	Status int
	Header map[string]string
	Body   []byte
	// Paid is the scan's paid progress (its deep probes), held back while
	// the scan ran; set only on an answer whose payment is settled, so a
	// stream sends it after the settlement.
	Paid []engine.Event
}

// Request is one call of the gateway.
type Request struct {
	URL  string // validated, normalised target
	Base string // the public base URL (the resource paid for is Base + the gateway path)
	V2   string // PAYMENT-SIGNATURE
	V1   string // X-PAYMENT
}

const recordScope = "x402-payment"

// recordTTL is how long a served payment answers its retries.
const recordTTL = 7 * 24 * time.Hour

// requirement is what the gateway asks for, with the facilitator's fee
// payer (cached for ten minutes: it changes when the facilitator rotates it).
func (g *Gateway) requirement(ctx context.Context) (x402.Config, error) {
	cfg := g.Pay
	if cfg.FeePayer != "" {
		return cfg, nil
	}
	g.mu.Lock()
	fp, fresh := g.feePayer, time.Since(g.feePayerAt) < 10*time.Minute
	g.mu.Unlock()
	if fp != "" && fresh {
		cfg.FeePayer = fp
		return cfg, nil
	}
	// Not under the lock: a slow facilitator must not queue every 402 behind
	// one lookup (concurrent lookups just ask twice).
	sup, err := g.Facilitator.Supported(ctx)
	if err != nil {
		return cfg, err
	}
	if fp = sup.FeePayer(cfg.NetworkID()); fp == "" {
		return cfg, fmt.Errorf("%w: it does not take exact payments on %s", ErrUnavailable, cfg.NetworkID())
	}
	g.mu.Lock()
	g.feePayer, g.feePayerAt = fp, time.Now()
	g.mu.Unlock()
	cfg.FeePayer = fp
	return cfg, nil
}

// refused answers a refusal: its status, Retry-After and envelope.
func refused(r *apierr.Error) Answer {
	h := map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}
	if r.RetryAfter > 0 {
		h["Retry-After"] = fmt.Sprint(r.RetryAfter)
	}
	return Answer{Status: r.HTTPStatus(), Header: h, Body: r.Envelope().JSON()}
}

// paymentRequired is the 402: the v2 requirements in PAYMENT-REQUIRED, the
// v1 body, and the envelope's fields in the same body. reason is the x402
// error (what was wrong with a payment sent), or empty for none sent.
func paymentRequired(cfg x402.Config, base, reason, msg string) Answer {
	x402Reason := reason
	if x402Reason == "" {
		x402Reason = "payment required for a deep scan"
	}
	req := cfg.Required(base, x402Reason)
	v1 := cfg.V1(base, x402Reason)
	code := apierr.PaymentRequired
	if reason != "" {
		code = apierr.PaymentInvalid
	}
	e := apierr.New(code, msg)
	// One body for both readers: the x402 v1 body (its error is the reason)
	// and the envelope's other members.
	body, _ := json.Marshal(map[string]any{"x402Version": v1.X402Version, "accepts": v1.Accepts, "reason": reason,
		"error": x402Reason, "code": e.Code, "message": e.Message, "docs": e.Docs})
	return Answer{Status: 402, Body: body, Header: map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store",
		x402.HeaderRequired: req.Header()}}
}

func unavailable(err error) Answer {
	return refused(&apierr.Error{Status: 503, Code: apierr.FacilitatorUnavailable, RetryAfter: 5,
		Message: "The payment facilitator did not answer (" + trimCause(err) + "); nothing was charged. Retry in a few seconds with the same payment."})
}

func trimCause(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// reasonOf keeps a facilitator's reason to what an x402 error code can be:
// lowercase words and underscores, at most 64 characters.
func reasonOf(r, fallback string) string {
	if r == "" || len(r) > 64 {
		return fallback
	}
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fallback
		}
	}
	return r
}

// Purchase is a verified payment for one deep scan, held under its record
// until Finish settles it (or gives it back).
type Purchase struct {
	g            *Gateway
	r            Request
	version      int
	raw          []byte
	requirements any
	claim        *store.Claim
	cfg          x402.Config
}

// Serve answers one gateway request.
func (g *Gateway) Serve(ctx context.Context, r Request) Answer {
	p, a := g.Begin(ctx, r)
	if a != nil {
		return *a
	}
	return p.Finish(ctx, nil)
}

// Begin does everything before the scan: requirements, the payment's
// terms, its record (replays answer from it), the facilitator's
// verification. A non-nil Answer is the whole answer (a refusal or a
// replay); otherwise the purchase is verified and Finish completes it.
func (g *Gateway) Begin(ctx context.Context, r Request) (*Purchase, *Answer) {
	p, a := g.begin(ctx, r)
	if p == nil {
		return nil, &a
	}
	return p, nil
}

func (g *Gateway) begin(ctx context.Context, r Request) (*Purchase, Answer) {
	if g.Pay.PayTo == "" {
		return nil, refused(&apierr.Error{Status: 503, Code: apierr.PaymentsDisabled,
			Message: "This deployment takes no payments (no payee is configured), so there is no paid deep scan here; use the free scan at /api/scan."})
	}
	cfg, err := g.requirement(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	p, raw, sent, err := x402.DecodePayment(r.V2, r.V1)
	switch {
	case !sent:
		return nil, paymentRequired(cfg, r.Base, "", "A deep scan costs "+cfg.PriceUSDC()+" USDC, paid over x402: send the payment in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1) with this same request. The requirements are in the PAYMENT-REQUIRED header (v2) and in accepts (v1).")
	case err != nil:
		return nil, paymentRequired(cfg, r.Base, "invalid_payload", "The payment header could not be read ("+err.Error()+"); send a base64 JSON PaymentPayload as the x402 client libraries do.")
	}
	want := cfg.Requirement()
	resource := r.Base + x402.GatewayPath
	if err := x402.Check(p, want, resource); err != nil {
		var mm *x402.Mismatch
		errors.As(err, &mm)
		return nil, paymentRequired(cfg, r.Base, mm.Reason, "The payment does not match what a deep scan costs here: "+mm.Detail+". Pay the requirements in PAYMENT-REQUIRED.")
	}
	requirements := any(want)
	if p.X402Version == 1 {
		requirements = cfg.V1(r.Base, "").Accepts[0]
	}

	// One payment, one scan: the record is claimed before anything is asked
	// of the facilitator, so two origins given the same payment at the same
	// time cannot both serve it. It is keyed on what moves on chain, so the
	// same transaction in another envelope (v1 or v2, members added to its
	// payload, another spelling) is the same purchase.
	id := x402.PaymentID(p, want.Asset)
	claim, existing, err := g.Records.Begin(ctx, recordScope, id, r.URL, g.Lease)
	if err != nil {
		return nil, refused(&apierr.Error{Status: 503, Code: apierr.StateUnavailable, RetryAfter: 1,
			Message: "The state store does not answer, so a payment cannot be checked against replays; nothing was charged. Retry in a moment."})
	}
	if claim == nil {
		switch {
		case existing.Fingerprint != r.URL:
			return nil, paymentRequired(cfg, r.Base, "payment_already_used", "This payment already bought a deep scan of another site; each payment buys one scan. Make a new payment.")
		case existing.State == store.IdemInFlight:
			// The lease covers the longest scan; most end sooner, so a retry
			// in a few seconds is better advice than the lease's end.
			wait := 5
			if !existing.Expires.IsZero() {
				wait = min(wait, max(1, int(math.Ceil(time.Until(existing.Expires).Seconds()))))
			}
			return nil, refused(&apierr.Error{Status: 409, Code: apierr.IdempotencyInFlight, RetryAfter: wait,
				Message: "This payment is being served right now (another request carried it); retry after Retry-After seconds to receive the same report."})
		}
		a := Answer{Status: existing.Status, Header: map[string]string{"Idempotent-Replayed": "true"}, Body: existing.Body}
		for k, v := range existing.Header {
			a.Header[k] = v
		}
		settlementFor(a.Header, p.X402Version)
		return nil, a
	}
	purchase := &Purchase{g: g, r: r, version: p.X402Version, raw: raw, requirements: requirements, claim: claim, cfg: cfg}
	v, err := g.Facilitator.Verify(ctx, p.X402Version, raw, requirements)
	if err != nil {
		purchase.release(ctx)
		return nil, unavailable(err)
	}
	if !v.IsValid {
		purchase.release(ctx)
		reason := reasonOf(v.InvalidReason, "invalid_payload")
		return nil, paymentRequired(cfg, r.Base, reason, "The facilitator refused the payment ("+reason+"); nothing was charged. Fix the payment and send it again.")
	}
	return purchase, Answer{}
}

// renew keeps the purchase's record claimed until stop is called.
func (p *Purchase) renew(ctx context.Context) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(p.g.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.g.Lease/3)
				err := p.g.Records.Renew(rctx, p.claim, p.g.Lease)
				cancel()
				if errors.Is(err, store.ErrLeaseLost) {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished // no renewal lands after Complete or Release
	}
}

func (p *Purchase) release(ctx context.Context) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = p.g.Records.Release(bg, p.claim)
}

// settleWithin bounds a settlement, which runs on when the caller has gone.
const settleWithin = 20 * time.Second

// freeProgress is what a scan may show before it is paid for: that it
// started, and the checks and signals the free scan reports too. Anything
// else (the deep probes, and any kind of event added later) is paid.
func freeProgress(k engine.EventKind) bool {
	switch k {
	case engine.EventStarted, engine.EventCheckStarted, engine.EventCheckFinished, engine.EventSignalFinished:
		return true
	}
	return false
}

// Finish runs the deep scan, settles the payment when the scan produced a
// report, and records the answer so the same payment replays it.
//
// Nothing paid leaves before the settlement: progress, when set, sees only
// the scan's free events as they happen; the paid ones are held and come
// back in the settled Answer's Paid. A ctx canceled before the scan has
// finished (the caller left) cancels it and settles nothing, leaving the
// payment unspent; once the scan has finished, the settlement and its
// record no longer depend on ctx (a caller leaving then finds its report by
// sending the same payment again).
func (p *Purchase) Finish(ctx context.Context, progress func(engine.Event)) Answer {
	g, r, raw, requirements, cfg := p.g, p.r, p.raw, p.requirements, p.cfg
	release := func() { p.release(ctx) }
	// The record stays with this origin while it serves the payment, however
	// long the scan waits for a worker: a retry of the same payment waits for
	// this answer instead of buying a second scan.
	stopRenewing := p.renew(ctx)
	var mu sync.Mutex
	var paid []engine.Event
	report, err := g.Scan(ctx, r.URL, func(e engine.Event) {
		if freeProgress(e.Kind) {
			if progress != nil {
				progress(e)
			}
			return
		}
		mu.Lock()
		paid = append(paid, e)
		mu.Unlock()
	})
	if err == nil && ctx.Err() != nil {
		err = &apierr.Error{Status: 503, Code: apierr.ScanCanceled, RetryAfter: 1,
			Message: "The deep scan was canceled before it finished (the client went away or the server is stopping)."}
	}
	if err != nil {
		stopRenewing()
		release() // not settled: the same payment may be sent again
		if ref, ok := apierr.As(err); ok {
			unsettled := *ref
			unsettled.Message += " The payment was not settled; nothing was charged."
			return refused(&unsettled)
		}
		return refused(&apierr.Error{Status: 500, Code: apierr.Internal, Message: "The deep scan failed unexpectedly; the payment was not settled. Retry with the same payment."})
	}

	// The scan finished: settle and record whether or not the caller is
	// still there, within a bound of its own.
	detached, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleWithin)
	defer cancel()
	s, err := g.Facilitator.Settle(detached, p.version, raw, requirements)
	stopRenewing()
	if err != nil {
		release()
		return unavailable(err)
	}
	if !s.Success {
		release()
		reason := reasonOf(s.ErrorReason, "unexpected_settle_error")
		return paymentRequired(cfg, r.Base, reason, "The facilitator could not settle the payment ("+reason+"); nothing was charged and no report is returned. Fix the payment and send it again.")
	}
	header, value := settlementHeader(s, p.version)
	a := Answer{Status: 200, Body: report, Header: map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store",
		header: value, "Access-Control-Expose-Headers": header}}
	rec := store.IdemRecord{Fingerprint: r.URL, Status: 200, Body: report, Header: a.Header, Created: time.Now().UTC()}
	bg, cancelRecord := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelRecord()
	// Settled: the answer must be replayable from now on. A lost write here
	// (the store down) would let a retry of this payment be verified and
	// settled again; the facilitator refuses a transaction settled once, so
	// the retry gets a 402, never a second charge.
	_ = g.Records.Complete(bg, p.claim, rec, recordTTL)
	mu.Lock()
	a.Paid = paid
	mu.Unlock()
	return a
}

// settlementFor re-expresses a recorded answer's settlement header for the
// protocol version of the request replaying it: one payment sent first as
// v2 and again as v1 gets X-PAYMENT-RESPONSE with the v1 network name (and
// the other way round), the header its client reads.
func settlementFor(h map[string]string, version int) {
	from := x402.HeaderResponse // the header of the other version
	if version == 2 {
		from = x402.HeaderResponseV1
	}
	v, ok := h[from]
	if !ok {
		return
	}
	var s x402.Settlement
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return
	}
	delete(h, from)
	name, value := settlementHeader(s, version)
	h[name], h["Access-Control-Expose-Headers"] = value, name
}

// settlementHeader is the header that carries s to a client of the
// protocol version: PAYMENT-RESPONSE with the CAIP-2 network name (v2), or
// X-PAYMENT-RESPONSE with the v1 name (v1).
func settlementHeader(s x402.Settlement, version int) (name, value string) {
	if version == 1 {
		s.Network = x402.V1Name(s.Network)
		return x402.HeaderResponseV1, s.Header()
	}
	s.Network = x402.CAIP2(s.Network)
	return x402.HeaderResponse, s.Header()
}
