// Package mdtext writes text that scanned sites chose (titles, names, URLs,
// and the messages that quote them) into markdown so that it stays text. A
// site's llms.txt title of `[click](https://attacker.example)` or
// `<img src=x onerror=alert(1)>` must not become a link, an image or HTML in
// a report someone renders with a common markdown library, and bidi and
// zero-width characters must not silently reorder or hide what a reader sees.
//
// The edge (the report's markdown twin and its Evidence blocks) and the MCP
// server (its tool results' text) share it; it depends on the standard
// library only, so the WebAssembly edge can carry it.
package mdtext

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s as inline markdown that CommonMark and GitHub Flavored
// Markdown render as s itself: whitespace runs collapsed to one space (a
// site's newline must not start a block of its own), control, format (bidi,
// zero-width) and line-separator characters shown as \uXXXX escapes (see
// Visible), and nothing a markdown parser acts on left unescaped.
//
// Only what can start markup is escaped, so that the report stays readable
// as plain text: \ [ ] < > * _ ~ | # ! & $ { } everywhere, a backtick as the
// entity &#96; (a backslash-escaped backtick next to a code span of ours
// would be read as part of its fence), and - + = : or a "1." / "1)" list
// marker only where they would begin a line. ( ) and . stay as they are:
// with [ ] and < > escaped, they cannot form a link, an image or an autolink.
// A word that a GFM renderer would autolink on its own (it has "://",
// "www." or "@") is put in a code span, whose content no renderer links.
//
// The result may follow our own text on a line or begin one; it is at most
// a few times as long as s.
func Text(s string) string { return escape(s, false) }

// Message is Text for the report's own sentences that quote what a site
// chose (check messages, recommendations, fixes): a pair of backticks in
// them is a code span, the convention the HTML page's inlineCode follows
// too, and the rest is escaped as Text escapes it. A backtick a site slipped
// in can at worst turn some text into code, which is inert; an unpaired one
// is shown as it is. Escaping the whole message, rather than the site's part
// alone, is what is possible here: the report reaches the edge as finished
// sentences, and which words in them a site chose is no longer known.
func Message(s string) string { return escape(s, true) }

func escape(s string, codeSpans bool) string {
	s = strings.Join(strings.Fields(s), " ")
	var w writer
	w.out.Grow(len(s) + len(s)/4)
	w.leadingDigits = true
	parts := []string{s}
	if codeSpans {
		parts = strings.Split(s, "`")
	}
	for i, p := range parts {
		if codeSpans && i%2 == 1 {
			if i < len(parts)-1 {
				w.addCode(p)
				continue
			}
			w.addText("`")
		}
		for j, word := range strings.Split(p, " ") {
			if j > 0 {
				w.addText(" ")
			}
			w.addWord(word)
		}
	}
	w.flushCode()
	out := w.out.String()
	if strings.HasSuffix(out, " ") {
		// Two spaces before a line's end are a hard line break, and one is
		// dropped: the last one is written as an entity, kept as text.
		out = out[:len(out)-1] + "&#32;"
	}
	return out
}

// writer builds the escaped text. Code runs are held back and merged: two
// code spans written next to each other would read as one longer fence.
type writer struct {
	out         strings.Builder
	pendingCode strings.Builder // the code span being gathered
	// leadingDigits: everything written so far is ASCII digits (or nothing),
	// so a "." or ")" now would make an ordered-list marker at a line start.
	leadingDigits bool
}

// linkLike: the word has what GFM's extended autolinks (cmark-gfm on
// GitHub, goldmark's Linkify) start from; case is ignored to be safe.
func linkLike(word string) bool {
	lower := strings.ToLower(word)
	return strings.Contains(lower, "://") || strings.Contains(lower, "www.") || strings.Contains(word, "@")
}

func (w *writer) addWord(word string) {
	if !linkLike(word) {
		w.addText(word)
		return
	}
	// Punctuation around a URL in a sentence stays outside its code span.
	start := 0
	for start < len(word) && strings.IndexByte(`("'<[`, word[start]) >= 0 {
		start++
	}
	end := len(word)
	for end > start && strings.IndexByte(`.,;:!?)"'>]`, word[end-1]) >= 0 {
		end--
	}
	w.addText(word[:start])
	w.addCode(word[start:end])
	w.addText(word[end:])
}

func (w *writer) addCode(s string) {
	for _, r := range s {
		if invisible(r) {
			writeEscape(&w.pendingCode, r)
		} else {
			w.pendingCode.WriteRune(r) // an invalid byte is written as U+FFFD
		}
	}
}

