package clip

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mark ends a string that was cut.
const Mark = "…"

// To returns s with control characters replaced by spaces and invalid UTF-8
// by U+FFFD, cut to at most n runes: a longer s keeps its first n-1 runes
// and ends with Mark, so the result is never longer than n runes.
func To(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return cut(printable(s), n)
}

// Quote returns s cut to at most n runes as To cuts it, in double quotes and
// Go-escaped (strconv.Quote): how a message quotes a name the site chose.
// Unlike To it keeps control characters and invalid bytes, as escapes, so a
// name's stray newline or bad byte shows ("t0\n") and the result is still
// one line.
func Quote(s string, n int) string {
	if n <= 0 {
		return `""`
	}
	return strconv.Quote(cut(s, n))
}

// cut keeps the first n-1 runes of a string longer than n runes and ends it
// with Mark (an invalid byte counts as one rune).
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, kept := 0, 0
	for kept < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return s[:i] + Mark
}

// Bytes returns the longest prefix of s that is at most n bytes and ends on
// a rune boundary: a byte cap (what a parser keeps of a page's text) that
// never splits a UTF-8 sequence. Nothing marks the cut.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// printable replaces control characters (C0, DEL, C1) with a space and each
// invalid UTF-8 byte with U+FFFD (strings.Map does both, and returns a clean
// s without copying it).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return ' '
		}
		return r
	}, s)
}
