package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// Details are an object on the wire whatever a check gave and whatever an
// older stored report holds.
func TestDetailsAreAnObject(t *testing.T) {
	for _, c := range []struct {
		name string
		in   any
		want string
	}{
		{"none", nil, `{}`},
		{"an object", map[string]any{"url": "https://a.example/<x>", "status": 404}, `{"status":404,"url":"https://a.example/\u003cx\u003e"}`},
		{"an empty object", map[string]any{}, `{}`},
		{"a list", []string{"a", "b"}, `{"value":["a","b"]}`},
		{"a string", "text", `{"value":"text"}`},
	} {
		b, err := json.Marshal(Check{Details: ObjectDetails(c.in)})
		var got struct{ Details json.RawMessage }
		if err != nil || json.Unmarshal(b, &got) != nil || string(got.Details) != c.want {
			t.Errorf("%s: %s (%v), want details %s", c.name, b, err, c.want)
		}
	}
	for stored, want := range map[string]string{
		`{"details":"{\"url\":\"u\"}"}`: `{"url":"u"}`, // JSON inside a string, as reports were stored
		`{"details":"answered 404"}`:    `{"note":"answered 404"}`,
		`{"details":""}`:                `{}`,
		`{"details":null}`:              `{}`,
		`{"details":{"a":[1]}}`:         `{"a":[1]}`,
		`{"details":[1]}`:               `{"value":[1]}`,
	} {
		var c Check
		if err := json.Unmarshal([]byte(stored), &c); err != nil {
			t.Errorf("%s: %v", stored, err)
			continue
		}
		if b, _ := json.Marshal(c.Details); string(b) != want {
			t.Errorf("%s read as %s, want %s", stored, b, want)
		}
	}
	var c Check
	if json.Unmarshal([]byte(`{"details":{"a":}}`), &c) == nil {
		t.Error("malformed details were accepted")
	}
}

// The render's advice follows what it found: a page whose only
// JavaScript-only items are a WebMCP tool and console errors is not told to
// server-render its content.
func TestRenderedAdvice(t *testing.T) {
	toolsOnly := &Rendered{Tools: []WebMCPTool{{Name: "search", API: "navigator.modelContext.registerTool"}}, ConsoleErrors: []string{"img 404", "img 404"}}
	got := toolsOnly.Advice()
	if len(got) != 2 || !strings.Contains(got[0], "WebMCP tool registered at run time") || !strings.Contains(got[1], "2 console errors") {
		t.Errorf("tools and errors only: %q", got)
	}
	for _, a := range got {
		if strings.Contains(a, "SSR") || strings.Contains(a, "JSON-LD") {
			t.Errorf("advice about what was not found: %q", a)
		}
	}
	content := &Rendered{WordsOnlyRendered: 120, Headings: []string{"h1: Shop"}, Links: []string{"a", "b"}, JSONLDTypes: []string{"Product"}, RenderedJSONLD: 1}
	got = content.Advice()
	if len(got) != 2 || !strings.Contains(got[0], "120 words, 1 heading, 2 links") || !strings.Contains(got[1], "JSON-LD (Product)") {
		t.Errorf("content and JSON-LD: %q", got)
	}
	if got := (&Rendered{ServerWords: 300, RenderedWords: 300}).Advice(); len(got) != 0 {
		t.Errorf("nothing missed: %q", got)
	}
}
