package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/badge"
	"github.com/agentready/agentready/edge/identity"
)

// badgeScore is what the edge caches per site.
type badgeScore struct {
	Score     int    `json:"score"`
	Level     int    `json:"level"`
	LevelName string `json:"levelName"`
	Unknown   string `json:"unknown,omitempty"` // why there is no score
}

const badgeTTL = 300 * time.Second

// badge serves GET /api/badge?url=…[&style=flat-square][&format=shields]. It
// never fails as an image: an unknown or unscannable site gets a grey badge.
func (h *Handler) badge(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	target := strings.TrimSpace(r.URL.Query().Get("url"))
	if target == "" {
		writeError(w, apierr.MissingURL, "Give the site as ?url=example.com.")
		return
	}
	if len(target) > 2048 {
		writeError(w, apierr.InvalidURL, "url is longer than 2048 characters.")
		return
	}
	style, format := r.URL.Query().Get("style"), r.URL.Query().Get("format")
	// The rendered answer is cached whole: a badge embedded in a popular README
	// costs one cache read, not a render and a hash each time.
	key := "badgeresp:" + style + "|" + format + "|" + strings.ToLower(target)
	cached, ok := h.p.CacheGet(key)
	if !ok {
		cached = h.renderBadge(r, target, style, format)
		h.p.CachePut(key, cached, 60*time.Second)
	}
	meta, body, _ := strings.Cut(string(cached), "\n\n")
	hdr := w.Header()
	for _, line := range strings.Split(meta, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			hdr.Set(k, v)
		}
	}
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if strings.Contains(r.Header.Get("If-None-Match"), hdr.Get("ETag")) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	io.WriteString(w, body)
}

// renderBadge produces the response headers that vary and the body, as
// "Header: value" lines, a blank line, then the body.
func (h *Handler) renderBadge(r *http.Request, target, style, format string) []byte {
	sc := h.badgeScore(r, target)
	b := badge.ForScore(sc.Score, sc.Level, sc.LevelName)
	maxAge := "300"
	if sc.Unknown != "" {
		b, maxAge = badge.ForUnknown(sc.Unknown), "60"
	}
	b.Square = style == "flat-square"
	var body []byte
	var ctype, csp string
	if format == "shields" {
		color := strings.TrimPrefix(b.Color, "#")
		body, _ = json.Marshal(map[string]any{"schemaVersion": 1, "label": b.Label, "message": b.Message, "color": color})
		ctype = "application/json"
	} else {
		body = b.SVG()
		ctype = "image/svg+xml; charset=utf-8"
		csp = "\nContent-Security-Policy: default-src 'none'; style-src 'unsafe-inline'"
	}
	head := "Content-Type: " + ctype + "\nCache-Control: public, max-age=" + maxAge + ", s-maxage=" + maxAge + ", stale-while-revalidate=86400\nETag: " + etag(body) + csp
	return append([]byte(head+"\n\n"), body...)
}

