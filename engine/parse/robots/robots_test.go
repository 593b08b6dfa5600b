package robots

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/robots/" // fuzz seeds only; tests use testenv.Shared

// Cases from RFC 9309 §2.2 and §5 (longest match, allow wins ties, wildcards,
// the $ anchor, group merging, product-token matching).
func TestRFC9309Matching(t *testing.T) {
	file := Parse([]byte(`User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot
Allow: /page
Disallow: /*.html

User-agent: FooBot
Disallow: /merged/
`))
	cases := []struct {
		agent, path string
		allowed     bool
	}{
		{"foobot", "/", false},
		{"foobot", "/example/page.html", true},
		{"foobot", "/example/allowed.gif", true},
		{"foobot", "/example/other", false},
		{"FooBot", "/merged/x", false}, // groups naming the same token merge
		{"foobot/2.1", "/", true},      // the crawler's token is the full string; "foobot/2.1" names no group, falls to *
		{"barbot", "/example/page.html", false},
		{"bazbot", "/example/page.html", false},
		{"barbot", "/example/other.html", true},
		{"otherbot", "/example/x", false},
		{"otherbot", "/publications/a", true},
		{"otherbot", "/img/a.gif", false},
		{"otherbot", "/img/a.gif?x", true}, // $ anchors the end
		{"otherbot", "/robots.txt", true},
		{"quxbot", "/page", true},
		{"quxbot", "/page.html", false}, // /*.html (7 octets) is longer than /page (5)
	}
	for _, c := range cases {
		if d := file.Check(c.agent, c.path); d.Allowed != c.allowed {
			t.Errorf("%s %s: allowed=%v, want %v (rule %+v)", c.agent, c.path, d.Allowed, c.allowed, d.Rule)
		}
	}
}

func TestAllowWinsTie(t *testing.T) {
	f := Parse([]byte("User-agent: *\nDisallow: /page\nAllow: /page\n"))
	if !f.Check("bot", "/page").Allowed {
		t.Error("an allow and a disallow of equal length: allow must win")
	}
}

func TestPercentEncodingEquivalence(t *testing.T) {
	f := Parse([]byte("User-agent: *\nDisallow: /%7Ejoe/\nDisallow: /caf%c3%a9\n"))
	if f.Check("bot", "/~joe/index").Allowed {
		t.Error("%7E and ~ are the same octet")
	}
	if f.Check("bot", "/café").Allowed {
		t.Error("a UTF-8 path matches its percent-encoded rule")
	}
}

func TestUserAgentLineProductToken(t *testing.T) {
	if !Names("iaskspider/2.0", "iaskspider") || !Names("Brightbot 1.0", "Brightbot") || !Names("GPTBot", "gptbot") {
		t.Error("a line naming the token with a version suffix, or in another case, names it")
	}
	if Names("ChatGPT-User", "ChatGPT") || Names("*", "GPTBot") {
		t.Error("a longer token or * does not name the token")
	}
}

func TestContentSignals(t *testing.T) {
	f := Parse([]byte("Content-Signal: search=yes\nUser-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=NO, ai-input = yes\nContent-Signal: ai-train=maybe, foo=bar\n"))
	if len(f.LooseSignals) != 1 {
		t.Fatalf("loose signals %d, want 1", len(f.LooseSignals))
	}
	g := f.Groups[0]
	if len(g.ContentSignals) != 2 {
		t.Fatalf("group signals %d, want 2", len(g.ContentSignals))
	}
	s := g.ContentSignals[0]
	if !s.Valid() || s.Pairs["ai-train"] != "no" || s.Pairs["ai-input"] != "yes" || len(s.Bad) != 0 {
		t.Errorf("well-formed signal parsed as %+v", s)
	}
	if bad := g.ContentSignals[1]; bad.Valid() || len(bad.Bad) != 2 {
		t.Errorf("malformed signal parsed as %+v", bad)
	}
}

