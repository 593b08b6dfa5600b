package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	cases := []struct{ body, want string }{
		{"{\n  \"a\": 1,\n}", "line 3, column 1: trailing comma before `}`"},
		{"[1,2,]", "line 1, column 6: trailing comma before `]`"},
		{"{'a': 1}", "line 1, column 2: strings must use double quotes, not single quotes"},
		{"{\"a\": 1 \"b\": 2}", "a comma is missing between two values"},
		{"{\"a\": // x\n1}", "comments are not allowed in JSON"},
		{"{\"a\": [1, 2", "the document ends before its last value is closed"},
		{"", "the document is empty"},
	}
	for _, c := range cases {
		var v any
		err := json.Unmarshal([]byte(c.body), &v)
		if got := Describe([]byte(c.body), err); !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want %q", c.body, got, c.want)
		}
	}
	var s struct {
		Caps struct{ Tools bool } `json:"capabilities"`
	}
	err := json.Unmarshal([]byte(`{"capabilities":["tools"]}`), &s)
	if got := Describe(nil, err); got != "`capabilities` is an array where an object is expected" {
		t.Errorf("type error: %q", got)
	}
}

func FuzzDescribe(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			msg := Describe(body, err)
			if strings.Contains(msg, "invalid character") || strings.Contains(msg, "json:") {
				t.Fatalf("raw library text: %q", msg)
			}
		}
	})
}
