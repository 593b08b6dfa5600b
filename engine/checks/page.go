package checks

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// Checks of the homepage family (engine/gather/page.go) that judge what the
// homepage offers agents: AI meta tags (1.7), Link headers (1.11), token
// efficiency (1.13), markdown negotiation (1.17) and WebMCP (1.18). The
// search-engine checks of the homepage (level 4) stay in level4.go.

func aiMeta(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil {
		return noPage(h)
	}
	present := map[string]bool{}
	for _, n := range []string{"llms:description", "llms:url", "llms:instructions"} {
		if v, ok := h.Page.MetaNamed(n); ok && strings.TrimSpace(v) != "" {
			present[n] = true
		}
	}
	det := present
	switch {
	case present["llms:description"] && len(present) >= 2:
		return pass(fmt.Sprintf("The homepage carries %d of the 3 llms:* meta tags.", len(present)), det, at(h.Resp))
	case len(present) > 0:
		return partial(fmt.Sprintf("The homepage carries %d of the 3 llms:* meta tags but not llms:description with another.", len(present)), "", det, at(h.Resp))
	}
	return fail("The homepage has no llms:description, llms:url or llms:instructions meta tags"+homeNote(h)+".", "", nil)
}

var agentRels = map[string]bool{"api-catalog": true, "service-desc": true, "service-doc": true, "describedby": true, "mcp": true}

func agentLink(rels []string, typ, href string) (string, bool) {
	for _, r := range rels {
		if agentRels[r] {
			return r, true
		}
		if r == "alternate" && strings.HasPrefix(typ, "text/markdown") {
			return "alternate text/markdown", true
		}
	}
	u, err := url.Parse(href)
	if err == nil {
		for _, suffix := range []string{"/llms.txt", "/ai.json", "/agent-card.json", "/server-card", "/server-card.json", "/mcp.json"} {
			if strings.HasSuffix(u.Path, suffix) {
				return "link to " + strings.TrimPrefix(suffix, "/"), true
			}
		}
	}
	return "", false
}

func linkHeaders(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	var header, html []string
	for _, l := range h.Links {
		if what, ok := agentLink(l.Rels, l.Type, l.Href); ok {
			header = append(header, what+" → "+l.Href)
		}
	}
	if h.Page != nil {
		for _, l := range h.Page.Links {
			if what, ok := agentLink(l.Rels, l.Type, l.Href); ok {
				html = append(html, what+" → "+l.Href)
			}
		}
	}
	det := map[string]any{"header": first(header, 10), "html": first(html, 10)}
	switch {
	case len(header) > 0:
		return pass(fmt.Sprintf("The homepage's HTTP Link header carries %s for agents.", plural(len(header), "relation", "relations")), det, at(h.Resp))
	case len(html) > 0:
		return partial(fmt.Sprintf("Agent-relevant links appear only as HTML <link> elements (%d), not in an HTTP Link header.", len(html)),
			"Repeat them in an HTTP `Link` header so agents find them without parsing HTML.", det, at(h.Resp))
	}
	return fail("The homepage links no agent-relevant documents (api-catalog, service-desc, llms.txt…), neither in a Link header nor in <link> elements.", "", nil)
}

func tokenEfficiency(in gather.Source) Outcome {
	h := gather.Get(in, gather.Home)
	if h.Page == nil || len(h.Resp.Body) < 400 {
		return na("The homepage is not an HTML page of at least 400 bytes.")
	}
	raw := int(math.Ceil(float64(len(h.Resp.Body)) / 4))
	content := int(math.Ceil(float64(h.Page.VisibleBytes) / 4))
	waste := 1 - float64(content)/float64(raw)
	m := 0.0
	var mit []string
	// The mitigations are 1.1 and 1.17 themselves, judged over the same inputs.
	if llmsTxt(in).Status == report.Pass {
		m += 0.10
		mit = append(mit, "llms.txt")
	}
	if markdownNegotiation(in).Status == report.Pass {
		m += 0.10
		mit = append(mit, "markdown negotiation")
	}
	det := map[string]any{"rawTokens": raw, "contentTokens": content, "wastePercent": int(math.Round(waste * 100)), "mitigations": mit}
	msg := fmt.Sprintf("%.0f%% of the homepage's ~%d tokens are markup, scripts or styles rather than content", waste*100, raw)
	switch {
	case waste < 0.70+m && waste <= 0.95:
		return pass(msg+".", det, at(h.Resp))
	case waste < 0.85+m:
		return partial(msg+".", "", det, at(h.Resp))
	}
	return fail(msg+".", "", det)
}

