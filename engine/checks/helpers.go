package checks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

func at(r *fetch.Response) string {
	if r == nil {
		return ""
	}
	if r.FinalURL != "" {
		return r.FinalURL
	}
	return r.RequestURL
}

func pass(msg string, details any, foundAt string) Outcome {
	return Outcome{Status: report.Pass, Message: msg, Details: details, FoundAt: foundAt}
}

func partial(msg, rec string, details any, foundAt string) Outcome {
	return Outcome{Status: report.Partial, Message: msg, Recommendation: rec, Details: details, FoundAt: foundAt}
}

func fail(msg, rec string, details any) Outcome {
	return Outcome{Status: report.Fail, Message: msg, Recommendation: rec, Details: details}
}

func na(msg string) Outcome { return Outcome{Status: report.NA, Message: msg} }

// absence explains why a probed document counts as absent.
func absence(r *fetch.Response) string {
	switch {
	case r == nil:
		return "not requested"
	case r.Err != nil:
		return "request failed: " + shortErr(r.Err)
	case r.OK() && !r.Complete():
		return fmt.Sprintf("answered %d but the body was cut: %s", r.Status, cutReason(r))
	case r.OK() && r.LooksHTML():
		return fmt.Sprintf("answered %d with an HTML page (a soft 404)", r.Status)
	default:
		return fmt.Sprintf("answered %d", r.Status)
	}
}

func shortErr(err error) string {
	return clip.To(err.Error(), 160)
}

// probe is the details entry for one fetched URL.
type probe struct {
	URL    string `json:"url"`
	Status int    `json:"status,omitempty"`
	Note   string `json:"note,omitempty"`
}

func probeOf(r *fetch.Response) probe {
	p := probe{URL: r.RequestURL, Status: r.Status}
	if !r.Found() {
		p.Note = absence(r)
	}
	return p
}

// homeNote is appended to HTML-based messages when the homepage was not a
// plain 200, or was cut: what the page lacks may lie in the part that never
// arrived.
func homeNote(h *gather.HomePage) string {
	if r := h.Resp; r != nil && (r.Status < 200 || r.Status > 299) {
		return fmt.Sprintf(" (the homepage answered %d %s)", r.Status, http.StatusText(r.Status))
	}
	if r := h.Resp; r != nil && r.Err == nil && !r.Complete() {
		return fmt.Sprintf(" (only the first %d bytes of the homepage were read: %s)", len(r.Body), cutReason(r))
	}
	return ""
}

// cutReason says why a response's body is not whole.
func cutReason(r *fetch.Response) string {
	if r.Cut != "" {
		return r.Cut
	}
	return "it did not finish arriving"
}

func noPage(h *gather.HomePage) Outcome {
	return fail("The homepage is not an HTML page, so there is nothing to read"+homeNote(h)+".",
		"Serve an HTML homepage (Content-Type: text/html) at the site root.", map[string]any{"contentType": h.Resp.ContentType(), "status": h.Resp.Status})
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// robotsMissing says why there is no parsed robots.txt.
func robotsMissing(rb *gather.RobotsTxt) string {
	r := rb.Resp
	if r.Err != nil || r.Status >= 500 {
		return "robots.txt is unreachable (" + absence(r) + ")"
	}
	return "There is no robots.txt (" + absence(r) + ")"
}

// joinAnd lists parts as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func article(word string) string {
	if word != "" && strings.ContainsRune("AEIOUaeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// hasAPI is evidence that the site offers an API: an OpenAPI document or an
// API catalog. A check that calls it requires gather.Spec and gather.Catalog;
// both are read whatever the answer, so the Requires test sees both used.
func hasAPI(in gather.Source) bool {
	spec, cat := gather.Get(in, gather.Spec), gather.Get(in, gather.Catalog)
	return spec.Spec != nil || cat.Linkset != nil
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func hasRel(rels []string, r string) bool {
	for _, x := range rels {
		if x == r {
			return true
		}
	}
	return false
}
