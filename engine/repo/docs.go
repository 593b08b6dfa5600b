package repo

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/agentready/agentready/engine/parse/openapi"
)

// dataFile reads JSON/YAML/TOML/.env files: OpenAPI documents, tool
// definitions (MCP, OpenAI, Anthropic, Gemini) and sandbox configuration.
func dataFile(e *Findings, rel string, src []byte) {
	base := strings.ToLower(path.Base(rel))
	if strings.HasPrefix(base, ".env") || strings.HasSuffix(base, ".env") || strings.HasSuffix(base, ".toml") {
		configLines(e, rel, src)
		return
	}
	doc, err := openapi.Decode(src)
	if err != nil {
		return
	}
	root, ok := doc.(map[string]any)
	if ok && (root["openapi"] != nil || root["swagger"] != nil) {
		if spec, err := openapi.FromTree(root, nil); err == nil {
			for _, op := range spec.Operations {
				h := Hit{File: rel, Line: lineOf(src, op.Path), What: op.Method + " " + op.Path}
				e.addRoute(Route{Hit: h, Method: op.Method, Path: op.Path})
				for _, x := range op.Extensions {
					switch strings.ToLower(x) {
					case "x-consequence", "x-irreversible", "x-destructive", "x-side-effects", "x-requires-confirmation":
						e.add(&e.Consequence, Hit{File: rel, Line: lineOf(src, x), What: x + " on " + op.Method + " " + op.Path})
					}
				}
			}
		}
		return
	}
	toolsIn(e, rel, src, doc, 0)
	if ok && sandboxName.MatchString(rel) {
		e.add(&e.SandboxConfigs, Hit{File: rel, Line: 1, What: "sandbox configuration file"})
	} else if ok {
		for k := range root {
			if sandboxName.MatchString(k) {
				e.add(&e.SandboxConfigs, Hit{File: rel, Line: lineOf(src, k), What: "sandbox setting " + k})
			}
		}
	}
}

func lineOf(src []byte, needle string) int {
	i := bytes.Index(src, []byte(needle))
	if i < 0 {
		return 1
	}
	return bytes.Count(src[:i], []byte("\n")) + 1
}

func configLines(e *Findings, rel string, src []byte) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	n := 0
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, _, _ := strings.Cut(l, "=")
		if sandboxName.MatchString(k) || (sandboxName.MatchString(rel) && strings.Contains(l, "=")) {
			e.add(&e.SandboxConfigs, Hit{File: rel, Line: n, What: "sets " + strings.TrimSpace(k)})
		}
	}
}

// toolsIn finds tool definitions anywhere in a JSON/YAML tree.
func toolsIn(e *Findings, rel string, src []byte, v any, depth int) {
	if depth > 32 {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, el := range x {
			toolsIn(e, rel, src, el, depth+1)
		}
	case map[string]any:
		if t, ok := toolDef(x); ok {
			t.Hit = Hit{File: rel, Line: lineOf(src, `"`+t.Name+`"`), What: t.Ecosystem + " tool " + t.Name}
			if t.Hit.Line == 1 {
				t.Hit.Line = lineOf(src, t.Name)
			}
			e.addTool(t)
			if ann, ok := x["annotations"].(map[string]any); ok {
				if _, d := ann["destructiveHint"]; d {
					e.add(&e.Consequence, Hit{File: rel, Line: lineOf(src, "destructiveHint"), What: "destructiveHint on " + t.Name})
				}
			}
			return
		}
		for _, el := range x {
			toolsIn(e, rel, src, el, depth+1)
		}
	}
}

// toolDef recognises one tool definition and says whether it is valid, by
// the one rule agentready has for that (mcpcard.ReadToolDef, which the deep
// scan also applies to a site's declared tool schemas).
func toolDef(m map[string]any) (ToolDef, bool) {
	d, shaped := mcpcard.ReadToolDef(m)
	if !shaped {
		return ToolDef{}, false
	}
	return ToolDef{Ecosystem: d.Ecosystem, Name: d.Name, Problem: d.Problem}, true
}

// AgentsDoc is what AGENTS.md covers.
type AgentsDoc struct {
	File     string
	Bytes    int
	Sections map[string]int // build, test, conventions → line
}

var (
	mdHeading   = regexp.MustCompile(`^#{1,6}\s+(.+)$`)
	buildWords  = regexp.MustCompile(`(?i)\b(build|install|setup|set up|getting started|develop|run|quick ?start)`)
	testWords   = regexp.MustCompile(`(?i)\b(test|testing|tests|ci)\b`)
	conventions = regexp.MustCompile(`(?i)\b(convention|style|guideline|standard|lint|format|architecture|layout|structure|rules|review)`)
	buildCmd    = regexp.MustCompile(`(?m)^\s*(?:\$ )?(make|go build|npm (?:ci|install|run build)|cargo build|pip install|mvn|gradle)\b`)
	testCmd     = regexp.MustCompile(`(?m)^\s*(?:\$ )?(make test|go test|npm test|pytest|cargo test|mvn test)\b`)
)

func agentsFile(rel string, src []byte) *AgentsDoc {
	d := &AgentsDoc{File: rel, Bytes: len(src), Sections: map[string]int{}}
	for i, l := range strings.Split(string(src), "\n") {
		m := mdHeading.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		for name, re := range map[string]*regexp.Regexp{"build": buildWords, "test": testWords, "conventions": conventions} {
			if _, seen := d.Sections[name]; !seen && re.MatchString(m[1]) {
				d.Sections[name] = i + 1
			}
		}
	}
	if _, ok := d.Sections["build"]; !ok && buildCmd.Match(src) {
		d.Sections["build"] = lineOf(src, buildCmd.FindString(string(src)))
	}
	if _, ok := d.Sections["test"]; !ok && testCmd.Match(src) {
		d.Sections["test"] = lineOf(src, testCmd.FindString(string(src)))
	}
	return d
}