func markdownNegotiation(in gather.Source) Outcome {
	r, h := gather.Get(in, gather.HomeMarkdown), gather.Get(in, gather.Home)
	alt := ""
	for _, l := range h.Links {
		if hasRel(l.Rels, "alternate") && strings.HasPrefix(l.Type, "text/markdown") {
			alt = l.Href
		}
	}
	if h.Page != nil && alt == "" {
		for _, l := range h.Page.Links {
			if l.HasRel("alternate") && strings.HasPrefix(l.Type, "text/markdown") {
				alt = l.Href
			}
		}
	}
	if served, ct, vary := markdownServed(r); served {
		det := map[string]any{"contentType": ct, "varyAccept": vary, "bytes": len(r.Body), "htmlBytes": len(h.Resp.Body)}
		switch {
		case ct == "text/markdown" && vary:
			return pass("The homepage answers Accept: text/markdown with markdown and Vary: Accept.", det, at(r))
		case ct == "text/markdown":
			return partial("The homepage serves markdown, but without Vary: Accept, so caches may hand HTML readers markdown (or agents HTML).", "Add `Vary: Accept` to both representations.", det, at(r))
		default:
			return partial("Asked for markdown, the homepage returns a non-HTML body typed "+ct+" instead of text/markdown.", "Label the markdown `Content-Type: text/markdown; charset=utf-8` and add `Vary: Accept`.", det, at(r))
		}
	}
	if alt != "" {
		return partial("Markdown is offered only through an alternate link ("+alt+"), not by content negotiation.", "", map[string]any{"alternate": alt}, at(h.Resp))
	}
	if r.Err != nil || !r.OK() || !r.Complete() {
		return fail("Asked for text/markdown, the homepage did not answer with content ("+absence(r)+").", "", nil)
	}
	return fail("Asked for text/markdown, the homepage returns HTML ("+orUnknown(r.ContentType())+").", "", map[string]string{"contentType": r.ContentType()})
}

// markdownServed reads an answer to Accept: text/markdown: whether it is
// content that is not HTML, its type, and whether it varies on Accept.
// 1.17 judges the homepage with it, the deep scan's page sample each page.
func markdownServed(r *fetch.Response) (served bool, contentType string, varyAccept bool) {
	if r == nil || !r.OK() || !r.Complete() || r.LooksHTML() || len(r.Body) == 0 {
		return false, "", false
	}
	return true, r.ContentType(), headerHas(r.Header, "Vary", "Accept")
}

var provideContext = regexp.MustCompile(`modelContext\s*(\??\.\s*|\[\s*["']\s*)provideContext`)

func webMCP(in gather.Source) Outcome {
	h, scripts := gather.Get(in, gather.Home), gather.Get(in, gather.Scripts)
	if h.Page == nil {
		return noPage(h)
	}
	if h.Page.ToolForms > 0 {
		return pass(fmt.Sprintf("The homepage declares %s with the WebMCP toolname attribute.", plural(h.Page.ToolForms, "tool", "tools")), nil, at(h.Resp))
	}
	type src struct {
		where, text string
	}
	var srcs []src
	for _, s := range h.Page.Scripts {
		if s.Inline != "" {
			srcs = append(srcs, src{at(h.Resp) + " (inline script)", s.Inline})
		}
	}
	for _, r := range scripts {
		if r.OK() {
			srcs = append(srcs, src{at(r), string(r.Body)})
		}
	}
	legacy := ""
	for _, s := range srcs {
		if gather.WebMCPRegister.MatchString(s.text) {
			return pass("The page registers WebMCP tools with modelContext.registerTool.", nil, s.where)
		}
		if legacy == "" && provideContext.MatchString(s.text) {
			legacy = s.where
		}
	}
	if legacy != "" {
		return partial("The page uses the withdrawn WebMCP provideContext API.", "Move to `document.modelContext.registerTool()`; provideContext was removed from the WebMCP draft.", nil, legacy)
	}
	return fail(fmt.Sprintf("No WebMCP tool registration in the homepage or its %s.", plural(len(scripts), "same-origin script", "same-origin scripts")), "", nil)
}
