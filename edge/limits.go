package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
)

const day = 24 * time.Hour

// ExposedHeaders lets browser callers read the rate-limit and payment headers.
const ExposedHeaders = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, PAYMENT-REQUIRED"

// rateHeaders are both header families: X-RateLimit-* (Reset = epoch seconds)
// and draft-ietf-httpapi-ratelimit-headers-06 RateLimit-* (Reset = seconds).
func rateHeaders(d Decision, now time.Time) http.Header {
	// Reset is when the next scan can be had: for a denied request its
	// RetryAfter; with nothing left (a request that cost nothing, such as
	// an MCP call whose tools charge for themselves), when the first unit
	// comes back, which the same words in a refusal quote; otherwise when
	// the allowance is whole again.
	reset := apierr.WaitSeconds(d.ResetAfter)
	switch {
	case !d.Allowed && d.RetryAfter > 0:
		reset = apierr.WaitSeconds(d.RetryAfter)
	case d.Remaining == 0 && d.Limit > 0:
		reset = apierr.WaitSeconds(d.ResetAfter - time.Duration(d.Limit-1)*(day/time.Duration(d.Limit)))
	}
	// Written with the names in canonical form, as Set would store them: in
	// the WebAssembly edge, canonicalising the seven mixed-case names and
	// growing the map took a fifth of a scan request's time there.
	limit, remaining := strconv.Itoa(d.Limit), strconv.Itoa(d.Remaining)
	return http.Header{
		"X-Ratelimit-Limit":             {limit},
		"X-Ratelimit-Remaining":         {remaining},
		"X-Ratelimit-Reset":             {strconv.FormatInt(now.Add(time.Duration(reset)*time.Second).Unix(), 10)},
		"Ratelimit-Limit":               {limit},
		"Ratelimit-Remaining":           {remaining},
		"Ratelimit-Reset":               {strconv.Itoa(reset)},
		"Ratelimit-Policy":              {limit + ";w=" + strconv.Itoa(int(day.Seconds()))},
		"Access-Control-Expose-Headers": {ExposedHeaders},
	}
}

// forward sends a request to the origin with the caller's signed identity.
// cost > 0 charges the caller's daily allowance first; cost 0 only reports it
// in the rate-limit headers (GCRA with no cost spends nothing); cost < 0 skips it.
//
// Only requests that can do work are charged: a scan request is checked
// first with the origin's own syntax rules, and one that fails them is
// answered here with the allowance shown, unspent. Charging after the origin
// answers instead would let parallel requests spend more than the allowance
// (each runs before it is counted), and refunding is not possible with
// redis_rate's GCRA (its script never stores a TAT at or before now, so the
// refund of the only outstanding unit is lost) nor in the wasip1 build (the
// host streams the origin's answer; the module never sees it).
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, cost int) {
	c, ok := h.caller(w, r)
	if !ok {
		return
	}
	body, refused := readBody(r, MaxBody)
	if refused != nil {
		refused.write(w)
		return
	}
	if cost > 0 && r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		cost = 0 // OPTIONS and wrong methods do not scan
	}
	// HEAD costs what GET costs: the origin answers it by doing the GET's
	// work (a scan), so it is one.
	if cost > 0 {
		if refused = checkScan(r, body); refused != nil {
			cost = 0
		}
	}
	if cost > 0 && c.Tier == identity.Anonymous && h.crossSite(r) {
		writeError(w, apierr.CrossSiteRequest, crossSiteMessage(h.base(r)))
		return
	}
	var respHeaders http.Header
	if cost >= 0 {
		limit := h.cfg.Allowances.For(c.Tier)
		d, err := h.p.Allow(r.Context(), "scan:"+c.Key(), limit, day, cost)
		switch {
		case err == nil:
			d.Limit = limit
			respHeaders = rateHeaders(d, h.p.Now())
		case refused == nil:
			w.Header().Set("Retry-After", "5")
			writeError(w, apierr.RateLimiterUnavailable, "The allowance store does not answer; retry in a few seconds.")
			return
		}
		if err == nil && !d.Allowed && cost > 0 {
			h.overAllowance(w, r, respHeaders, c)
			return
		}
	}
	if refused != nil {
		for k, v := range respHeaders {
			w.Header()[k] = v
		}
		refused.write(w)
		return
	}
	// Only the edge may state who is calling.
	for _, k := range identity.Headers {
		r.Header.Del(k)
	}
	reqHeaders := http.Header{}
	signed := identity.Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body}
	for k, v := range identity.Sign(h.cfg.IdentitySecret, c, h.p.ClientIP(r), signed, h.p.Now()) {
		reqHeaders.Set(k, v)
	}
	h.p.Forward(w, r, reqHeaders, respHeaders)
}

