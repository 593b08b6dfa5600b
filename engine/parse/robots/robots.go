package robots

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// MaxBytes is how much of a robots.txt is read (RFC 9309 §2.5 requires at least 500 KiB).
const MaxBytes = 500 << 10

// Rule is one allow or disallow line.
type Rule struct {
	Allow   bool
	Pattern string
	Line    int
}

// Group is one or more user-agent lines followed by their records.
type Group struct {
	Agents         []string // as written
	Rules          []Rule
	ContentSignals []Signal
	Line           int
}

// Signal is one Content-Signal record.
type Signal struct {
	Raw   string
	Pairs map[string]string // lower-cased key -> lower-cased value, well-formed pairs only
	Bad   []string          // items that are not key=value or have an unknown key or value
	Line  int
}

// Valid reports a record with at least one known key set to yes or no.
func (s Signal) Valid() bool { return len(s.Pairs) > 0 }

// File is a parsed robots.txt.
type File struct {
	Groups   []*Group
	Sitemaps []string
	// Signals outside any group (before the first user-agent line).
	LooseSignals []Signal
}

var knownSignals = map[string]bool{"search": true, "ai-input": true, "ai-train": true}

// Parse reads a robots.txt body. It never fails: lines it cannot read are ignored,
// as RFC 9309 asks of crawlers.
func Parse(body []byte) *File {
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	f := &File{}
	var cur *Group
	agentsOpen := false // the current group still collects user-agent lines
	for i, raw := range bytes.Split(body, []byte("\n")) {
		lineNo := i + 1
		line := string(raw)
		if !utf8.ValidString(line) {
			line = strings.ToValidUTF8(line, "\uFFFD")
		}
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" {
			continue
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(line[:colon]))
		val := strings.TrimSpace(line[colon+1:])
		switch key {
		case "user-agent", "useragent", "user agent":
			if cur == nil || !agentsOpen {
				cur = &Group{Line: lineNo}
				f.Groups = append(f.Groups, cur)
				agentsOpen = true
			}
			cur.Agents = append(cur.Agents, val)
		case "allow", "disallow":
			agentsOpen = false
			if cur == nil || val == "" {
				continue // a rule outside a group, or an empty Disallow (no rule)
			}
			cur.Rules = append(cur.Rules, Rule{Allow: key == "allow", Pattern: val, Line: lineNo})
		case "sitemap":
			if val != "" {
				f.Sitemaps = append(f.Sitemaps, val)
			}
		case "content-signal":
			s := parseSignal(val, lineNo)
			if cur == nil {
				f.LooseSignals = append(f.LooseSignals, s)
			} else {
				agentsOpen = false
				cur.ContentSignals = append(cur.ContentSignals, s)
			}
		default:
			// crawl-delay, host, clean-param…: not access rules, but they do end the
			// run of user-agent lines.
			if cur != nil {
				agentsOpen = false
			}
		}
	}
	return f
}

func parseSignal(val string, line int) Signal {
	s := Signal{Raw: val, Pairs: map[string]string{}, Line: line}
	for _, item := range strings.Split(val, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.ToLower(strings.TrimSpace(v))
		if !ok || !knownSignals[k] || (v != "yes" && v != "no") {
			s.Bad = append(s.Bad, item)
			continue
		}
		s.Pairs[k] = v
	}
	return s
}

// productToken is the leading run of [A-Za-z_-] of a user-agent line value.
func productToken(s string) string {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-') {
			return s[:i]
		}
	}
	return s
}

// Names reports whether a user-agent line value names the token.
func Names(lineValue, token string) bool {
	v := strings.TrimSpace(lineValue)
	if v == "*" || v == "" {
		return false
	}
	return strings.EqualFold(v, token) || strings.EqualFold(productToken(v), token)
}

// IsStar reports a `*` user-agent line.
func IsStar(lineValue string) bool { return strings.TrimSpace(lineValue) == "*" }

// GroupsFor returns the groups that govern token: every group naming it
// (merged, RFC 9309 §2.2.1), else every `*` group. explicit reports the first case.
func (f *File) GroupsFor(token string) (groups []*Group, explicit bool) {
	for _, g := range f.Groups {
		for _, a := range g.Agents {
			if Names(a, token) {
				groups = append(groups, g)
				break
			}
		}
	}
	if len(groups) > 0 {
		return groups, true
	}
	for _, g := range f.Groups {
		for _, a := range g.Agents {
			if IsStar(a) {
				groups = append(groups, g)
				break
			}
		}
	}
	return groups, false
}

// NamesExplicitly reports whether some group names the token.
func (f *File) NamesExplicitly(token string) bool {
	_, explicit := f.GroupsFor(token)
	return explicit
}

// Decision is the verdict for one token and path.
type Decision struct {
	Allowed  bool
	Explicit bool  // decided by a group naming the token
	Rule     *Rule // nil when no rule matched (allowed)
}

// Check evaluates path for token: longest match wins, allow wins ties, no match allows.
func (f *File) Check(token, path string) Decision {
	groups, explicit := f.GroupsFor(token)
	d := Decision{Allowed: true, Explicit: explicit}
	if path == "/robots.txt" {
		return d
	}
	p := normalizePath(path)
	best := -1
	for _, g := range groups {
		for i := range g.Rules {
			r := &g.Rules[i]
			pat := normalizePath(r.Pattern)
			if !match(pat, p) {
				continue
			}
			n := len(pat)
			if n > best || (n == best && r.Allow && !d.Allowed) {
				best = n
				d.Allowed = r.Allow
				d.Rule = r
			}
		}
	}
	return d
}

const hexDigits = "0123456789ABCDEF"

// normalizePath upper-cases percent escapes and decodes those of unreserved
// characters, so equivalent spellings compare equal (RFC 9309 §2.2.2).
func normalizePath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hexDigits[v>>4])
				b.WriteByte(hexDigits[v&15])
			}
			i += 2
			continue
		}
		if c >= 0x80 || c == ' ' {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// match reports whether pattern (with * wildcards and a trailing $ anchor)
// matches a prefix of path, or all of it when anchored. It runs in
// O(len(pattern)·len(path)) with no recursion, so hostile patterns stay cheap.
func match(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// cur[j] = pattern[:i] can match path[:j]
	cur := make([]bool, len(path)+1)
	next := make([]bool, len(path)+1)
	cur[0] = true
	for i := 0; i < len(pattern); i++ {
		for j := range next {
			next[j] = false
		}
		if pattern[i] == '*' {
			seen := false
			for j := 0; j <= len(path); j++ {
				seen = seen || cur[j]
				next[j] = seen
			}
		} else {
			for j := 0; j < len(path); j++ {
				if cur[j] && path[j] == pattern[i] {
					next[j+1] = true
				}
			}
		}
		cur, next = next, cur
	}
	if anchored {
		return cur[len(path)]
	}
	for _, ok := range cur {
		if ok {
			return true
		}
	}
	return false
}
