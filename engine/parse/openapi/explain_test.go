package openapi

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// libraryText is what yaml.v3, encoding/json and kin-openapi write in their
// own errors; none of it may reach a report.
var libraryText = regexp.MustCompile(`yaml:|json:|openapi[23]\.|struct field|map key|failed to|fragment in URI|unmarshal|disallowed|MUST|\bGo\b`)

func TestLoadErrorsSpeakPlainly(t *testing.T) {
	const info = `"openapi":"3.1.0","info":{"title":"t","version":"1"}`
	get := func(op string) string { return `{` + info + `,"paths":{"/a":{"get":` + op + `}}}` }
	withSchema := func(schema string) string {
		return get(`{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + schema + `}}}}}`)
	}
	cases := []struct{ name, doc, want string }{
		{"broken YAML", "openapi: 3.1.0\ninfo:\n  title: t\n  version: '1'\npaths:\n  /a: x: y\n",
			"it is neither JSON nor valid YAML: line 6: a `key: value` appears where it is not allowed (check the indentation, and quote a value that contains \": \")"},
		{"tab indentation", "openapi: 3.1.0\ninfo:\n\ttitle: t\n",
			"it is neither JSON nor valid YAML: line 3: a character that cannot start a value (a tab used for indentation, or an unquoted @ or `)"},
		{"a YAML key twice", "openapi: 3.1.0\ninfo:\n  title: t\n  title: u\n",
			`it is neither JSON nor valid YAML: line 4: the key "title" appears twice in one mapping (first at line 3)`},
		{"unclosed YAML flow list", "openapi: 3.1.0\ntags: [a, b\n",
			"it is neither JSON nor valid YAML: line 2: a list in brackets is not closed with `]`, or lacks a comma"},
		{"broken JSON", `{"openapi":"3.1.0","info":{"title":"t"` + "\n" + `"version":"1"}}`,
			"it is not valid JSON: line 2, column 1: a comma is missing between two values"},
		{"cut JSON", `{"openapi":"3.1.0","info":{"title":"t"`,
			"it is not valid JSON: line 1, column 38: the document ends before its last value is closed"},
		{"cut JSON after a byte-order mark", "\xef\xbb\xbf" + `{"openapi":"3.1.0"`,
			"it is not valid JSON: line 1, column 18: the document ends before its last value is closed"},
		{"a path item that is a string", `{` + info + `,"paths":{"/a":"nope"}}`,
			"a path item is a string, where an object is expected"},
		{"info that is a string", `{"openapi":"3.1.0","info":"x","paths":{}}`,
			"`info` is a string, where an object is expected"},
		{"parameters that are a string", get(`{"responses":{"200":{"description":"ok"}},"parameters":"x"}`),
			"`parameters` in an operation is a string, where a list is expected"},
		{"a numeric version", `{"openapi":"3.1.0","info":{"title":"t","version":1},"paths":{}}`,
			"`version` in `info` is a number, where a string is expected"},
		{"a string where a number belongs", withSchema(`{"type":"string","maxLength":"5"}`),
			"`maxLength` in a schema is a string, where a number is expected"},
		{"schema and content", get(`{"parameters":[{"name":"a","in":"query","schema":{},"content":{}}],"responses":{"200":{"description":"ok"}}}`),
			"a parameter has both `schema` and `content`; it may have only one"},
		{"Swagger 2.0 info that is a string", `{"swagger":"2.0","info":"x","paths":{}}`,
			"`info` is a string, where an object is expected"},
	}
	for _, c := range cases {
		_, err := Load([]byte(c.doc), nil)
		if err == nil {
			t.Errorf("%s: loaded", c.name)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, err, c.want)
		}
		if p := libraryText.FindString(err.Error()); p != "" {
			t.Errorf("%s: library text %q in %q", c.name, p, err)
		}
	}
}

// A JSON document YAML refuses (a key given twice) still loads: JSON lets
// the last one count.
func TestJSONThatYAMLRefuses(t *testing.T) {
	s, err := Load([]byte(`{"openapi":"3.1.0","info":{"title":"first"},"info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`), nil)
	if err != nil || s.Title != "t" || len(s.Operations) != 1 {
		t.Fatalf("%+v, %v", s, err)
	}
}

// A key quoted in an explanation is cut by runes.
func TestLoadErrorsCutByRunes(t *testing.T) {
	long := strings.Repeat("日本語", 100)
	cases := []string{
		"openapi: 3.1.0\n" + long + ": 1\n" + long + ": 2\n",
	}
	for _, doc := range cases {
		_, err := Load([]byte(doc), nil)
		if err == nil {
			t.Fatalf("%.40q loaded", doc)
		}
		msg := err.Error()
		if !utf8.ValidString(msg) || !strings.Contains(msg, "日本…") || utf8.RuneCountInString(msg) > 250 {
			t.Errorf("%q", msg)
		}
	}
}
