package repo

import (
	"bytes"
	"strings"
	"testing"
)

func TestGitignore(t *testing.T) {
	ig := &ignore{rules: []ignoreRule{
		{pattern: "*.log"}, {pattern: "build", dirOnly: true}, {pattern: "docs/*.tmp", anchored: true},
		{pattern: "**/cache/**", anchored: true}, {pattern: "keep.log", negate: true}, {base: "sub", pattern: "local.go"},
	}}
	for p, want := range map[string]bool{
		"a.log": true, "x/y/a.log": true, "keep.log": false, "docs/a.tmp": true, "other/docs/a.tmp": false,
		"a/cache/b/c.go": true, "sub/local.go": true, "local.go": false, "main.go": false,
	} {
		if got := ig.match(p, false); got != want {
			t.Errorf("%s: %v", p, got)
		}
	}
	if !ig.match("build", true) || ig.match("build", false) {
		t.Error("a trailing / matches directories only")
	}
}

func TestBlankComments(t *testing.T) {
	js := blankComments([]byte("a('/x') // b('/y')\n/* c('/z')\n*/ d(\"/w // not a comment\")"), "js")
	if strings.Contains(string(js), "/y") || strings.Contains(string(js), "/z") || !strings.Contains(string(js), "/w // not a comment") || bytes.Count(js, []byte("\n")) != 2 {
		t.Errorf("js: %q", js)
	}
	py := blankComments([]byte("x = '#not'  # comment\n\"\"\"doc\n@app.post('/x')\"\"\"\ny = 1"), "py")
	if strings.Contains(string(py), "comment") || strings.Contains(string(py), "@app") || !strings.Contains(string(py), "'#not'") {
		t.Errorf("py: %q", py)
	}
}

func FuzzScriptFile(f *testing.F) {
	f.Add([]byte("app.post('/a/send', h) // c\n/* x */ `t${1}`"), "js")
	f.Add([]byte("@app.post(\"/x\")\n'''doc'''\n# c"), "py")
	f.Add([]byte("=begin\nx\n=end\npost 'a/cancel'"), "rb")
	f.Fuzz(func(t *testing.T, src []byte, lang string) {
		if lang != "js" && lang != "py" && lang != "rb" {
			return
		}
		out := blankComments(src, lang)
		if len(out) != len(src) || bytes.Count(out, []byte("\n")) != bytes.Count(src, []byte("\n")) {
			t.Fatal("blanking changed the length or the line count")
		}
		e := &Findings{}
		scriptFile(e, "f", lang, src)
		dataFile(e, "f.json", src)
		goFile(e, "f.go", src)
		agentsFile("AGENTS.md", src)
	})
}

func FuzzIgnore(f *testing.F) {
	f.Add("**/a/*.go", "x/a/b.go")
	f.Add("[", "x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		globPath(pattern, p)
	})
}

// A session header read by a handler is evidence for 5.2; the same header
// read by a client's RoundTrip (the requests it sends) is not.
func TestSessionHeaderOnlyInHandlers(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"handler", `package p
import "net/http"
func serve(w http.ResponseWriter, r *http.Request) { _ = r.Header.Get("Mcp-Session-Id") }`, 1},
		{"round tripper", `package p
import "net/http"
type tr struct{}
func (tr) RoundTrip(req *http.Request) (*http.Response, error) { _ = req.Header.Get("Mcp-Session-Id"); return nil, nil }`, 0},
		{"client helper", `package p
import "net/http"
func send(req *http.Request) (*http.Response, error) { _ = req.Header.Get("Mcp-Session-Id"); return http.DefaultClient.Do(req) }`, 0},
	} {
		e := &Findings{}
		goFile(e, "p.go", []byte(c.src))
		if len(e.SessionHeaders) != c.want {
			t.Errorf("%s: %d session-header hits, want %d", c.name, len(e.SessionHeaders), c.want)
		}
	}
}

// What a walk skipped reads as words, the largest count first, every
// reason with its own noun.
func TestSkippedInWords(t *testing.T) {
	s := Skipped{skipTestFile: 136, skipExcluded: 12, skipBinary: 2, skipGenerated: 1, skipGitignored: 1, skipSymlink: 0}
	want := `136 test files, 12 excluded directories, 2 binary or "Code generated" files, 1 generated, minified or lock file and 1 gitignored path`
	if got := s.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (Skipped{skipTooDeep: 1}).String(); got != "1 directory nested too deep" {
		t.Errorf("one reason: %q", got)
	}
	if got := (Skipped{}).String(); got != "" {
		t.Errorf("nothing skipped: %q", got)
	}
	for _, r := range []string{skipUnreadable, skipSymlink, skipExcluded, skipTooDeep, skipGitignored, skipTestFile, skipGenerated, skipTooLarge, skipOverCap, skipBinary} {
		if n := skipNouns[r]; n[0] == "" || n[1] == "" {
			t.Errorf("reason %q has no noun", r)
		}
	}
}

// A tool name is judged by the one rule (mcpcard.ValidToolName) wherever a
// tool is found: an MCP tool in Go, in JavaScript or in a JSON tool file
// may have up to 128 characters, as the MCP specification allows.
func TestToolNamesFollowOneRule(t *testing.T) {
	long, tooLong := strings.Repeat("a", 100), strings.Repeat("a", 129)
	for _, c := range []struct {
		lang, name string
		valid      bool
	}{
		{"go", "search", true}, {"go", long, true}, {"go", tooLong, false}, {"go", "two words", false},
		{"js", "search", true}, {"js", long, true}, {"js", tooLong, false},
		{"json", "search", true}, {"json", long, true}, {"json", tooLong, false},
	} {
		e := &Findings{}
		switch c.lang {
		case "go":
			goFile(e, "t.go", []byte(`package p
var t = &mcp.Tool{Name: "`+c.name+`", Description: "Finds things."}`))
		case "js":
			scriptFile(e, "t.js", "js", []byte(`server.tool('`+c.name+`', 'Finds things.', {}, h)`))
		case "json":
			dataFile(e, "tools.json", []byte(`[{"name":"`+c.name+`","description":"Finds things.","inputSchema":{"type":"object"}}]`))
		}
		if len(e.Tools) != 1 {
			t.Errorf("%s %.20s: %d tools found", c.lang, c.name, len(e.Tools))
			continue
		}
		if got := e.Tools[0].Problem == ""; got != c.valid {
			t.Errorf("%s %.20s… (%d characters): valid %v (%q), want %v", c.lang, c.name, len(c.name), got, e.Tools[0].Problem, c.valid)
		}
	}
}
