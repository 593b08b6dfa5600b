package repo

import (
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/parse/mcpcard"
)

// blankComments replaces comments with spaces (keeping newlines, so line
// numbers stay right) and keeps string literals, for JavaScript/TypeScript
// (`//`, `/* */`), Python (`#`, and triple-quoted strings, which are docstrings
// or prose far more often than routes) and Ruby (`#`, =begin/=end).
func blankComments(src []byte, lang string) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(i, j int) {
		for k := i; k < j && k < len(out); k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case lang == "js" && c == '/' && i+1 < n && src[i+1] == '/',
			(lang == "py" || lang == "rb") && c == '#':
			j := i
			for j < n && src[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
		case lang == "js" && c == '/' && i+1 < n && src[i+1] == '*':
			j := i + 2
			for j+1 < n && !(src[j] == '*' && src[j+1] == '/') {
				j++
			}
			blank(i, j+2)
			i = j + 2
		case lang == "rb" && c == '=' && (i == 0 || src[i-1] == '\n') && strings.HasPrefix(string(src[i:min(n, i+6)]), "=begin"):
			j := strings.Index(string(src[i:]), "\n=end")
			if j < 0 {
				j = n - i
			}
			blank(i, i+j+5)
			i += j + 5
		case lang == "py" && (c == '"' || c == '\'') && i+2 < n && src[i+1] == c && src[i+2] == c:
			q := string([]byte{c, c, c})
			j := strings.Index(string(src[i+3:]), q)
			end := n
			if j >= 0 {
				end = i + 3 + j + 3
			}
			blank(i, end)
			i = end
		case c == '"' || c == '\'' || (lang == "js" && c == '`'):
			j := i + 1
			for j < n && src[j] != c && !(c != '`' && src[j] == '\n') {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		default:
			i++
		}
	}
	return out
}

var (
	jsRoute   = regexp.MustCompile(`\b(?:app|router|server|fastify|api|r|route|routes|hono|v1)\.(get|post|put|patch|delete|all)\(\s*['"` + "`" + `](/[^'"` + "`" + `\s]*)`)
	pyRoute   = regexp.MustCompile(`@\s*\w+(?:\.\w+)*\.(get|post|put|patch|delete|route|api_route)\(\s*['"](/[^'"]*)['"]`)
	djRoute   = regexp.MustCompile(`\b(?:re_)?path\(\s*r?['"]\^?([^'"]+)['"]`)
	rbRoute   = regexp.MustCompile(`^\s*(get|post|put|patch|delete|match)\s+['"]([^'"]+)['"]`)
	rbMember  = regexp.MustCompile(`^\s*(post|put|patch|delete)\s+:(\w+)`)
	hdrRead   = regexp.MustCompile(`(?i)(?:headers?\s*\[\s*|\.(?:get|header|getHeader)\(\s*)['"]([\w-]+)['"]`)
	envRead   = regexp.MustCompile(`(?:process\.env\.|process\.env\[['"]|os\.getenv\(\s*['"]|os\.environ(?:\.get\(\s*|\[\s*)['"]|ENV\[['"]|ENV\.fetch\(['"])(\w+)`)
	scopeCall = regexp.MustCompile(`\b(require|check|has|enforce|verify|ensure)_?[Ss]copes?\s*\(`)
	tokenObj  = regexp.MustCompile(`access_token['"]?\s*[:=]`)
	scopeKey  = regexp.MustCompile(`['"]?\bscope['"]?\s*[:=]`)
	jsHmac    = regexp.MustCompile(`createHmac\(|hmac\.new\(|OpenSSL::HMAC|hmac\.compare_digest|HMAC\(`)
	sigHeader = regexp.MustCompile(`(?i)['"][\w-]*signature[\w-]*['"]`)
	tsHeader  = regexp.MustCompile(`(?i)['"][\w-]*timestamp[\w-]*['"]|['"]t=|t=\$\{|f['"]t=\{`)
	logCall   = regexp.MustCompile(`\b(?:logger|log|audit|auditLog|logging|Rails\.logger)\.(?:info|warn|warning|error|debug|log|record)\(`)
	jsConseq  = regexp.MustCompile(`\b(destructiveHint|readOnlyHint|x-consequence|x-irreversible|requiresConfirmation|confirmation_required)\b`)
	jsMCPTool = regexp.MustCompile(`\.(?:tool|registerTool)\(\s*['"]([\w.-]+)['"]\s*,\s*(?:['"]([^'"]*)['"]|\{)`)
	pyMCPTool = regexp.MustCompile(`@\s*\w+\.tool\(`)
	pyLCTool  = regexp.MustCompile(`^\s*@tool\b|StructuredTool\.from_function\(`)
	postHook  = regexp.MustCompile(`(?i)(fetch|axios\.post|requests\.post|httpx\.post|Net::HTTP\.post)\(\s*[\w.]*(callback|webhook|hook)`)
)