// badgeScore takes the score from the edge cache, else the site's latest
// stored outcome from the origin (GET /api/latest: its history, whoever
// scanned it, for free), and scans only a site that was never scanned. That
// scan is a scan like any other: it spends one of the caller's daily scans,
// so badges are not a way around the allowance (the report it makes is
// readable at /api/report like any scan's). Misses also count against a
// per-address badge allowance, which bounds what badges cost the origin.
func (h *Handler) badgeScore(r *http.Request, target string) badgeScore {
	key := "badge:" + strings.ToLower(target)
	if b, ok := h.p.CacheGet(key); ok {
		var sc badgeScore
		if json.Unmarshal(b, &sc) == nil {
			return sc
		}
	}
	ip := h.p.ClientIP(r)
	caller := identity.Caller{Tier: identity.Anonymous, Subject: h.addressKey(ip)}
	d, err := h.p.Allow(r.Context(), "badge:"+caller.Subject, h.cfg.BadgeDaily, day, 1)
	if err != nil || !d.Allowed {
		return badgeScore{Unknown: "try later"}
	}
	sc, stored := h.latestScore(r, target, caller, ip)
	if stored {
		h.keepBadge(key, sc, badgeTTL)
		return sc
	}
	// The one scan a badge starts is the caller's, so the rule of every
	// scan-costing request holds: another site's page cannot spend it.
	if h.crossSite(r) {
		return badgeScore{Unknown: "not scanned"}
	}
	if d, err := h.p.Allow(r.Context(), "scan:"+caller.Key(), h.cfg.Allowances.For(identity.Anonymous), day, 1); err != nil || !d.Allowed {
		return badgeScore{Unknown: "not scanned"} // not kept: another caller may have scans left
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/scan?format=json&url="+url.QueryEscape(target), nil)
	h.signFetch(req, caller, ip)
	req.Header.Set("Accept", "application/json")
	resp, err := h.p.Fetch(r.Context(), req)
	sc = badgeScore{Unknown: "unknown"}
	ttl := 60 * time.Second
	if err == nil {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		switch resp.StatusCode {
		case 200:
			var rep struct {
				CurrentLevel int `json:"currentLevel"`
				Score        struct {
					Value     int    `json:"value"`
					LevelName string `json:"levelName"`
				} `json:"score"`
			}
			if json.Unmarshal(raw, &rep) == nil {
				sc, ttl = badgeScore{Score: rep.Score.Value, Level: rep.CurrentLevel, LevelName: rep.Score.LevelName}, badgeTTL
			}
		case 400:
			sc.Unknown = "invalid url"
		case 422:
			sc.Unknown = "unreachable"
		}
	}
	h.keepBadge(key, sc, ttl)
	return sc
}

func (h *Handler) keepBadge(key string, sc badgeScore, ttl time.Duration) {
	if b, err := json.Marshal(sc); err == nil {
		h.p.CachePut(key, b, ttl)
	}
}

// latestScore asks the origin for the site's latest stored outcome; stored
// is false when it has none (or did not answer).
func (h *Handler) latestScore(r *http.Request, target string, caller identity.Caller, ip string) (sc badgeScore, stored bool) {
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/latest?url="+url.QueryEscape(target), nil)
	h.signFetch(req, caller, ip)
	req.Header.Set("Accept", "application/json")
	resp, err := h.p.Fetch(r.Context(), req)
	if err != nil {
		return badgeScore{}, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return badgeScore{}, false
	}
	var latest struct {
		Score     int    `json:"score"`
		Level     int    `json:"level"`
		LevelName string `json:"levelName"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&latest) != nil {
		return badgeScore{}, false
	}
	return badgeScore{Score: latest.Score, Level: latest.Level, LevelName: latest.LevelName}, true
}

// cachedFromOrigin serves documents the origin generates (openapi.json, the
// MCP server card) from the edge cache, refreshed every five minutes.
func (h *Handler) cachedFromOrigin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	key := "doc:" + h.base(r) + r.URL.Path
	body, ok := h.p.CacheGet(key)
	// The ETag is cached beside the document: hashing openapi.json (150 KB)
	// inside the WebAssembly module cost 1.2 ms a request (SHA-256 runs at
	// about 40 MB/s there).
	var tag string
	if t, ok := h.p.CacheGet(key + "\x00etag"); ok {
		tag = string(t)
	}
	if !ok {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, r.URL.Path, nil)
		req.Host = r.Host
		resp, err := h.p.Fetch(r.Context(), req)
		if err != nil {
			OriginUnavailable(w)
			return
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if resp.StatusCode != 200 {
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.WriteHeader(resp.StatusCode)
			w.Write(body)
			return
		}
		tag = etag(body)
		h.p.CachePut(key, body, 300*time.Second)
		h.p.CachePut(key+"\x00etag", []byte(tag), 300*time.Second)
	}
	if tag == "" {
		tag = etag(body)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Access-Control-Allow-Origin", "*")
	h.cacheFor(hdr, 300, r.URL.Path != "/openapi.json") // the server card names its URLs by the Host
	hdr.Set("ETag", tag)
	if strings.Contains(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
