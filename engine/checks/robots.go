package checks

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/robots"
	"github.com/agentready/agentready/engine/report"
)

// Checks of the robots family (engine/gather/robots.go): the AI policy
// (1.4), Content-Signal records (1.15), Googlebot and Google-Extended (4.1,
// 4.2) and the sitemap (4.4).

func robotsAIPolicy(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	r := rb.Resp
	if r.Err != nil || r.Status >= 500 {
		return fail("robots.txt is unreachable ("+absence(r)+"); RFC 9309 tells crawlers to assume everything is disallowed.",
			"Make /robots.txt answer 200 (or 404 if you have none); a 5xx or timeout blocks every crawler.", probeOf(r))
	}
	if rb.File == nil {
		return partial("There is no robots.txt ("+absence(r)+"), so all crawlers are allowed but you state no AI policy.", "", nil, "")
	}
	f := rb.File
	blocked := map[string][]string{}
	var explicit []string
	for _, c := range Crawlers {
		d := f.Check(c.Token, "/")
		if d.Explicit {
			explicit = append(explicit, c.Token)
		}
		if !d.Allowed {
			blocked[c.Class] = append(blocked[c.Class], c.Token)
		}
	}
	det := map[string]any{"explicit": explicit, "blocked": blocked}
	var bad []string
	for _, class := range []string{"user", "agent", "search"} {
		bad = append(bad, blocked[class]...)
	}
	if len(bad) > 0 {
		return Outcome{Status: report.Fail, Message: fmt.Sprintf("robots.txt blocks agents that fetch for people or for AI search from /: %s.", strings.Join(first(bad, 8), ", ")),
			Recommendation: "Allow user-triggered fetchers (ChatGPT-User, Claude-User, Perplexity-User) and AI search crawlers (OAI-SearchBot, Claude-SearchBot, PerplexityBot); block training crawlers separately if you wish.",
			Details:        det, FoundAt: at(r)}
	}
	if len(explicit) == 0 {
		return partial("robots.txt lets AI agents in only through `User-agent: *`; it states no AI policy.", "", det, at(r))
	}
	msg := fmt.Sprintf("robots.txt names %s explicitly and lets user-triggered fetchers and AI search in", plural(len(explicit), "AI token", "AI tokens"))
	if n := len(blocked["training"]); n > 0 {
		msg += fmt.Sprintf(" (training crawlers blocked: %d)", n)
	}
	return pass(msg+".", det, at(r))
}

func appliesToAI(g *robots.Group) bool {
	for _, ag := range g.Agents {
		if robots.IsStar(ag) {
			return true
		}
		for _, c := range Crawlers {
			if robots.Names(ag, c.Token) {
				return true
			}
		}
	}
	return false
}

func contentSignals(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	f := rb.File
	if f == nil {
		return fail(robotsMissing(rb)+", so no Content-Signal preferences are declared.", "", nil)
	}
	type sig struct {
		Agents []string          `json:"agents"`
		Pairs  map[string]string `json:"signals"`
		Bad    []string          `json:"invalid,omitempty"`
		Line   int               `json:"line"`
	}
	var good, other []sig
	for _, g := range f.Groups {
		for _, s := range g.ContentSignals {
			e := sig{Agents: g.Agents, Pairs: s.Pairs, Bad: s.Bad, Line: s.Line}
			if s.Valid() && appliesToAI(g) {
				good = append(good, e)
			} else {
				other = append(other, e)
			}
		}
	}
	for _, s := range f.LooseSignals {
		other = append(other, sig{Pairs: s.Pairs, Bad: s.Bad, Line: s.Line})
	}
	det := map[string]any{"applying": good, "other": other}
	switch {
	case len(good) > 0:
		return pass(fmt.Sprintf("robots.txt declares Content-Signal preferences (line %d).", good[0].Line), det, at(rb.Resp)+fmt.Sprintf("#L%d", good[0].Line))
	case len(other) > 0:
		return partial("robots.txt has Content-Signal records, but none is a well-formed search/ai-input/ai-train=yes|no pair in a group for `*` or AI agents.", "", det, at(rb.Resp)+fmt.Sprintf("#L%d", other[0].Line))
	}
	return fail("robots.txt declares no Content-Signal preferences.", "", nil)
}

func googlebot(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	r := rb.Resp
	if r.Err != nil || r.Status >= 500 {
		return fail("robots.txt is unreachable ("+absence(r)+"), which tells Googlebot to crawl nothing.", "Make /robots.txt answer 200 or 404.", probeOf(r))
	}
	if rb.File == nil {
		return pass("There is no robots.txt, so Googlebot may crawl everything.", nil, "")
	}
	d := rb.File.Check("Googlebot", "/")
	det := map[string]any{"explicitGroup": d.Explicit}
	where := at(r)
	if d.Rule != nil {
		det["rule"] = fmt.Sprintf("%s: %s", map[bool]string{true: "Allow", false: "Disallow"}[d.Rule.Allow], d.Rule.Pattern)
		where += fmt.Sprintf("#L%d", d.Rule.Line)
	}
	if d.Allowed {
		return pass("robots.txt lets Googlebot crawl the homepage.", det, where)
	}
	return Outcome{Status: "fail", Message: "robots.txt blocks Googlebot from the homepage.", Details: det, FoundAt: where}
}

func googleExtended(in gather.Source) Outcome {
	rb := gather.Get(in, gather.Robots)
	if rb.File == nil {
		return fail(robotsMissing(rb)+", so no Google-Extended policy is stated.", "", nil)
	}
	if !rb.File.NamesExplicitly("Google-Extended") {
		return fail("robots.txt has no group for Google-Extended.", "", nil)
	}
	d := rb.File.Check("Google-Extended", "/")
	policy := "allows"
	if !d.Allowed {
		policy = "blocks"
	}
	return pass("robots.txt states a Google-Extended policy: it "+policy+" Gemini training and grounding.", map[string]bool{"allowed": d.Allowed}, at(rb.Resp))
}

func sitemap(in gather.Source) Outcome {
	sm, rb := gather.Get(in, gather.Sitemap), gather.Get(in, gather.Robots)
	r, info := sm.Resp, sm.Info
	valid := info.Kind.IsSitemap() && info.Valid
	relative := false
	if rb.File != nil {
		for _, s := range rb.File.Sitemaps {
			if u, err := url.Parse(s); err == nil && !u.IsAbs() {
				relative = true
			}
		}
	}
	det := map[string]any{"url": sm.URL, "declared": sm.Declared, "kind": info.Kind, "entries": info.Entries}
	if relative {
		det["note"] = "robots.txt uses a relative Sitemap URL; it was resolved against robots.txt, but the format asks for an absolute URL"
	}
	switch {
	case valid && sm.Declared:
		return pass(fmt.Sprintf("robots.txt declares a %s sitemap with %s.", info.Kind, plural(info.Entries, "entry", "entries")), det, at(r))
	case valid:
		return partial("A valid /sitemap.xml exists but robots.txt does not declare it.", "Add `Sitemap: "+gather.SiteOf(in).Origin+"/sitemap.xml` to robots.txt.", det, at(r))
	case sm.Declared:
		return partial("robots.txt declares "+sm.URL+", but it is not a valid sitemap ("+absence(r)+").", "Make the declared sitemap URL serve a valid urlset or sitemapindex.", det, at(r))
	}
	return fail("No sitemap: robots.txt declares none and /sitemap.xml is not a sitemap ("+absence(r)+").", "", det)
}
