package payment

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
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
	Records     store.Idempotency // one record per payment and one per paid report, in the shared state store
	// Reserve prepares the deep scan of url without sending the site a
	// request: its name must resolve to an address the scanner may visit,
	// and a scan worker is taken. It answers a scan to run (which gives
	// the worker back when it ends) and a release for a scan that will not
	// run, or a refusal (*apierr.Error) that leaves the payment unspent.
	Reserve func(ctx context.Context, url string) (scan Scan, release func(), err error)
	// Lifetime, when set, ends paid scans still running when it is done
	// (the server stopping); a paid scan does not end with its caller.
	Lifetime context.Context
	// Lease is how long a payment being served stays with its origin after
	// its last renewal (renewed while it is served) before a retry may take
	// it over.
	Lease time.Duration

	mu         sync.Mutex
	feePayer   string
	feePayerAt time.Time
}

// Scan runs a reserved deep scan and returns its report as JSON; progress
// sees every event as it happens (the scan is paid for by then). A failure
// the caller can act on is an *apierr.Error.
type Scan func(ctx context.Context, progress func(engine.Event)) ([]byte, error)

// Answer is what a gateway request gets.
type Answer struct {
	Status int
	Header map[string]string
	Body   []byte
	// Settled is set when this request settled its payment (not on a
	// replay); Transaction is then the settlement's on-chain signature.
	Settled     bool
	Transaction string
}

// Request is one call of the gateway.
type Request struct {
	URL  string // validated, normalised target
	Base string // the public base URL (the resource paid for is Base + the gateway path)
	V2   string // PAYMENT-SIGNATURE
	V1   string // X-PAYMENT
	// Receipt (the Payment-Receipt header, or MCP _meta) and IdempotencyKey
	// (the Idempotency-Key header) prove that a replay comes from the
	// buyer: the transaction itself is public once settled.
	Receipt        string
	IdempotencyKey string
}

// HeaderReceipt carries the receipt (MCP: _meta["agentready/payment-receipt"]).
const HeaderReceipt = "Payment-Receipt"

const (
	recordScope = "x402-payment" // the payment: settled, for which site, who may collect
	reportScope = "x402-report"  // the report it bought, once it exists
)

// recordTTL is how long a served payment answers its retries.
const recordTTL = 7 * 24 * time.Hour

// Members of a settled payment's record (in its Header map).
const (
	recReceipt = "receipt-sha256"
	recKey     = "idempotency-key-sha256"
)

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

// Purchase is a payment on its way to a report: verified and held under
// its record until Settle settles it (or gives it back), then Run runs
// the scan it paid for. A purchase resumed by its buyer (settled earlier,
// its report never finished) skips the settlement.
type Purchase struct {
	g       *Gateway
	r       Request
	id      string
	version int
	forward json.RawMessage // what the facilitator verifies and settles
	require any             // the requirements sent with it
	cfg     x402.Config
	claim   *store.Claim // the payment's record, until settled
	report  *store.Claim // the report's record, once the scan is to run
	scan    Scan
	release func()
	// resumed: settled by an earlier request; header: the settlement
	// header (and, when this request settled, the receipt).
	resumed   bool
	header    map[string]string
	receipt   string
	settledTx string
}

// Serve answers one gateway request: Begin, Settle, Run.
func (g *Gateway) Serve(ctx context.Context, r Request) Answer {
	p, a := g.Begin(ctx, r)
	if a != nil {
		return *a
	}
	if a := p.Settle(ctx); a != nil {
		return *a
	}
	return p.Run(ctx, nil)
}

