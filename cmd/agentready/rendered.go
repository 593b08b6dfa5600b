package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentready/agentready/engine/report"
)

// renderMissed prints the rendered block: what a site owner most needs to
// know about a JavaScript-built page, and what no other check shows.
func renderMissed(w io.Writer, r *report.Rendered, paint func(code, s string) string) {
	fmt.Fprintf(w, "\n%s\n", paint("1", "What agents that do not run JavaScript miss"))
	if r.Error != "" {
		fmt.Fprintf(w, "  The page could not be rendered: %s\n", r.Error)
		return
	}
	if !r.Missing() {
		fmt.Fprintln(w, "  Nothing: the server's HTML already carries the rendered page's content.")
	}
	if r.WordsOnlyRendered > 0 {
		fmt.Fprintf(w, "  %d of %d words of main content appear only after rendering (the server's HTML has %d):\n    %q\n",
			r.WordsOnlyRendered, r.RenderedWords, r.ServerWords, r.MissedText)
	}
	list := func(what string, items []string, more int) {
		if len(items) == 0 {
			return
		}
		extra := ""
		if more > 0 {
			extra = fmt.Sprintf(" (and %d more)", more)
		}
		fmt.Fprintf(w, "  %s only after rendering%s:\n", what, extra)
		for _, it := range items {
			fmt.Fprintf(w, "    %s\n", it)
		}
	}
	list("Headings", r.Headings, 0)
	list("Links", r.Links, r.LinksDropped)
	if r.RenderedJSONLD > r.ServerJSONLD || len(r.JSONLDTypes) > 0 {
		fmt.Fprintf(w, "  JSON-LD: %d block(s) in the server's HTML, %d after rendering", r.ServerJSONLD, r.RenderedJSONLD)
		if len(r.JSONLDTypes) > 0 {
			fmt.Fprintf(w, "; types only after rendering: %s", strings.Join(r.JSONLDTypes, ", "))
		}
		fmt.Fprintln(w)
	}
	if len(r.Tools) > 0 {
		fmt.Fprintln(w, "  WebMCP tools the page registered while it ran:")
		for _, t := range r.Tools {
			fmt.Fprintf(w, "    %s (%s)\n", t.Name, t.API)
		}
	}
	if len(r.ConsoleErrors) > 0 {
		fmt.Fprintln(w, "  Console errors while rendering:")
		for _, e := range r.ConsoleErrors {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	for _, a := range r.Advice() {
		fmt.Fprintln(w, "  → "+a)
	}
}
