package checks

// R.19 and R.20: what weighs on a page besides its content (machine data
// an agent reads as text) and whether a page behind a sign-in can be read
// some other way. With them the read suite reports every page-level fact
// AFDocs does (docs/benchmarks.md).

import (
	"fmt"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
)

const (
	// MaxDataTokens is the page size (its text plus data: URIs, in tokens)
	// from which data that makes up half the page fails R.19: half of
	// R.1's limit, where the Agent-Friendly Documentation Spec starts to
	// warn (50,000 characters).
	MaxDataTokens = MaxPageTextTokens / 2
	// MinAltWords is how many words the markdown of a page behind a
	// sign-in must hold to count as its content, not a sign-in page of its
	// own.
	MinAltWords = 100
)

// DataProblem says how machine data weighs on a page ("" when it does
// not): half or more of what an agent reads of it, on a page over
// MaxDataTokens.
func DataProblem(p *gather.ReadPage) string {
	if !answered(p) || len(p.Page.Data) == 0 {
		return ""
	}
	data, total := p.Page.DataBytes()
	data = min(data, total) // a code block's text can hold hidden markup VisibleBytes leaves out
	if Tokens(total) <= MaxDataTokens || 2*data < total {
		return ""
	}
	return fmt.Sprintf("is ~%s tokens, %d%% of it data (%s)", thousands(Tokens(total)), 100*data/total, largestData(p.Page.Data))
}

// largestData names the page's largest data element in words.
func largestData(ds []htmlpage.Data) string {
	big := ds[0]
	for _, d := range ds[1:] {
		if d.Bytes > big.Bytes {
			big = d
		}
	}
	size := "~" + thousands(Tokens(big.Bytes)) + " tokens"
	switch {
	case big.Kind == htmlpage.DataTable:
		return fmt.Sprintf("the largest a %s-row table, %s", thousands(big.Rows), size)
	case big.Kind == htmlpage.DataJSON:
		return "the largest a JSON block, " + size
	case big.URI:
		return "the largest an image's base64 data: URI, " + size
	}
	return "the largest a base64 block, " + size
}

// SignInWall says how a sampled page keeps its content behind a sign-in
// ("" when it does not): it answers 401 or 403 (not with a bot challenge,
// which R.8 reports), a sign-in form with little else (unless it is the
// sign-in page itself), or a redirect to a sign-in page.
func SignInWall(p *gather.ReadPage) string {
	if p.HTML == nil || p.HTML.Err != nil {
		return ""
	}
	switch s := p.HTML.Status; {
	case s == 401 || s == 403:
		if botChallenge.Match(p.HTML.Body) {
			return ""
		}
		return fmt.Sprintf("answers %d", s)
	}
	return signInAnswer(p)
}

// ReadableMarkdown reports that a page's markdown is public and holds its
// content: MinAltWords or more, not a sign-in page of its own.
func ReadableMarkdown(p *gather.ReadPage) bool {
	md := PageMarkdown(p)
	return md != nil && htmlpage.CountWords(string(md.Body)) >= MinAltWords
}

func init() {
	readCheck(Definition{ID: "R.19", Name: "Embedded Data",
		LooksFor: fmt.Sprintf("Machine-generated data in each sampled page's content, which an agent reads as text: tables of %d or more rows of the same width, and JSON or base64 of %s bytes or more (in code blocks, or an image's data: URI).", htmlpage.DataMinRows, thousands(htmlpage.DataMinBytes)),
		Rule:     fmt.Sprintf("A page fails when such data is half or more of what an agent reads of it (its text plus data: URIs) and that is over %s tokens, half of R.1's limit: the data, not the content, makes the page long. Pages without data pass. Proportional over the sample.", thousands(MaxDataTokens)),
		Fix:      "Move large tables, JSON and base64 out of the page: keep a few sample rows and link the whole as a file (CSV, JSON) or an API endpoint, and serve images as image files.",
		Effort:   Medium}, readNeeds, eachPage(noSample, ofAnswered(DataProblem)))
	readCheck(Definition{ID: "R.20", Name: "Readable Past a Sign-in",
		LooksFor: "Each sampled page behind a sign-in (it answers 401 or 403, a sign-in form, or a redirect to a sign-in page), and the markdown it has without one: its .md twin, or its answer to Accept: text/markdown.",
		Rule:     fmt.Sprintf("A page behind a sign-in passes when its markdown is public and holds at least %d words (not a sign-in page of its own). Pages not behind a sign-in are not counted; not applicable when none is. Proportional over the sample.", MinAltWords),
		Fix:      "Publish what agents need to read without a sign-in, or serve those pages' markdown (.md twins, Accept: text/markdown) publicly and list it in llms.txt; keep the sign-in for what is private.",
		Effort:   Medium}, readNeeds, eachPage(because("No sampled page is behind a sign-in."), func(p *gather.ReadPage) (bool, string) {
		wall := SignInWall(p)
		switch {
		case wall == "":
			return false, ""
		case PageMarkdown(p) == nil:
			return true, wall + ", and has no public markdown"
		case !ReadableMarkdown(p):
			return true, fmt.Sprintf("%s, and its markdown has fewer than %d words: a sign-in page too", wall, MinAltWords)
		}
		return true, ""
	}))
}
