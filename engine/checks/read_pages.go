package checks

import (
	"slices"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// JudgeRead runs the read suite over set's page sample: the report's read
// block but its score and request count, which the engine adds. emit, when
// set, gets each check as it is judged. It is nil when the scan gathered no
// sample (a repository scan).
func JudgeRead(set *gather.Set, emit func(report.Check)) *report.Read {
	if !gather.Has(set, gather.ReadSample) {
		return nil
	}
	doc := gather.Get(set, gather.ReadSample)
	out := &report.Read{Limit: doc.Limit, Source: doc.Source, Candidates: doc.Candidates, Checks: []report.Check{}, Counts: []report.ReadCount{}}
	failed := map[string][]string{} // page URL → the read checks it failed
	for _, c := range Read() {
		r, n, listed := c.judge(set)
		out.Checks = append(out.Checks, r)
		out.Counts = append(out.Counts, n)
		for _, f := range listed {
			if !slices.Contains(failed[f.URL], c.ID) {
				failed[f.URL] = append(failed[f.URL], c.ID)
			}
		}
		if emit != nil {
			emit(r)
		}
	}
	out.Pages = readPages(doc, failed)
	return out
}

// readPages is the report's table of the sampled pages: what the read
// checks measured of each, and which of them it failed.
func readPages(doc *gather.ReadDoc, failed map[string][]string) []report.ReadPage {
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
