package engine

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/jsonld"
	"github.com/agentready/agentready/engine/report"
)

// Renderer loads a page in a browser and returns it after its scripts ran.
// The engine defines it and never implements it, so it stays a library
// without a browser; the origin's headless Chromium (origin/browser)
// implements it. The report says why a render failed only in the words of
// an error that is a RenderFailure; any other error (a library's, a
// context's) becomes one of the engine's own sentences, since its text may
// carry an address or a library message.
type Renderer interface {
	Render(ctx context.Context, url string) (*RenderedPage, error)
}

// RenderFailure is a Renderer's error written for a report (errors.As finds
// it in a chain).
type RenderFailure interface {
	error
	// ReportText says what went wrong and what to do, without addresses,
	// headers or library messages; "" leaves the wording to the engine.
	ReportText() string
}

// Why a render failed, when the renderer gave no words of its own.
const (
	renderLate    = "the page was not rendered within the scan deadline"
	renderFailed  = "the browser could not render the page"
	maxRenderText = 400 // characters of a renderer's reason a report keeps
)

// renderFailure is what rendered.error says about err.
func renderFailure(err error) string {
	var f RenderFailure
	if errors.As(err, &f) {
		if s := strings.TrimSpace(f.ReportText()); s != "" {
			return clip.To(s, maxRenderText)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return renderLate
	}
	return renderFailed
}

// RenderedPage is a page after its JavaScript ran.
type RenderedPage struct {
	FinalURL      string
	HTML          string
	ConsoleErrors []string
	Tools         []report.WebMCPTool
}

// Limits of the comparison's lists: the report says how much was left out.
const (
	maxMissedWords = 40
	maxDiffItems   = 50
)

// renderHome runs the renderer on the scan's target; it runs beside the
// gatherers, so a scan with a renderer takes the longer of the two, not
// their sum.
func (s *Scanner) renderHome(ctx context.Context, target string) func(set *gather.Set) *report.Rendered {
	type outcome struct {
		page *RenderedPage
		err  error
	}
	ch := make(chan outcome, 1)
	go func() {
		p, err := s.opts.Renderer.Render(ctx, target)
		ch <- outcome{p, err}
	}()
	return func(set *gather.Set) *report.Rendered {
		var o outcome
		select {
		case o = <-ch:
		case <-ctx.Done():
			return &report.Rendered{Error: renderLate}
		}
		if o.err != nil {
			return &report.Rendered{Error: renderFailure(o.err)}
		}
		if o.page == nil {
			return &report.Rendered{Error: "the browser returned no page"}
		}
		var server []byte
		base, _ := url.Parse(target)
		if home := gather.Get(set, gather.Home); home != nil && home.Resp != nil {
			server = home.Resp.Body
			if u, err := url.Parse(home.Resp.FinalURL); err == nil && home.Resp.FinalURL != "" {
				base = u
			}
		}
		r := CompareRendered(server, []byte(o.page.HTML), base)
		r.FinalURL = o.page.FinalURL
		r.ConsoleErrors = append(r.ConsoleErrors, o.page.ConsoleErrors...)
		if len(r.ConsoleErrors) > maxDiffItems {
			r.ConsoleErrors = r.ConsoleErrors[:maxDiffItems]
		}
		r.Tools = append(r.Tools, o.page.Tools...)
		return r
	}
}

// CompareRendered compares a page's server HTML with its HTML after
// rendering: the words, headings, links and JSON-LD present only after
// rendering, which agents that do not run JavaScript never see. It is pure;
// base resolves relative links in both documents alike.
func CompareRendered(serverHTML, renderedHTML []byte, base *url.URL) *report.Rendered {
	sp, rp := htmlpage.Parse(serverHTML, base), htmlpage.Parse(renderedHTML, base)
	r := &report.Rendered{
		ServerWords: sp.MainWords, RenderedWords: rp.MainWords,
		ServerJSONLD: len(sp.JSONLD), RenderedJSONLD: len(rp.JSONLD),
		Headings: []string{}, Links: []string{}, JSONLDTypes: []string{}, ConsoleErrors: []string{}, Tools: []report.WebMCPTool{},
	}

	// Words: a multiset difference, so a word the server sends once and the
	// page shows three times counts twice.
	have := map[string]int{}
	for _, w := range words(sp.MainText) {
		have[w]++
	}
	var missed []string
	for _, w := range wordsKeepCase(rp.MainText) {
		k := strings.ToLower(w)
		if have[k] > 0 {
			have[k]--
			continue
		}
		r.WordsOnlyRendered++
		if len(missed) < maxMissedWords {
			missed = append(missed, w)
		}
	}
	r.MissedText = strings.Join(missed, " ")

	seenH := map[string]bool{}
	for _, h := range sp.Headings {
		seenH[headingKey(h)] = true
	}
	for _, h := range rp.Headings {
		k := headingKey(h)
		if seenH[k] || strings.TrimSpace(h.Text) == "" {
			continue
		}
		seenH[k] = true
		if len(r.Headings) < maxDiffItems {
			r.Headings = append(r.Headings, "h"+strconv.Itoa(h.Level)+": "+strings.Join(strings.Fields(h.Text), " "))
		}
	}

	seenL := map[string]bool{}
	for _, a := range sp.Anchors {
		seenL[a.Href] = true
	}
	for _, a := range rp.Anchors {
		if a.Href == "" || seenL[a.Href] || !webLink(a.Href) {
			continue
		}
		seenL[a.Href] = true
		if len(r.Links) < maxDiffItems {
			r.Links = append(r.Links, a.Href)
		} else {
			r.LinksDropped++
		}
	}

	serverTypes := map[string]bool{}
	for _, n := range jsonld.Parse(sp.JSONLD).Nodes {
		for _, t := range n.Types {
			serverTypes[t] = true
		}
	}
	only := map[string]bool{}
	for _, n := range jsonld.Parse(rp.JSONLD).Nodes {
		for _, t := range n.Types {
			if !serverTypes[t] && !only[t] && len(only) < maxDiffItems {
				only[t] = true
				r.JSONLDTypes = append(r.JSONLDTypes, t)
			}
		}
	}
	sort.Strings(r.JSONLDTypes)
	return r
}

func headingKey(h htmlpage.Heading) string {
	return strconv.Itoa(h.Level) + "\x00" + strings.ToLower(strings.Join(strings.Fields(h.Text), " "))
}

// webLink keeps links an agent could follow (not javascript:, mailto:, #…).
func webLink(href string) bool {
	u, err := url.Parse(href)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func wordsKeepCase(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) })
}

func words(s string) []string {
	w := wordsKeepCase(s)
	for i := range w {
		w[i] = strings.ToLower(w[i])
	}
	return w
}
