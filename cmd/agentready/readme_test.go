package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

var updateREADME = flag.Bool("update", false, "rewrite the generated examples in README.md (make docs)")

// The README's example outputs come from real runs of the CLI (pasted
// output had drifted, line numbers and all). Each lives
// between <!-- example:NAME … --> and <!-- /example -->; -update rewrites them.
var exampleBlock = regexp.MustCompile("(?s)(<!-- example:([a-z-]+) [^\n]*-->\n)(.*?)(<!-- /example -->)")

var generators = map[string]func(t *testing.T) string{
	"scan-peer": examplePeerScan,
	"repo-self": exampleRepoSelf,
}

// The fixture server picks a free port; the README shows this one.
const readmeSiteURL = "http://127.0.0.1:8765"

func examplePeerScan(t *testing.T) string {
	url := site(t, "peer")
	code, out, stderr := runCLI("scan", url)
	if code != exitOK {
		t.Fatalf("scan of the peer site: exit %d: %s", code, stderr)
	}
	return excerpt(strings.ReplaceAll(out, url, readmeSiteURL), map[string]bool{"1.1": true, "1.2": true, "1.3": true, "1.12": true})
}

// readmeRepoPath stands for wherever the repository is checked out.
const readmeRepoPath = "/path/to/agentready"

func exampleRepoSelf(t *testing.T) string {
	root := testenv.RepoRoot()
	code, out, stderr := runCLI("repo", root)
	if code != exitOK {
		t.Fatalf("repo scan of this repository: exit %d: %s", code, stderr)
	}
	out = strings.ReplaceAll(out, root, readmeRepoPath)
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !regexp.MustCompile(`^\d+ files read in `).MatchString(l) { // the file count and time change with every commit
			keep = append(keep, l)
		}
	}
	return strings.TrimRight(strings.Join(keep, "\n"), "\n") + "\n"
}

var checkLine = regexp.MustCompile(`^  \S+ (\d+\.\d+) `)

// excerpt keeps the report's header, level 1's heading, the checks in keep
// (with their recommendations) and the closing line, with "  …" where
// anything was left out.
func excerpt(out string, keep map[string]bool) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var res []string
	elided, kept := false, false
	elide := func() {
		if !elided {
			res = append(res, "  …")
			elided = true
		}
	}
	i := 0
	for ; i < len(lines) && lines[i] != ""; i++ {
		res = append(res, lines[i])
	}
	signals := false // inside the signals, profile, across-checks or read-suite section, each kept whole
	for ; i < len(lines); i++ {
		l := lines[i]
		switch m := checkLine.FindStringSubmatch(l); {
		case l == "":
			signals = false
		case l == signalsHeading, l == "Profile", l == "Across checks", strings.HasPrefix(l, "Read suite"):
			// Kept whole, as the signals are.
			res = append(res, "", l)
			signals, elided = true, false
		case signals:
			res = append(res, l)
		case strings.HasPrefix(l, "Level 1 "):
			res = append(res, "", l)
			elided = false
		case strings.HasPrefix(l, "Level "):
			kept = false
			elide()
		case m != nil:
			if kept = keep[m[1]]; kept {
				res = append(res, l)
				elided = false
			} else {
				elide()
			}
		case strings.HasPrefix(strings.TrimSpace(l), "→"):
			if kept {
				res = append(res, l)
			}
		default: // the closing "N requests in N rounds, time"
			res = append(res, "", l)
		}
	}
	return strings.Join(res, "\n") + "\n"
}

// What changes from run to run, not with the code: durations; and what
// changes with unrelated edits: line numbers of evidence. Both are compared
// as placeholders; -update writes the real values of the run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?m)(, )\d+(\.\d+)?(ns|µs|ms|s)$`), "${1}<time>"},
	{regexp.MustCompile(`(?m)(\.[a-z]+:)\d+\)$`), "${1}<line>)"},
}

func mask(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

func readmePath() string { return filepath.Join(testenv.RepoRoot(), "README.md") }

func TestREADMEExamples(t *testing.T) {
	b, err := os.ReadFile(readmePath())
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	seen := map[string]bool{}
	var failed bool
	updated := exampleBlock.ReplaceAllStringFunc(readme, func(block string) string {
		m := exampleBlock.FindStringSubmatch(block)
		name := m[2]
		gen := generators[name]
		if gen == nil {
			t.Errorf("README.md has an example %q that nothing generates", name)
			return block
		}
		seen[name] = true
		fresh := "```text\n" + gen(t) + "```\n"
		if mask(fresh) != mask(m[3]) {
			failed = true
			if !*updateREADME {
				t.Errorf("README.md's example %q no longer matches a real run; run `make docs` (go test ./cmd/agentready -run TestREADMEExamples -update). A run prints:\n%s", name, fresh)
			}
		}
		return m[1] + fresh + m[4]
	})
	for name := range generators {
		if !seen[name] {
			t.Errorf("README.md lacks the example %q (<!-- example:%s … --> … <!-- /example -->)", name, name)
		}
	}
	if *updateREADME && failed {
		if err := os.WriteFile(readmePath(), []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("README.md examples rewritten")
	}
}

// Docs a user copies from: no path of the machine they were written on, and
// commands in plain ASCII (a "…" pasted into a header made the request fail).
func TestDocsCopyable(t *testing.T) {
	root := testenv.RepoRoot()
	localPath := regexp.MustCompile("(^|[\\s(`'\"=])/(home|Users|root|work|tmp|var/folders|private/var)/")
	for _, rel := range []string{"README.md", "docs/ci.md"} {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for n, line := range strings.Split(text, "\n") {
			if (len(root) > 1 && strings.Contains(line, root)) || localPath.MatchString(line) {
				t.Errorf("%s:%d shows a local absolute path: %s", rel, n+1, line)
			}
		}
		for _, c := range docCommands(text) {
			if i := strings.IndexFunc(c.text, func(r rune) bool { return r > 0x7e || (r < 0x20 && r != '\t') }); i >= 0 {
				t.Errorf("%s:%d: the command has a non-ASCII %q that breaks it when copied: %s", rel, c.line, []rune(c.text[i:])[0], c.text)
			}
		}
	}
}

type command struct {
	line int
	text string
}

// commandStart is how a command in an inline code span begins.
var commandStart = regexp.MustCompile(`^(make|bin/agentready|agentready|curl|go|npm|wrangler|[A-Z_]+=\S*)( |$)`)

// docCommands are the lines of sh/bash/console code blocks (comments cut off)
// and inline code spans that start like a command.
func docCommands(md string) []command {
	var out []command
	inBlock, shell := false, false
	for n, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			if !inBlock {
				lang := strings.TrimSpace(strings.TrimPrefix(line, "```"))
				shell = lang == "sh" || lang == "bash" || lang == "console" || lang == "shell"
			}
			inBlock = !inBlock
			continue
		}
		if inBlock {
			if shell {
				if c := strings.TrimSpace(cutComment(line)); c != "" {
					out = append(out, command{n + 1, c})
				}
			}
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
			if commandStart.MatchString(m[1]) {
				out = append(out, command{n + 1, m[1]})
			}
		}
	}
	return out
}

// cutComment drops a shell comment: " #" outside quotes.
func cutComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}
