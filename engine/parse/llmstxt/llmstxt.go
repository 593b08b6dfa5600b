package llmstxt

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/clip"
)

// MaxBytes is the largest file validated; longer input is cut and noted.
const MaxBytes = 2 << 20

// Severity of a finding.
type Severity string

const (
	Error   Severity = "error"   // breaks the format
	Warning Severity = "warning" // allowed but unhelpful to agents
	Info    Severity = "info"
)

// Finding is one line-numbered observation.
type Finding struct {
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// Section is an H2 block.
type Section struct {
	Name  string `json:"name"`
	Line  int    `json:"line"`
	Links int    `json:"links"`
}

// Report is the validator's result.
type Report struct {
	Valid    bool      `json:"valid"` // structure holds and at least one link exists
	Title    string    `json:"title"`
	Summary  string    `json:"summary,omitempty"`
	Sections []Section `json:"sections"`
	Links    int       `json:"links"`
	Findings []Finding `json:"findings"`
}

// Errors counts findings of severity error.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

var (
	linkItem = regexp.MustCompile(`^\s*[-*+]\s+\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)\s*(?::\s*(.*))?$`)
	bareLink = regexp.MustCompile(`^\s*\[[^\]]+\]\([^)\s]+[^)]*\)`) // a line that starts with a link
	anyLink  = regexp.MustCompile(`\[[^\]]+\]\(([^)\s]+)[^)]*\)`)
	heading  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	listItem = regexp.MustCompile(`^\s*[-*+]\s+`)
)

// Validate checks body; base (may be nil) resolves relative links.
func Validate(body []byte, base *url.URL) *Report {
	r := &Report{Sections: []Section{}, Findings: []Finding{}}
	add := func(line int, s Severity, msg string) {
		if len(r.Findings) < 200 {
			r.Findings = append(r.Findings, Finding{Line: line, Severity: s, Message: msg})
		}
	}
	if len(body) > MaxBytes {
		add(0, Warning, "file is larger than 2 MiB; only the first 2 MiB were validated")
		body = body[:MaxBytes]
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		add(0, Error, "file is not valid UTF-8")
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if looksHTML(text) {
		add(1, Error, "file is an HTML page, not markdown (is the server answering every path with its homepage?)")
		return r
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var cur *Section
	inFence := false
	seen := map[string]int{}
	firstContent := true
	afterTitle := false
	h1s, looseLinks := 0, 0
	// Lines that are links but not list items (`[name](url): notes`
	// without the `- `): agents that read the format take only list
	// items, so they count as no links, and the finding says why.
	unlisted, firstUnlisted := 0, 0
	for i, line := range lines {
		n := i + 1
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || trim == "" {
			continue
		}
		if strings.HasPrefix(trim, "<!--") {
			continue
		}
		m := heading.FindStringSubmatch(trim)
		if firstContent {
			firstContent = false
			if m == nil || len(m[1]) != 1 {
				add(n, Error, "the file must start with an H1 title (`# Name`)")
			} else {
				r.Title = m[2]
				h1s++
				afterTitle = true
				continue
			}
		}
		if m != nil {
			afterTitle = false
			switch len(m[1]) {
			case 1:
				h1s++
				if h1s == 2 {
					add(n, Warning, "more than one H1; only the first is the title")
				}
			case 2:
				r.Sections = append(r.Sections, Section{Name: m[2], Line: n})
				cur = &r.Sections[len(r.Sections)-1]
			default:
				if cur == nil {
					add(n, Warning, "headings other than H2 before the first section are not part of the format")
				} else {
					add(n, Info, "H"+string(rune('0'+len(m[1])))+" inside section "+quote(cur.Name)+"; agents treat only H2 as sections")
				}
			}
			continue
		}
		if afterTitle && strings.HasPrefix(trim, ">") {
			if r.Summary == "" {
				r.Summary = strings.TrimSpace(strings.TrimPrefix(trim, ">"))
			}
			continue
		}
		afterTitle = false
		if cur == nil {
			// Free-form details between the summary and the first section; link
			// items here are counted so a flat list is reported as what it is.
			if linkItem.MatchString(line) {
				looseLinks++
			}
			continue
		}
		if !listItem.MatchString(line) && bareLink.MatchString(line) {
			if unlisted++; unlisted == 1 {
				firstUnlisted = n
			}
			continue
		}
		if lm := linkItem.FindStringSubmatch(line); lm != nil {
			cur.Links++
			r.Links++
			checkURL(lm[2], n, base, add, seen)
			continue
		}
		if listItem.MatchString(line) {
			if links := anyLink.FindAllStringSubmatch(line, -1); len(links) > 0 {
				add(n, Warning, "list item carries links but is not of the form `- [name](url): notes`")
				for _, l := range links {
					cur.Links++
					r.Links++
					checkURL(l[1], n, base, add, seen)
				}
				continue
			}
			add(n, Warning, "list item in section "+quote(cur.Name)+" is not a link")
		}
	}
	if r.Title == "" && r.Errors() == 0 {
		add(1, Error, "no H1 title")
	}
	if r.Title != "" && r.Summary == "" {
		add(2, Warning, "no blockquote summary (`> one-line description`) after the title")
	}
	if len(r.Sections) == 0 {
		if looseLinks > 0 {
			add(0, Error, fmt.Sprintf("no H2 sections with link lists: the %d links form one list with no `## Section` heading above it", looseLinks))
		} else {
			add(0, Error, "no H2 sections with link lists")
		}
	}
	if unlisted > 0 && r.Links > 0 {
		what := "1 link in sections is not a list item"
		if unlisted > 1 {
			what = fmt.Sprintf("%d links in sections are not list items", unlisted)
		}
		add(firstUnlisted, Warning, what+": start each with `- ` (`- [name](url): notes`), or agents skip them")
	}
	for _, s := range r.Sections {
		if s.Links == 0 && unlisted == 0 {
			add(s.Line, Warning, "section "+quote(s.Name)+" has no links")
		}
		if strings.EqualFold(s.Name, "Optional") {
			add(s.Line, Info, "`## Optional` marks links agents may skip in short contexts")
		}
	}
	switch {
	case r.Links > 0:
	case unlisted > 0:
		what := "the link in the sections is not a list item"
		if unlisted > 1 {
			what = fmt.Sprintf("the %d links in the sections are not list items", unlisted)
		}
		add(firstUnlisted, Error, what+": start each line with `- ` (`- [name](url): notes`)")
	case looseLinks == 0:
		add(0, Error, "no markdown links (`- [name](url)`) found")
	case len(r.Sections) > 0: // (with no section, the error above says it)
		add(0, Error, fmt.Sprintf("the H2 sections list no links: the %d links above the first section are free-form details, not a file list", looseLinks))
	}
	r.Valid = r.Errors() == 0
	return r
}

func checkURL(raw string, line int, base *url.URL, add func(int, Severity, string), seen map[string]int) {
	u, err := url.Parse(raw)
	if err != nil {
		add(line, Error, "link target "+quote(raw)+" is not a URL")
		return
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto" {
		add(line, Warning, "link target "+quote(raw)+" uses scheme "+u.Scheme)
	}
	if prev, ok := seen[u.String()]; ok {
		add(line, Info, "duplicate link (also on line "+itoa(prev)+")")
	} else {
		seen[u.String()] = line
	}
}

func looksHTML(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	if len(t) > 256 {
		t = t[:256]
	}
	return strings.HasPrefix(t, "<!doctype html") || strings.HasPrefix(t, "<html") || strings.HasPrefix(t, "<head")
}

func quote(s string) string {
	return "\"" + clip.To(s, 60) + "\""
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Links returns the URLs of the file's link list items, resolved against
// base (may be nil), outside code fences, in order, without repeats, at most
// max. They are the links an agent that reads the format follows.
func Links(body []byte, base *url.URL, max int) []string {
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	var out []string
	seen := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(strings.ToValidUTF8(string(body), "\uFFFD"), "\n") {
		if len(out) >= max {
			break
		}
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
			continue
		}
		m := linkItem.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if inFence || m == nil {
			continue
		}
		u, err := url.Parse(m[2])
		if err != nil {
			continue
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			continue
		}
		if s := u.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
