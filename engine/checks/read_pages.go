package checks

import (
	"encoding/json"
	"slices"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// ReadPages is the report's table of the sampled pages: what the read
// checks measured of each, and which of them it failed.
func ReadPages(set *gather.Set, judged []report.Check) []report.ReadPage {
	doc := gather.Get(set, gather.ReadSample)
	failed := map[string][]string{}
	for _, c := range judged {
		var d struct {
			Failing []PageWhy `json:"failing"`
		}
		if json.Unmarshal(c.Details, &d) == nil {
			for _, f := range d.Failing {
				if !slices.Contains(failed[f.URL], c.ID) {
					failed[f.URL] = append(failed[f.URL], c.ID)
				}
			}
		}
	}
	out := make([]report.ReadPage, 0, len(doc.Pages))
	for _, p := range doc.Pages {
		rp := report.ReadPage{URL: p.URL, From: p.From, Parity: Parity(p), ContentStart: ContentStart(p), Failed: failed[p.URL]}
		if rp.Failed == nil {
			rp.Failed = []string{}
		}
		if r := p.HTML; r != nil {
			rp.Status, rp.Redirects = r.Status, len(r.Redirects)
			if r.Err != nil {
				rp.Error = fetch.Describe(r.Err)
			}
			if r.FinalURL != "" && r.FinalURL != p.URL {
				rp.FinalURL = r.FinalURL
			}
			rp.HTMLTokens = Tokens(len(r.Body))
		}
		switch {
		case p.Page == nil:
			rp.Rendering = "not html"
		case Shell(p):
			rp.Rendering = "shell"
		default:
			rp.Rendering = "server"
		}
		if p.Page != nil {
			rp.TextTokens = Tokens(p.Page.VisibleBytes)
		}
		if md := PageMarkdown(p); md != nil {
			rp.MarkdownTokens = Tokens(len(md.Body))
		}
		if TwinServed(p) {
			rp.MarkdownURL = p.TwinURL
		}
		rp.Negotiated, _ = pageMarkdown(p.Negotiated)
		out = append(out, rp)
	}
	return out
}
