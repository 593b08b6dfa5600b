package report

// The read suite, the profile and the interaction findings: the report's
// blocks beside the 48 checks. None of them changes checks[] or score,
// which stay the 48 checks of docs/check-rules.md; see docs/scoring.md.

// ReadGroup is the category of the read checks, whose ids are R.1, R.2…
// so that the 48 web checks keep theirs.
const ReadGroup = "Readable"

// Read is the read suite: can an agent read the site's pages, one by one.
// It judges a polite sample of pages taken from llms.txt and the sitemap.
type Read struct {
	// Limit is how many pages the sample could take (10 by default, at
	// most 50); Candidates how many distinct same-site page URLs were
	// found to choose from.
	Limit      int    `json:"limit"`
	Source     string `json:"source"` // where the URLs came from, in words ("" when none was found)
	Candidates int    `json:"candidates"`
	// Requests is what the sample cost, beyond the 48 checks' requests.
	Requests int        `json:"requests"`
	Pages    []ReadPage `json:"pages"`
	Checks   []Check    `json:"checks"`
	// Counts are each check's passing pages out of those it applies to:
	// what its verdict and its share of Score come from.
	Counts []ReadCount `json:"counts"`
	// Score is the read suite's own score: each applicable check counts
	// the share of pages that passed it (3 failing pages of 50 cost 6%,
	// not the check).
	Score Tally `json:"score"`
}

// ReadCount is a read check's OK pages of Of (Of 0: not applicable).
type ReadCount struct {
	ID string `json:"id"`
	OK int    `json:"ok"`
	Of int    `json:"of"`
}

// ReadPage is what the read suite saw of one sampled page.
type ReadPage struct {
	URL  string `json:"url"`
	From string `json:"from"` // "llms.txt", "sitemap" or "homepage links"
	// Status is the final answer's status (0 when there was none; Error says why).
	Status    int    `json:"status"`
	Error     string `json:"error,omitempty"`
	FinalURL  string `json:"finalUrl,omitempty"` // only when it differs from URL
	Redirects int    `json:"redirects"`
	// HTMLTokens is the page as sent (bytes/4); TextTokens its readable
	// text; MarkdownTokens the markdown twin's (0 when there is none).
	HTMLTokens     int `json:"htmlTokens"`
	TextTokens     int `json:"textTokens"`
	MarkdownTokens int `json:"markdownTokens"`
	// ContentStart is how far into the page's text (percent) its main
	// content begins.
	ContentStart int    `json:"contentStartPercent"`
	Rendering    string `json:"rendering"` // "server", "shell" or "not html"
	// MarkdownURL is the .md twin that answered with markdown ("" when none
	// did); Negotiated is true when the page itself answered Accept:
	// text/markdown with markdown.
	MarkdownURL string `json:"markdownUrl,omitempty"`
	Negotiated  bool   `json:"negotiated"`
	// Parity is the share (percent) of the HTML's main-content words the
	// markdown holds; -1 when there was no markdown to compare.
	Parity int `json:"parityPercent"`
	// Failed lists the read checks this page did not pass, by id.
	Failed []string `json:"failed"`
}

// Profiles are the kinds of site a report can be judged as.
var Profiles = []string{"content", "docs", "api", "commerce", "application"}

// Profile says which kind of site the report was judged as, why, and what
// that changes: the checks that do not apply to it (or that the site or
// the caller waived) are not applicable in Score, never a cost.
type Profile struct {
	ID string `json:"id"`
	// Source is where ID came from: "detected", "declared" (the site's
	// /.well-known/agentready.json) or "requested" (the caller's profile=).
	Source   string   `json:"source"`
	Detected string   `json:"detected"`
	Evidence []string `json:"evidence"` // what the detection read, in words
	// Declared is the profile the site declared ("" when none).
	Declared string `json:"declared,omitempty"`
	// DeclarationProblems says, in words, what the scan skipped in the
	// site's /.well-known/agentready.json (a waiver without a reason, an
	// unknown check or profile, a file that is not a declaration), so an
	// owner sees why a waiver does not count.
	DeclarationProblems []string        `json:"declarationProblems,omitempty"`
	Waivers             []Waiver        `json:"waivers"`
	NotApplicable       []NotApplicable `json:"notApplicable"`
	// Score is the 48 checks' score with NotApplicable counted as na;
	// ReadScore the read suite's without the read checks waived.
	Score     Tally  `json:"score"`
	Grade     string `json:"grade"`
	ReadScore *Tally `json:"readScore,omitempty"`
	// Others is what the score would be as each other profile.
	Others []ProfileOutcome `json:"others"`
}

// Waiver is a statement that a check does not apply to a site.
type Waiver struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
	From   string `json:"from"` // "site" (its /.well-known/agentready.json) or "config" (the caller's file)
}

// NotApplicable is a check the profile or a waiver takes out of the score.
type NotApplicable struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
	By     string `json:"by"` // "profile" or "waiver"
	// Status is the check's own verdict, which the 48-check score keeps.
	Status Status `json:"status"`
}

// ProfileOutcome is the score as another profile.
type ProfileOutcome struct {
	ID            string   `json:"id"`
	Value         int      `json:"value"`
	Grade         string   `json:"grade"`
	NotApplicable []string `json:"notApplicable"` // check ids
}

// Interaction is a finding that only shows across checks, with its fix.
type Interaction struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Message string   `json:"message"`
	Fix     string   `json:"fix"`
	Checks  []string `json:"checks"` // the check ids whose results show it
}

// ReadCheck returns the read check id, if present.
func (r *Result) ReadCheck(id string) (Check, bool) {
	if r.Read == nil {
		return Check{}, false
	}
	for _, c := range r.Read.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}