// Every real file in the corpus parses into the groups its quirks imply.
func TestCorpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/robots")
	covered := map[string]bool{}
	read := func(name string) *File {
		covered[name] = true
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return Parse(b)
	}
	defer func() {
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		for _, f := range files {
			if !covered[filepath.Base(f)] {
				t.Errorf("%s has no row in TestCorpus", filepath.Base(f))
			}
		}
	}()
	f := read("ai-robots-txt.txt")
	for _, bot := range []string{"GPTBot", "ClaudeBot", "PerplexityBot", "ChatGPT-User"} {
		if d := f.Check(bot, "/"); d.Allowed || !d.Explicit {
			t.Errorf("ai-robots-txt: %s should be explicitly disallowed", bot)
		}
	}
	if !f.Check("Googlebot", "/").Allowed {
		t.Error("ai-robots-txt: Googlebot is not named and there is no * group")
	}
	f = read("excalidraw.txt")
	if !f.Check("SomeBot", "/").Allowed || f.Check("SomeBot", "/drawing").Allowed {
		t.Error("excalidraw: Allow: /$ admits only the root")
	}
	if !f.Check("Twitterbot", "/drawing").Allowed {
		t.Error("excalidraw: an empty Disallow allows everything")
	}
	f = read("gitlab.txt")
	if f.Check("AnyBot", "/search").Allowed || f.Check("AnyBot", "/api/v4").Allowed {
		t.Error("gitlab: the three * groups must merge")
	}
	f = read("supabase.txt")
	if len(f.Groups) != 2 || !f.Groups[0].ContentSignals[0].Valid() || !f.NamesExplicitly("Google-Extended") {
		t.Errorf("supabase: %d groups, signals %+v", len(f.Groups), f.Groups[0].ContentSignals)
	}
	if f.Check("GPTBot", "/kb/x").Allowed || !f.Check("GPTBot", "/docs").Allowed {
		t.Error("supabase: GPTBot group rules")
	}
	f = read("llmstxt-org.txt")
	if len(f.Groups) != 0 || len(f.Sitemaps) != 1 {
		t.Errorf("llmstxt-org: %d groups, %d sitemaps", len(f.Groups), len(f.Sitemaps))
	}
	f = read("cloudflare-docs.txt")
	if len(f.Groups) == 0 || len(f.Groups[0].Agents) == 0 {
		t.Error("cloudflare-docs: a blank line between User-agent and its rules keeps the group")
	}
	f = read("jsr.txt")
	if len(f.Groups) == 0 {
		t.Error("jsr: comments inside a group keep it")
	}
	for _, name := range []string{"crates-io.txt", "lobsters.txt", "python-org.txt"} {
		if f = read(name); len(f.Groups) == 0 {
			t.Errorf("%s: no groups", name)
		}
	}
	f = read("adrianub-dev.txt") // ten groups, each repeating one Content-Signal
	if len(f.Groups) != 10 || !f.NamesExplicitly("GPTBot") || !f.Check("GPTBot", "/").Allowed || len(f.Sitemaps) != 1 {
		t.Errorf("adrianub-dev: %d groups, %d sitemaps", len(f.Groups), len(f.Sitemaps))
	}
	for _, g := range f.Groups {
		if len(g.ContentSignals) != 1 || g.ContentSignals[0].Pairs["ai-train"] != "no" {
			t.Errorf("adrianub-dev: group %v signals %+v", g.Agents, g.ContentSignals)
		}
	}
	f = read("scalekit-docs.txt") // a lone Content-Signal after a blank line stays with the * group
	if len(f.Groups) != 1 || len(f.Groups[0].ContentSignals) != 1 || f.Groups[0].ContentSignals[0].Pairs["ai-input"] != "yes" {
		t.Errorf("scalekit-docs: %+v", f.Groups)
	}
	f = read("laisky-blog.txt") // RFC 9309: a blank line does not end a group, so the trailing signal is Bytespider's
	if len(f.Groups) != 8 || f.Check("CCBot", "/").Allowed || !f.Check("ClaudeBot", "/").Allowed || len(f.Groups[7].ContentSignals) != 1 || len(f.Sitemaps) != 1 {
		t.Errorf("laisky-blog: %d groups", len(f.Groups))
	}
	f = read("lamatic-nested-public.txt") // ` *` first line, two * groups (one spelled User-Agent), Host between
	if len(f.Groups) != 1 || f.Check("x", "/docs/vulnerability-disclosure").Allowed || !f.Check("x", "/docs").Allowed || len(f.Sitemaps) != 2 {
		t.Errorf("lamatic-nested-public: %d groups, %d sitemaps", len(f.Groups), len(f.Sitemaps))
	}
}

func TestOversizedFileIsCut(t *testing.T) {
	big := make([]byte, 0, MaxBytes+100)
	for len(big) < MaxBytes-20 {
		big = append(big, "# padding line\n"...)
	}
	big = append(big, "User-agent: *\nDisallow: /\n"...)
	if f := Parse(big); !f.Check("bot", "/x").Allowed {
		t.Error("rules past 500 KiB must be ignored")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "GPTBot", "/a/b.html")
		}
	}
	f.Add([]byte("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*b$\n"), "x", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, body []byte, token, path string) {
		file := Parse(body)
		d1 := file.Check(token, path)
		d2 := file.Check(token, path)
		if d1.Allowed != d2.Allowed {
			t.Fatal("Check is not deterministic")
		}
		if d1.Rule == nil && !d1.Allowed {
			t.Fatal("disallowed without a rule")
		}
	})
}