// signFetch signs a request the edge itself sends the origin (a badge's
// score, a page's report) for caller, seen at ip: over its method, path and
// query as they go out, without a body.
func (h *Handler) signFetch(req *http.Request, caller identity.Caller, ip string) {
	signed := identity.Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery}
	for k, v := range identity.Sign(h.cfg.IdentitySecret, caller, ip, signed, h.p.Now()) {
		req.Header.Set(k, v)
	}
}

// crossSite reports a request a browser sent on behalf of a page of another
// site: Sec-Fetch-Site says so (cross-site, or same-site: another host of
// the same registrable domain), or, from browsers that do not send it, an
// Origin other than this service's (an opaque "null" origin included).
// Such a request must not spend the visitor's allowance: an anonymous
// caller's allowance is its address's, shared with whoever browses from
// it, so one rule covers the API's GET and HEAD, and the report page's form.
func (h *Handler) crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	case "same-origin", "none":
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return true
	}
	own := h.ownHost
	if own == "" {
		own = r.Host
	}
	return !strings.EqualFold(u.Host, own)
}

func crossSiteMessage(base string) string {
	return "A page on another site asked for this scan, which would spend your free allowance: open " + base +
		"/ and scan there, or call the API from your own code (with a token from POST /api/agent/token or an API key when a browser page calls it)."
}

// overAllowance answers a scan over the caller's daily allowance. With a
// payee configured it is a 402 with x402 requirements pointing at the paid
// gateway: the v2 PAYMENT-REQUIRED header and a v1 body that also carries the
// error envelope's fields. Without one there is nothing to pay: a 429 that
// says when the allowance comes back, and no requirements with an empty payTo.
func (h *Handler) overAllowance(w http.ResponseWriter, r *http.Request, rate http.Header, c identity.Caller) {
	for k, v := range rate {
		w.Header()[k] = v
	}
	w.Header().Set("Retry-After", w.Header().Get("RateLimit-Reset"))
	w.Header().Set("Cache-Control", "no-store")
	limit := h.cfg.Allowances.For(c.Tier)
	if h.cfg.Payment.PayTo == "" {
		wait, _ := strconv.Atoi(w.Header().Get("RateLimit-Reset"))
		more := ""
		switch c.Tier {
		case identity.Anonymous:
			more = " A bearer token (POST /api/agent/token) or an API key has a higher allowance."
		case identity.Token:
			more = " An API key has a higher allowance."
		}
		writeError(w, apierr.AllowanceExhausted,
			fmt.Sprintf("The daily allowance of %d scans for %s callers is used up; retry after %s.%s", limit, c.Tier, apierr.RetryAt(h.p.Now(), wait), more))
		return
	}
	base := h.base(r)
	msg := fmt.Sprintf("The daily allowance of %d scans for %s callers is used up. Pay %s USDC per scan over x402 at %s/api/v1/scan-gateway, use a token (POST /api/agent/token) or an API key for a higher allowance, or retry after the reset.",
		limit, c.Tier, h.cfg.Payment.PriceUSDC(), base)
	req := h.cfg.Payment.Required(base, "daily allowance used up")
	w.Header().Set("PAYMENT-REQUIRED", req.Header())
	v1 := h.cfg.Payment.V1(base, msg)
	body := map[string]any{"x402Version": v1.X402Version, "error": v1.Error, "accepts": v1.Accepts,
		"code": apierr.PaymentRequired, "message": msg, "docs": DocsURL}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write(b)
}