var identityWord = regexp.MustCompile(`\b(agentId|agent_id|clientId|client_id|actorId|actor_id|actor|caller|principal)\b`)
var actionWord = regexp.MustCompile(`\b(action|event|operation|op|tool)\b`)

// scriptFile extracts evidence from JavaScript/TypeScript, Python or Ruby.
func scriptFile(e *Findings, rel, lang string, src []byte) {
	clean := string(blankComments(src, lang))
	lines := strings.Split(clean, "\n")
	isRoutesRb := strings.HasSuffix(rel, "config/routes.rb")
	fileHmac, fileSig, fileTS := -1, -1, -1
	for i, l := range lines {
		n := i + 1
		h := func(what string) Hit { return Hit{File: rel, Line: n, What: what} }
		if strings.TrimSpace(l) == "" {
			continue
		}
		switch lang {
		case "js":
			for _, m := range jsRoute.FindAllStringSubmatch(l, -1) {
				e.addRoute(Route{Hit: h(m[1] + " " + m[2]), Method: strings.ToUpper(m[1]), Path: m[2]})
			}
			if m := jsMCPTool.FindStringSubmatch(l); m != nil {
				t := ToolDef{Hit: h("tool " + m[1]), Ecosystem: "mcp", Name: m[1]}
				if !mcpcard.ValidToolName(t.Ecosystem, m[1]) {
					t.Problem = "invalid tool name"
				}
				e.addTool(t)
			}
		case "py":
			for _, m := range pyRoute.FindAllStringSubmatch(l, -1) {
				e.addRoute(Route{Hit: h(m[1] + " " + m[2]), Method: strings.ToUpper(m[1]), Path: m[2]})
			}
			if strings.Contains(rel, "urls") {
				for _, m := range djRoute.FindAllStringSubmatch(l, -1) {
					e.addRoute(Route{Hit: h("path " + m[1]), Path: "/" + strings.TrimPrefix(strings.TrimSuffix(m[1], "$"), "/")})
				}
			}
			if pyMCPTool.MatchString(l) {
				e.addTool(ToolDef{Hit: h("@tool"), Ecosystem: "mcp", Name: "(decorated)"})
			}
			if pyLCTool.MatchString(l) {
				e.addTool(ToolDef{Hit: h("LangChain tool"), Ecosystem: "langchain", Name: "(decorated)"})
			}
		case "rb":
			if isRoutesRb {
				if m := rbRoute.FindStringSubmatch(l); m != nil {
					e.addRoute(Route{Hit: h(m[1] + " " + m[2]), Method: strings.ToUpper(m[1]), Path: "/" + strings.TrimPrefix(m[2], "/")})
				} else if m := rbMember.FindStringSubmatch(l); m != nil {
					e.addRoute(Route{Hit: h(m[1] + " :" + m[2]), Method: strings.ToUpper(m[1]), Path: "/:id/" + m[2]})
				}
			}
		}
		for _, m := range hdrRead.FindAllStringSubmatch(l, -1) {
			if sessionHeaderNames[strings.ToLower(m[1])] {
				e.add(&e.SessionHeaders, h("reads header "+m[1]))
			}
		}
		for _, m := range envRead.FindAllStringSubmatch(l, -1) {
			if sandboxName.MatchString(m[1]) {
				e.add(&e.SandboxReads, h("reads "+m[1]))
			}
		}
		if m := scopeCall.FindString(l); m != "" {
			e.add(&e.ScopeEnforce, h("calls "+strings.TrimSuffix(strings.TrimSpace(m), "(")))
		}
		if tokenObj.MatchString(l) && scopeKey.MatchString(l) {
			e.add(&e.ScopeIssue, h("token response with scope"))
		}
		if logCall.MatchString(l) && identityWord.MatchString(l) && actionWord.MatchString(l) {
			e.add(&e.AuditLogs, h("log with "+identityWord.FindString(l)))
		}
		if m := jsConseq.FindString(l); m != "" {
			e.add(&e.Consequence, h(m))
		}
		if jsHmac.MatchString(l) && fileHmac < 0 {
			fileHmac = n
		}
		if sigHeader.MatchString(l) && fileSig < 0 {
			fileSig = n
		}
		if tsHeader.MatchString(l) && fileTS < 0 {
			fileTS = n
		}
		if postHook.MatchString(l) {
			e.add(&e.Unsigned, h("posts to a callback"))
		}
	}
	if fileHmac > 0 && fileSig > 0 {
		e.add(&e.Signed, Hit{File: rel, Line: fileSig, What: "HMAC signature header"})
		if fileTS > 0 {
			e.add(&e.Timestamped, Hit{File: rel, Line: fileTS, What: "signature timestamp"})
		}
	}
}