// Begin does everything that needs neither the site nor the settlement:
// requirements, the payment read strictly and compared with its terms, its
// record (a settled payment answers its buyer from it, and nobody else),
// the facilitator's verification. A non-nil Answer is the whole answer (a
// refusal or a replay); otherwise Settle comes next.
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
	p, sent, err := x402.DecodePayment(r.V2, r.V1)
	switch {
	case !sent:
		return nil, paymentRequired(cfg, r.Base, "", "A deep scan costs "+cfg.PriceUSDC()+" USDC, paid over x402: send the payment in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1) with this same request. The requirements are in the PAYMENT-REQUIRED header (v2) and in accepts (v1).")
	case err != nil:
		return nil, paymentRequired(cfg, r.Base, "invalid_payload", "The payment header could not be read ("+err.Error()+"); send a base64 JSON PaymentPayload as the x402 client libraries do.")
	}
	want := cfg.Requirement()
	resource := cfg.Required(r.Base, "").Resource
	if err := x402.Check(p, want, resource.URL); err != nil {
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
	// time cannot both serve it. It is keyed on the transaction, and the
	// facilitator is sent that very transaction (Forward), so no spelling
	// of a spent payment is a new one.
	id := x402.PaymentID(p, want.Network)
	purchase := &Purchase{g: g, r: r, id: id, version: p.X402Version, forward: p.Forward(want, resource), require: requirements, cfg: cfg}
	claim, existing, err := g.Records.Begin(ctx, recordScope, id, r.URL, g.Lease)
	if err != nil {
		return nil, stateSilent()
	}
	if claim == nil {
		return purchase.resume(ctx, existing)
	}
	purchase.claim = claim
	v, err := g.Facilitator.Verify(ctx, p.X402Version, purchase.forward, requirements)
	if err != nil {
		purchase.give(ctx, claim)
		return nil, unavailable(err)
	}
	if !v.IsValid {
		purchase.give(ctx, claim)
		reason := reasonOf(v.InvalidReason, "invalid_payload")
		return nil, paymentRequired(cfg, r.Base, reason, "The facilitator refused the payment ("+reason+"); nothing was charged. Fix the payment and send it again.")
	}
	return purchase, Answer{}
}

func stateSilent() Answer {
	return refused(&apierr.Error{Status: 503, Code: apierr.StateUnavailable, RetryAfter: 1,
		Message: "The state store does not answer, so a payment cannot be checked against replays; nothing was charged. Retry in a moment."})
}

// inFlight is the answer to a payment another request is serving.
func inFlight(existing *store.IdemRecord) Answer {
	// The lease covers the longest scan; most end sooner, so a retry in a
	// few seconds is better advice than the lease's end.
	wait := 5
	if !existing.Expires.IsZero() {
		wait = min(wait, max(1, int(math.Ceil(time.Until(existing.Expires).Seconds()))))
	}
	return refused(&apierr.Error{Status: 409, Code: apierr.IdempotencyInFlight, RetryAfter: wait,
		Message: "This payment is being served right now (another request carried it); retry after Retry-After seconds, with its receipt or Idempotency-Key, to receive the report."})
}

// resume answers a payment that has a record already: in flight, spent on
// another site, or settled for this one. A settled payment's report goes
// only to its buyer, who proves it with the receipt or the Idempotency-Key
// of the request that paid: the transaction itself is public on chain.
func (p *Purchase) resume(ctx context.Context, existing *store.IdemRecord) (*Purchase, Answer) {
	g, r, cfg := p.g, p.r, p.cfg
	switch {
	case existing.Fingerprint != r.URL:
		return nil, paymentRequired(cfg, r.Base, "payment_already_used", "This payment already bought a deep scan of another site; each payment buys one scan. Make a new payment.")
	case existing.State == store.IdemInFlight:
		return nil, inFlight(existing)
	case !p.owns(existing):
		return nil, paymentRequired(cfg, r.Base, "payment_already_used", "This payment has been settled already. Its report is sent again only to its buyer: send the "+HeaderReceipt+" header of the settled answer (or the Idempotency-Key of the request that paid) with it. Otherwise make a new payment.")
	}
	claim, report, err := g.Records.Begin(ctx, reportScope, p.id, r.URL, g.Lease)
	if err != nil {
		return nil, stateSilent()
	}
	if claim == nil {
		if report.State == store.IdemInFlight {
			return nil, inFlight(report)
		}
		a := Answer{Status: report.Status, Header: map[string]string{"Idempotent-Replayed": "true"}, Body: report.Body}
		for k, v := range report.Header {
			a.Header[k] = v
		}
		settlementFor(a.Header, p.version)
		return nil, a
	}
	// Settled, but its report never finished (the server stopped during
	// the scan): the buyer gets the scan now, with no second settlement.
	p.report, p.resumed = claim, true
	p.header = map[string]string{}
	for k, v := range existing.Header {
		if k != recReceipt && k != recKey {
			p.header[k] = v
		}
	}
	settlementFor(p.header, p.version)
	return p, Answer{}
}

// owns reports whether the request proves it is the buyer of a settled
// payment: its receipt, or the Idempotency-Key the paying request sent.
func (p *Purchase) owns(rec *store.IdemRecord) bool {
	match := func(secret, want string) bool {
		return secret != "" && want != "" && subtle.ConstantTimeCompare([]byte(hashOf(secret)), []byte(want)) == 1
	}
	return match(p.r.Receipt, rec.Header[recReceipt]) || match(buyerKey(p.r.IdempotencyKey), rec.Header[recKey])
}

