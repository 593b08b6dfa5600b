package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTo(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		// Multibyte text is cut by runes: a byte cut at 10 would land inside
		// the fourth character (3 bytes each) and split its UTF-8 sequence.
		{"日本語のテキストです", 5, "日本語の…"},
		{"café crème brûlée", 6, "café …"},
		{"👍👍👍", 2, "👍…"},
		{"line one\nline two\ttab", 40, "line one line two tab"},
		{"nul\x00and\x7fdel\u0085c1", 40, "nul and del c1"},
		{"bad \xff\xfe bytes", 40, "bad \uFFFD\uFFFD bytes"},
		{"anything", 0, ""},
		{"ab", 1, "…"},
	}
	for _, c := range cases {
		got := To(c.in, c.n)
		if got != c.want {
			t.Errorf("To(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(c.n, 0) {
			t.Errorf("To(%q, %d) = %q: invalid UTF-8 or longer than %d runes", c.in, c.n, got, c.n)
		}
	}
}

func TestQuote(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"search", 60, `"search"`},
		// A stray newline or bad byte stays visible, escaped, on one line.
		{"t0\n", 60, `"t0\n"`},
		{"bad\xffname", 60, `"bad\xffname"`},
		{"日本語のテキストです", 5, `"日本語の…"`},
		{"anything", 0, `""`},
	}
	for _, c := range cases {
		if got := Quote(c.in, c.n); got != c.want {
			t.Errorf("Quote(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"日本語", 4, "日"}, // byte 4 is inside 本: back off to the boundary
		{"日本語", 6, "日本"},
		{"日本語", 2, ""},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		if got := Bytes(c.in, c.n); got != c.want || !utf8.ValidString(got) {
			t.Errorf("Bytes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func FuzzTo(f *testing.F) {
	for _, s := range []string{"", "日本語のテキスト", "a\x00b\n", "\xff\xfe\xfd", strings.Repeat("é", 100)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 300
		got := To(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("To(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if c := utf8.RuneCountInString(got); c > max(n, 0) {
			t.Fatalf("To(%q, %d) = %q has %d runes", s, n, got, c)
		}
		for _, r := range got {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
				t.Fatalf("To(%q, %d) = %q keeps control character %U", s, n, got, r)
			}
		}
		if n > 0 && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			if utf8.RuneCountInString(s) <= n && got != s {
				t.Fatalf("To(%q, %d) = %q changed a short clean string", s, n, got)
			}
			if utf8.RuneCountInString(s) > n && !strings.HasPrefix(s, strings.TrimSuffix(got, Mark)) {
				t.Fatalf("To(%q, %d) = %q is not a prefix of it", s, n, got)
			}
		}
		if q := Quote(s, n); !utf8.ValidString(q) || strings.ContainsAny(q, "\n\r\x00") {
			t.Fatalf("Quote(%q, %d) = %q is not one valid line", s, n, q)
		}
		b := Bytes(s, n)
		if len(b) > max(n, 0) || !strings.HasPrefix(s, b) || (utf8.ValidString(s) && !utf8.ValidString(b)) {
			t.Fatalf("Bytes(%q, %d) = %q", s, n, b)
		}
	})
}
