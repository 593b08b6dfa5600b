package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/edge/identity"
)

type showcaseSite struct {
	URL       string    `json:"url"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
	LevelName string    `json:"levelName"`
	ScannedAt time.Time `json:"scannedAt"`
}

type showcaseData struct {
	Sites []showcaseSite `json:"sites"`
	Total int            `json:"total"`
}

const showcaseTTL = 60 * time.Second

// showcase serves /showcase: the best-scoring sites from the origin's scan
// history, as HTML or markdown, cached at the edge for a minute.
func (h *Handler) showcase(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	hdr := w.Header()
	hdr.Set("Vary", "Accept")
	pageHeaders(hdr)
	data, ok := h.showcaseData(r)
	base := h.base(r)
	var body []byte
	if acceptsMarkdown(r) {
		hdr.Set("Content-Type", "text/markdown; charset=utf-8")
		body = showcaseMarkdown(base, data, ok)
	} else {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		body = showcaseHTML(base, data, ok)
	}
	status := http.StatusOK
	if ok {
		h.cacheFor(hdr, 60, true) // the canonical URL and the JSON-LD are absolute
	} else {
		hdr.Set("Cache-Control", "no-store")
		status = http.StatusBadGateway
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func (h *Handler) showcaseData(r *http.Request) (showcaseData, bool) {
	const key = "showcase"
	var data showcaseData
	raw, ok := h.p.CacheGet(key)
	if !ok {
		ip := h.p.ClientIP(r)
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/showcase?limit=50", nil)
		h.signFetch(req, identity.Caller{Tier: identity.Anonymous, Subject: h.addressKey(ip)}, ip)
		resp, err := h.p.Fetch(r.Context(), req)
		if err != nil {
			return data, false
		}
		defer resp.Body.Close()
		raw, _ = io.ReadAll(io.LimitReader(resp.Body, maxReport))
		if resp.StatusCode != http.StatusOK {
			return data, false
		}
		h.p.CachePut(key, raw, showcaseTTL)
	}
	return data, json.Unmarshal(raw, &data) == nil
}

func showcaseHTML(base string, data showcaseData, ok bool) []byte {
	var b strings.Builder
	canonical := base + "/showcase"
	title := "Showcase: the most agent-ready sites — agentready"
	desc := "The best-scoring websites agentready has scanned, with their score, grade and level."
	items := []map[string]any{}
	for i, s := range data.Sites {
		items = append(items, map[string]any{"@type": "ListItem", "position": i + 1, "url": reportURL(base, s.URL), "name": displayHost(s.URL)})
	}
	pageHead(&b, title, desc, canonical, ldJSON(map[string]any{"@context": "https://schema.org", "@type": "CollectionPage", "name": title,
		"description": desc, "url": canonical, "isPartOf": map[string]string{"@type": "WebSite", "name": "agentready", "url": base + "/"},
		"mainEntity": map[string]any{"@type": "ItemList", "itemListElement": items}}))
	put(&b, `<main id="main">
<h1>The most agent-ready sites</h1>
<p>Every site scanned here is ranked by its latest score (newer first on ties). Each links to its full report. <a href="/how-we-score">How we score</a> · <a href="/">Scan a site</a></p>
`)
	switch {
	case !ok:
		put(&b, `<p class="note error" role="status">The scan history does not answer right now; retry in a minute.</p>
`)
	case len(data.Sites) == 0:
		put(&b, `<p class="note">No site has been scanned yet. <a href="/">Scan the first one.</a></p>
`)
	default:
		put(&b, `<div class="showcase"><table>
<caption>`, strconv.Itoa(len(data.Sites)), ` of `, strconv.Itoa(data.Total), ` scanned sites</caption>
<thead><tr><th scope="col">Rank</th><th scope="col">Site</th><th scope="col">Score</th><th scope="col">Grade</th><th scope="col">Level</th><th scope="col">Scanned</th></tr></thead>
<tbody>
`)
		for i, s := range data.Sites {
			put(&b, `<tr><td>`, strconv.Itoa(i+1), `</td><td><a href="`, esc(reportURL("", s.URL)), `">`, esc(displayHost(s.URL)), `</a></td><td>`, strconv.Itoa(s.Score), `</td><td>`, esc(s.Grade), `</td><td>`, strconv.Itoa(s.Level), ` (`, esc(s.LevelName), `)</td><td><time datetime="`, s.ScannedAt.UTC().Format(time.RFC3339), `">`, s.ScannedAt.UTC().Format("2 Jan 2006"), `</time></td></tr>
`)
		}
		put(&b, "</tbody>\n</table></div>\n")
	}
	put(&b, `</main>
`, siteFooter, `</body>
</html>
`)
	return []byte(b.String())
}

func showcaseMarkdown(base string, data showcaseData, ok bool) []byte {
	var b strings.Builder
	put(&b, "# The most agent-ready sites\n\n")
	if !ok {
		put(&b, "The scan history does not answer right now; retry in a minute.\n")
		return []byte(b.String())
	}
	if len(data.Sites) == 0 {
		put(&b, "No site has been scanned yet. Scan one at ", base, "/\n")
		return []byte(b.String())
	}
	put(&b, "| Rank | Site | Score | Grade | Level |\n|---|---|---|---|---|\n")
	for i, s := range data.Sites {
		put(&b, "| ", strconv.Itoa(i+1), " | [", strings.ReplaceAll(mdLine(displayHost(s.URL)), "|", "\\|"), "](", reportURL(base, s.URL), ") | ", strconv.Itoa(s.Score), " | ", mdLine(s.Grade), " | ", strconv.Itoa(s.Level), " (", mdLine(s.LevelName), ") |\n")
	}
	return []byte(b.String())
}