// minBuyerKey is the shortest Idempotency-Key that proves a buyer: a
// shorter one could be guessed by whoever reads the transaction on chain.
const minBuyerKey = 16

// buyerKey is the idempotency key if it is long enough to prove a buyer.
func buyerKey(k string) string {
	if len(k) < minBuyerKey {
		return ""
	}
	return k
}

// hashOf is how a secret is kept in a record: its SHA-256, never itself.
func hashOf(secret string) string {
	if secret == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// newReceipt is a secret only the buyer learns: 128 random bits.
func newReceipt() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "rcpt_" + base64.RawURLEncoding.EncodeToString(b)
}

// renew keeps claim until stop is called.
func (p *Purchase) renew(ctx context.Context, claim *store.Claim) (stop func()) {
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
				err := p.g.Records.Renew(rctx, claim, p.g.Lease)
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

// give releases a record unsettled: the payment's (the same payment may be
// sent again), or a resumed report's (its buyer may ask again).
func (p *Purchase) give(ctx context.Context, c *store.Claim) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = p.g.Records.Release(bg, c)
}

// settleWithin bounds a settlement, which runs on when the caller has gone.
const settleWithin = 20 * time.Second

// Settle takes the money before any paid work: it reserves the scan (the
// site's address checked, a worker taken: nothing is sent to the site
// yet), then, if the caller is still there, settles the payment and
// records it as this buyer's with a new receipt. A non-nil Answer is a
// refusal, and nothing was charged. Once /settle is sent, it and its
// record no longer depend on ctx.
func (p *Purchase) Settle(ctx context.Context) *Answer {
	g, r, cfg := p.g, p.r, p.cfg
	held := p.claim
	if p.resumed {
		held = p.report
	}
	scan, release, err := g.Reserve(ctx, r.URL)
	if err == nil && ctx.Err() != nil {
		release()
		err = &apierr.Error{Status: 503, Code: apierr.ScanCanceled, RetryAfter: 1,
			Message: "The request was canceled before the payment was settled (the client went away or the server is stopping)."}
	}
	if err != nil {
		p.give(ctx, held)
		a := unsettled(err, !p.resumed)
		return &a
	}
	p.scan, p.release = scan, release
	if p.resumed {
		return nil // paid already
	}
	detached, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleWithin)
	defer cancel()
	s, err := g.Facilitator.Settle(detached, p.version, p.forward, p.require)
	if err != nil || !s.Success {
		release()
		p.give(ctx, p.claim)
		var a Answer
		if err != nil {
			a = unavailable(err)
		} else {
			reason := reasonOf(s.ErrorReason, "unexpected_settle_error")
			a = paymentRequired(cfg, r.Base, reason, "The facilitator could not settle the payment ("+reason+"); nothing was charged and the site was not scanned. Fix the payment and send it again.")
		}
		return &a
	}
	p.settledTx, p.receipt = s.Transaction, newReceipt()
	name, value := settlementHeader(s, p.version)
	p.header = map[string]string{name: value, HeaderReceipt: p.receipt, "Access-Control-Expose-Headers": name + ", " + HeaderReceipt}
	// Settled: from now on the payment is this buyer's, whatever happens to
	// the scan. A lost write here (the store down) would let a retry be
	// verified and settled again; the facilitator refuses a transaction
	// settled once, so the retry gets a 402, never a second charge.
	rec := store.IdemRecord{Fingerprint: r.URL, Status: http.StatusAccepted, Created: time.Now().UTC(),
		Header: map[string]string{name: value, recReceipt: hashOf(p.receipt)}}
	if k := hashOf(buyerKey(r.IdempotencyKey)); k != "" {
		rec.Header[recKey] = k
	}
	bg, cancelRecord := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelRecord()
	// The report's record is claimed before the payment's is written, so a
	// retry by the buyer waits for this scan (409) instead of running one.
	if claim, _, err := g.Records.Begin(bg, reportScope, p.id, r.URL, g.Lease); err == nil && claim != nil {
		p.report = claim
	}
	_ = g.Records.Complete(bg, p.claim, rec, recordTTL)
	return nil
}