func (w *writer) flushCode() {
	c := w.pendingCode.String()
	if c == "" {
		return
	}
	w.pendingCode.Reset()
	w.leadingDigits = false
	run, longest := 0, 0
	for i := 0; i < len(c); i++ {
		if c[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	// CommonMark strips one space from each end of a code span that both
	// begins and ends with one, and a backtick at either end would join the
	// fence: a space of padding on each side keeps the content exact.
	pad := ""
	if c[0] == '`' || c[len(c)-1] == '`' || (c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "") {
		pad = " "
	}
	w.out.WriteString(fence + pad + c + pad + fence)
}

func (w *writer) addText(s string) {
	if s == "" {
		return
	}
	w.flushCode()
	prev := ' '
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+size:])
		w.addRune(r, prev, next)
		prev = r
		i += size
	}
}

func (w *writer) addRune(r, prev, next rune) {
	atStart := w.out.Len() == 0
	digits := w.leadingDigits
	w.leadingDigits = digits && r >= '0' && r <= '9'
	switch {
	case invisible(r):
		writeEscape(&w.out, r)
	case r == ' ' && atStart:
		// Leading spaces would be dropped, or indent the line into a code
		// block; an entity is text.
		w.out.WriteString("&#32;")
	case r == '`':
		w.out.WriteString("&#96;")
	case r == '_' && asciiAlnum(prev) && asciiAlnum(next):
		// An underscore inside a word opens and closes no emphasis, and
		// snake_case names are common in what sites declare.
		w.out.WriteByte('_')
	case strings.ContainsRune(`\[]<>*_~|#!&${}`, r),
		atStart && strings.ContainsRune("-+=:", r),
		digits && !atStart && (r == '.' || r == ')'):
		w.out.WriteByte('\\')
		w.out.WriteRune(r)
	default:
		w.out.WriteRune(r)
	}
}

func asciiAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// invisible: the characters a reader cannot see, or that change what the
// text around them looks like: controls (but tab and line breaks, which
// evidence keeps), format characters (bidi embeddings, overrides and
// isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and
// U+061C, zero-width U+200B–U+200D, U+2060, U+FEFF, the invisible tag
// characters U+E0000–U+E007F that can smuggle text to a model) and the
// Unicode line and paragraph separators.
func invisible(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r > 0xff && unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == 0xad
}

// Visible returns s with every invisible character written as a \uXXXX
// escape (a surrogate pair beyond the BMP), and an invalid UTF-8 byte as
// U+FFFD. The escapes are JSON's: evidence that is JSON stays JSON that
// decodes to the same text.
func Visible(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, invisible) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 12)
	for _, r := range s {
		if invisible(r) {
			writeEscape(&b, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func writeEscape(b *strings.Builder, r rune) {
	var buf [12]byte
	b.Write(appendEscape(buf[:0], r))
}

// appendEscape appends r escaped as JSON escapes it: \uXXXX, or a surrogate
// pair beyond the BMP.
func appendEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		return appendU(appendU(dst, 0xd800+r>>10), 0xdc00+r&0x3ff)
	}
	return appendU(dst, r)
}

func appendU(dst []byte, r rune) []byte {
	const hex = "0123456789ABCDEF"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// JSON returns data, a JSON text, compacted onto one line and with every
// character of its strings that markdown acts on ([ ] < > & and the
// backtick) or that is invisible written as a \uXXXX escape. It decodes to
// the same value, but a client that renders it as markdown shows no link,
// image, code span or HTML a site chose, and shows bidi and zero-width
// characters as escapes. (Emphasis may still render, which hides nothing; a
// bare URL that a GFM renderer autolinks shows the URL itself.) Anything that
// is not valid JSON is returned as it is.
func JSON(data []byte) []byte {
	if !json.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data)+len(data)/8)
	inString := false
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case !inString:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				out = append(out, c)
			}
			inString = c == '"'
			i++
		case c == '"':
			out = append(out, c)
			inString = false
			i++
		case c == '\\':
			// An escape is copied as it is; the hex digits of a \u escape
			// are never markdown.
			out = append(out, c, data[i+1])
			i += 2
		default:
			r, size := utf8.DecodeRune(data[i:])
			if strings.ContainsRune("[]<>&`", r) || invisible(r) || r == utf8.RuneError {
				out = appendEscape(out, r) // an invalid byte decodes as it would: U+FFFD
			} else {
				out = append(out, data[i:i+size]...)
			}
			i += size
		}
	}
	return out
}
