package browser

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/report"
)

// Renderer is the pool as the engine's renderer: a scan given it reports
// what agents that do not run JavaScript miss on the homepage.
func (p *Pool) Renderer() engine.Renderer { return engineRenderer{p} }

type engineRenderer struct{ p *Pool }

// Render's errors are the pool's sentinels (with their safe detail), which
// the report shows as they are. A render the browser failed (ErrCrashed: it
// crashed, hung or went over its memory budget, possibly because of another
// job's page) is tried once more: the pool has replaced the browser by then,
// so the second try runs on a fresh one. A second crash is reported in words
// for the site's owner (crashedAgainError).
func (r engineRenderer) Render(ctx context.Context, url string) (*engine.RenderedPage, error) {
	rp, err := r.p.Render(ctx, url)
	if errors.Is(err, ErrCrashed) && ctx.Err() == nil {
		rp, err = r.p.Render(ctx, url)
		if errors.Is(err, ErrCrashed) {
			err = &crashedAgainError{cause: err}
		}
	}
	if err != nil {
		return nil, reportable{err}
	}
	out := &engine.RenderedPage{FinalURL: rp.FinalURL, HTML: rp.HTML, ConsoleErrors: make([]string, 0, len(rp.ConsoleErrors)), Tools: make([]report.WebMCPTool, 0, len(rp.Tools))}
	page := pageURL(rp)
	for _, m := range rp.ConsoleErrors {
		out.ConsoleErrors = append(out.ConsoleErrors, consoleLine(m, page))
	}
	for _, t := range rp.Tools {
		out.Tools = append(out.Tools, report.WebMCPTool{Name: t.Name, Description: t.Description, API: t.API})
	}
	return out, nil
}

// reportable is a Render error as the engine reports it
// (engine.RenderFailure): an error that is one of the pool's sentinels
// (with its safe detail) is the report's text; any other, such as the
// scan's context ending, is left to the engine's own words.
type reportable struct{ error }

var _ engine.RenderFailure = reportable{}

func (e reportable) Unwrap() error { return e.error }

func (e reportable) ReportText() string {
	if isOwn(e.error) {
		return e.Error()
	}
	return ""
}

// crashedAgainError is a render whose browser stopped twice, the second
// time a fresh one: the page itself is the likely cause. It is ErrCrashed to
// errors.Is; its text is for the report.
type crashedAgainError struct{ cause error }

func (e *crashedAgainError) Error() string {
	what := "it crashed"
	var d *detailError
	if errors.As(e.cause, &d) {
		what = d.detail
	}
	return "the headless browser stopped while rendering this page, and again on a fresh browser (" + what +
		"): the page may need more memory or processing than a browser gives one page (thousands of frames, " +
		"a script that never ends); the other results do not use the browser"
}

func (e *crashedAgainError) Unwrap() error { return e.cause }

// pageURL is where the page ended up (after redirects), else where it was
// asked for.
func pageURL(rp *Rendered) *url.URL {
	for _, raw := range []string{rp.FinalURL, rp.URL} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			return u
		}
	}
	return nil
}

// maxSourceRunes bounds where a console error came from, as a report shows
// it (consoleSource).
const maxSourceRunes = 120

// consoleLine is one console error as the report lists it: its kind, its
// text and, in parentheses, where it came from.
func consoleLine(m ConsoleMessage, page *url.URL) string {
	line := m.Kind + ": " + m.Text
	if where := consoleSource(m.URL, m.Line, page); where != "" {
		line += " (" + where + ")"
	}
	return line
}

// consoleSource names the resource or script a console error came from,
// short enough for a report and without secrets: on the page's own origin
// its path, on any other its host and path; never its query or fragment
// (tokens and session ids live there) nor a user name; a URL that is not
// http(s) by its scheme alone ("data:", "blob:"); at most maxSourceRunes
// (a cut is marked with "…"), then ":line" when known.
func consoleSource(raw string, line int, page *url.URL) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return ""
	}
	var where string
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		where = u.Scheme + ":"
	case page != nil && u.Scheme == page.Scheme && u.Host == page.Host:
		where = u.EscapedPath()
		if where == "" {
			where = "/"
		}
	default:
		where = u.Host + u.EscapedPath()
	}
	where = clip.To(where, maxSourceRunes)
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	return where
}
