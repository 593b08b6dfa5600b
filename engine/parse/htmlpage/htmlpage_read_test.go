package htmlpage

import (
	"net/url"
	"strings"
	"testing"
)

func parseRead(s string) *Page {
	base, _ := url.Parse("https://a.example/")
	return Parse([]byte(s), base)
}

// MainStart is how much visible text comes before the main content: the
// first <main>, <article> or role="main", else the first <h1>.
func TestMainStart(t *testing.T) {
	menu := "<nav>" + strings.Repeat("Menu item ", 20) + "</nav>" // 200 bytes of visible text
	cases := []struct {
		name string
		html string
		want int // -1: none marked; -2: somewhere after the menu
	}{
		{"no marker", "<p>Just text</p>", -1},
		{"empty document", "", -1},
		{"main first", "<main><p>Hello</p></main>", 0},
		{"main after the menu", menu + "<main><p>Hello</p></main>", -2},
		{"article", menu + "<article>Hi</article>", -2},
		{"role=main, any case and spaces", menu + `<div role=" Main ">Hi</div>`, -2},
		{"h1 without main", menu + "<h1>Title</h1>", -2},
		{"the first main counts", "<main>One</main>" + menu + "<main>Two</main>", 0},
		{"a main inside a template is not content", "<template><main>x</main></template><p>Text</p>", -1},
		{"an h1 in a noscript is not content", "<noscript><h1>Enable JS</h1></noscript><p>Text</p>", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := parseRead(c.html)
			switch {
			case c.want == -2 && (p.MainStart < 150 || p.MainStart > p.VisibleBytes):
				t.Errorf("MainStart = %d, want after the menu (visible %d)", p.MainStart, p.VisibleBytes)
			case c.want != -2 && p.MainStart != c.want:
				t.Errorf("MainStart = %d, want %d", p.MainStart, c.want)
			}
		})
	}
}

// A <main> beats an <h1> that comes before it (a site name in the header):
// the h1 is only the fallback when the page marks no main element.
func TestMainStartMainBeatsEarlierH1(t *testing.T) {
	p := parseRead("<header><h1>Lantern</h1></header><nav>" + strings.Repeat("Menu item ", 30) + "</nav><main><h1>Install</h1><p>Text</p></main>")
	if p.MainStart < 300 {
		t.Errorf("MainStart = %d: the header's h1 won over the <main> that follows the %d-byte menu", p.MainStart, 300)
	}
}

func TestPasswordInputs(t *testing.T) {
	cases := map[string]int{
		"<form><input name=email><input type=password></form>":                       1,
		`<input type="PASSWORD"><input type=" password ">`:                           2,
		"<input type=text><input>":                                                   0,
		"<template><input type=password></template>":                                 0,
		"<noscript><input type=password></noscript>":                                 0,
		`<svg><input type="password"></svg>`:                                         0,
		"<form><input type=password name=pw><input type=password name=again></form>": 2,
	}
	for html, want := range cases {
		if got := parseRead(html).PasswordInputs; got != want {
			t.Errorf("%s: PasswordInputs = %d, want %d", html, got, want)
		}
	}
}