// unsettled is a refusal before the settlement (fresh), or of a resumed
// scan that could not start; neither charges anything.
func unsettled(err error, fresh bool) Answer {
	note := " The payment was not settled; nothing was charged."
	if !fresh {
		note = " The payment stays settled for this site: send it again later with its receipt for the report, with no second charge."
	}
	if ref, ok := apierr.As(err); ok {
		e := *ref
		e.Message += note
		return refused(&e)
	}
	return refused(&apierr.Error{Status: 500, Code: apierr.Internal, Message: "The deep scan could not start (a bug)." + note})
}

// Receipt is the secret a new settlement returned (empty on a resumed
// purchase).
func (p *Purchase) Receipt() string { return p.receipt }

// Settlement is the settlement's header name and value for this request's
// protocol version.
func (p *Purchase) Settlement() (name, value string) {
	for _, h := range []string{x402.HeaderResponse, x402.HeaderResponseV1} {
		if v, ok := p.header[h]; ok {
			return h, v
		}
	}
	return "", ""
}

// Run runs the scan a settled purchase paid for and records its answer,
// so that the buyer can collect it again. It does not end when ctx's
// caller leaves (the scan is paid for; its buyer collects it with the
// receipt), only when the gateway's Lifetime ends or the scan's own
// deadline passes. progress, when set, sees every event as it happens.
func (p *Purchase) Run(ctx context.Context, progress func(engine.Event)) Answer {
	g, r := p.g, p.r
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if g.Lifetime != nil {
		stop := context.AfterFunc(g.Lifetime, cancel)
		defer stop()
	}
	if p.report == nil {
		claim, existing, err := g.Records.Begin(runCtx, reportScope, p.id, r.URL, g.Lease)
		if err != nil || claim == nil {
			p.release()
			a := refused(&apierr.Error{Status: 503, Code: apierr.StateUnavailable, RetryAfter: 1,
				Message: "The state store does not answer, so the scan cannot start. The payment stays settled for this site: send it again with its receipt (" + HeaderReceipt + ") or Idempotency-Key to run the scan, with no second charge."})
			if err == nil && existing.State == store.IdemInFlight {
				a = inFlight(existing) // the buyer asked twice at once
			}
			return p.finish(a)
		}
		p.report = claim
	}
	stopRenewing := p.renew(runCtx, p.report)
	report, err := p.scan(runCtx, func(e engine.Event) {
		if progress != nil {
			progress(e)
		}
	})
	stopRenewing()
	var a Answer
	switch ref, known := apierr.As(err); {
	case err == nil:
		a = Answer{Status: 200, Body: report, Header: map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}}
	case known && ref.Code == apierr.SiteUnreachable:
		// Its address was public, yet the site answered nothing useful: the
		// payment bought this answer, which is kept like a report.
		e := *ref
		e.Message += " The payment was settled (the site's address was public, so the scan began): this answer is what it bought."
		a = refused(&e)
	default:
		// Canceled (the server stopping) or a bug: the buyer keeps the
		// settled payment and runs the scan later with its receipt.
		p.give(runCtx, p.report)
		e := apierr.Error{Status: 503, Code: apierr.ScanCanceled, RetryAfter: 5,
			Message: "The deep scan could not finish (the server is stopping). The payment stays settled for this site: send it again with its receipt (" + HeaderReceipt + ") or Idempotency-Key to run the scan, with no second charge."}
		if known && ref.Code != apierr.ScanCanceled {
			e.Status, e.Code, e.RetryAfter = 500, apierr.Internal, 0
			e.Message = "The deep scan failed unexpectedly (a bug). The payment stays settled for this site: send it again with its receipt (" + HeaderReceipt + ") or Idempotency-Key to run the scan, with no second charge."
		}
		return p.finish(refused(&e))
	}
	for k, v := range p.header {
		if k != HeaderReceipt {
			a.Header[k] = v
		}
	}
	rec := store.IdemRecord{Fingerprint: r.URL, Status: a.Status, Body: a.Body, Header: maps.Clone(a.Header), Created: time.Now().UTC()}
	bg, cancelRecord := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelRecord()
	_ = g.Records.Complete(bg, p.report, rec, recordTTL)
	return p.finish(a)
}

// finish adds what this request alone knows: the settlement, the receipt
// when it settled the payment, and that it did.
func (p *Purchase) finish(a Answer) Answer {
	if a.Header == nil {
		a.Header = map[string]string{}
	}
	for k, v := range p.header {
		a.Header[k] = v
	}
	if p.receipt != "" {
		a.Settled, a.Transaction = true, p.settledTx
	}
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
