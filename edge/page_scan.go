package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentready/agentready/apierr"
)

// scanForPage answers POST /report?url=…, the scan button of a page read
// without JavaScript: it spends one scan of the caller's allowance, as
// GET /api/scan does, asks the origin for the JSON report, and redirects to
// the result page (303, so a reload does not scan again). Over the allowance
// it explains, in HTML, what remains, when it resets and what else there is.
func (h *Handler) scanForPage(w http.ResponseWriter, r *http.Request, target string) {
	base := h.base(r)
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	pageHeaders(hdr)
	// Another site's form must not spend a visitor's allowance (the rule of
	// every charged request: crossSite).
	if h.crossSite(r) {
		h.pageNote(w, base, target, http.StatusForbidden, "Scans can only be started from this service's own pages; open the report here and press Scan.")
		return
	}
	if e := CheckScanURL(target); e != nil {
		h.pageNote(w, base, target, http.StatusBadRequest, e.Message)
		return
	}
	c, ok := h.caller(w, r)
	if !ok {
		return
	}
	limit := h.cfg.Allowances.For(c.Tier)
	d, err := h.p.Allow(r.Context(), "scan:"+c.Key(), limit, day, 1)
	if err != nil {
		hdr.Set("Retry-After", "5")
		h.pageNote(w, base, target, http.StatusServiceUnavailable, "The allowance store does not answer; retry in a few seconds.")
		return
	}
	d.Limit = limit
	for k, v := range rateHeaders(d, h.p.Now()) {
		hdr[k] = v
	}
	if !d.Allowed {
		status := http.StatusTooManyRequests
		paid := ""
		if h.cfg.Payment.PayTo != "" {
			status = http.StatusPaymentRequired
			paid = " A paid deep scan (" + h.cfg.Payment.PriceUSDC() + " USDC over x402 at /api/v1/scan-gateway) goes further than the free scan."
		}
		reset, _ := strconv.Atoi(hdr.Get("Ratelimit-Reset"))
		hdr.Set("Retry-After", strconv.Itoa(reset))
		// Said to a person: what they can do from the page (wait, or read
		// the report already there), not an API call to make.
		h.pageNote(w, base, target, status, "The free scans for today are used up (0 of "+strconv.Itoa(limit)+" left). The next one is free at "+apierr.RetryAt(h.p.Now(), reset)+
			"; until then, this site's last report, if it was scanned, stays at "+reportURL(base, target)+". Running agentready on your own machine (see /docs) has no daily limit."+paid)
		return
	}
	fresh := ""
	if r.URL.Query().Get("fresh") == "1" {
		fresh = "&fresh=1"
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/scan?format=json&url="+url.QueryEscape(target)+fresh, nil)
	h.signFetch(req, c, h.p.ClientIP(r))
	req.Header.Set("Accept", "application/json")
	resp, err := h.p.Fetch(r.Context(), req)
	if err != nil {
		h.pageNote(w, base, target, http.StatusBadGateway, "The scanner behind this page does not answer right now; retry in a minute.")
		return
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxReport))
	if resp.StatusCode != http.StatusOK {
		// The origin's envelope message is ours, written for the person reading it.
		var env struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &env) != nil || env.Message == "" {
			env.Message = "The scan did not finish (HTTP " + strconv.Itoa(resp.StatusCode) + "); retry in a minute."
		}
		h.pageNote(w, base, target, resp.StatusCode, env.Message)
		return
	}
	var rep pageReport
	if json.Unmarshal(raw, &rep) != nil || len(rep.Checks) == 0 {
		h.pageNote(w, base, target, http.StatusBadGateway, "The report could not be read; retry in a minute.")
		return
	}
	// The page the redirect lands on shows this scan, not a copy cached
	// before it; read back from the scan history, which adds the plan and
	// the site's history to what the scan answered.
	page := &rep
	if stored, status, _ := h.cachedReport(r, target, "", "", true); status == http.StatusOK && stored.Timestamp.Equal(rep.Timestamp) {
		page = stored
	} else {
		h.p.CachePut(reportKey(target, "", ""), raw, reportTTL)
	}
	h.p.CachePut(pageKey(false, base, target, "", "all", ""), reportHTML(base, target, page, "", "all"), reportTTL)
	h.p.CachePut(pageKey(true, base, target, "", "all", ""), reportMarkdown(base, target, page, ""), reportTTL)
	http.Redirect(w, r, reportURL("", target), http.StatusSeeOther)
}

func (h *Handler) pageNote(w http.ResponseWriter, base, target string, status int, note string) {
	w.WriteHeader(status)
	w.Write(reportHTML(base, target, nil, note, "all"))
}
