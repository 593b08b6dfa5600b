package checks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

var _ = deepProbe(&DeepProbe{
	ID:   "api.servers",
	Name: "API servers answer",
	Doc: "Each same-site server the OpenAPI description declares (up to three; relative ones resolved against the description) gets a GET of its base URL and a CORS preflight " +
		"(OPTIONS with Origin: " + gather.APIPreflightOrigin + " and Access-Control-Request-Method: GET). Pass: every one answers (anything but a connection failure or a 5xx), " +
		"over HTTPS when the site is HTTPS, and its preflight allows the origin; partial: answers with a problem (no CORS, plain HTTP, some servers down); fail: none answers; " +
		"n/a: no OpenAPI description (or one that does not load), or no server on the site's domain.",
	Requires: []gather.AnyKey{gather.APIServers},
	Run:      apiServersProbe,
})

var _ = deepProbe(&DeepProbe{
	ID:   "api.errors",
	Name: "Documented errors come back as documented",
	Doc: "Up to five GET operations whose responses document a 4xx a read can provoke are requested: a secured operation without credentials (401/403), " +
		"an open one with every path parameter set to " + gather.APINonexistent + " (404, 400, 410, 422). Each matches when its status is a documented 4xx, " +
		"its Content-Type is a documented media type for that status, and a JSON body parses. Pass: all match; partial: some; fail: none; n/a: no OpenAPI description (or one that does not load), or nothing documented to provoke.",
	Requires: []gather.AnyKey{gather.APIErrors},
	Run:      apiErrorsProbe,
})

func apiServersProbe(in gather.Source) report.DeepProbe {
	doc := gather.Get(in, gather.APIServers)
	site := gather.SiteOf(in)
	if doc == nil {
		return apiNA("No OpenAPI description was found, so there is no API server to try.")
	}
	if doc.Unloadable != "" {
		return apiNA(apiUnloadable(doc.SpecURL, doc.Unloadable, "there is no API server to try"))
	}
	if doc.Declared == 0 {
		return apiNA(fmt.Sprintf("The OpenAPI description at %s declares no servers, so there is none to try. List the API's base URL under `servers` (or `host` in Swagger 2.0) so agents know where to send requests.", doc.SpecURL))
	}
	skipped := apiSkipped(doc.CrossSite, doc.Unusable, doc.Beyond, gather.APIMaxServers, "servers")
	if len(doc.Tried) == 0 {
		return report.DeepProbe{Status: report.NA, Message: fmt.Sprintf("The OpenAPI description at %s declares %d server(s), none that can be requested on %s's domain, so none was contacted.%s",
			doc.SpecURL, doc.Declared, site.Target.Hostname(), skipped),
			Details: map[string]any{"declared": doc.Declared, "crossSite": doc.CrossSite, "unusable": doc.Unusable}}
	}
	var (
		down, noCORS, noTLS []string
		reachable           []string
		rows                []map[string]any
	)
	for _, t := range doc.Tried {
		g, pf := t.Get, t.Preflight
		row := map[string]any{"url": t.URL, "latencyMs": g.Elapsed.Milliseconds()}
		rows = append(rows, row)
		if g.Err != nil {
			row["reachable"], row["error"] = false, apiWhy(g.Err)
			down = append(down, fmt.Sprintf("%s could not be reached (%s)", t.URL, apiWhy(g.Err)))
			continue
		}
		row["status"] = g.Status
		if g.Status >= 500 {
			row["reachable"] = false
			down = append(down, fmt.Sprintf("%s answered %d", t.URL, g.Status))
			continue
		}
		row["reachable"] = true
		reachable = append(reachable, t.URL)
		final := at(g)
		tls := strings.HasPrefix(final, "https://")
		row["tls"] = tls
		if site.Target.Scheme == "https" && !tls {
			noTLS = append(noTLS, t.URL)
		}
		cors, why := apiPreflight(pf)
		row["cors"] = cors
		if pf != nil && pf.Err == nil {
			row["preflightStatus"] = pf.Status
		}
		if !cors {
			noCORS = append(noCORS, t.URL+" "+why)
		}
	}
	details := map[string]any{"declared": doc.Declared, "servers": rows}
	if len(doc.CrossSite) > 0 {
		details["crossSite"] = doc.CrossSite
	}
	if len(doc.Unusable) > 0 {
		details["unusable"] = doc.Unusable
	}
	n := len(doc.Tried)
	if len(down) == n {
		return report.DeepProbe{Status: report.Fail, Details: details,
			Message: fmt.Sprintf("No API server the OpenAPI description at %s declares could be reached: %s. Bring the servers up, or correct the `servers` URLs in the description.%s",
				doc.SpecURL, strings.Join(down, "; "), skipped)}
	}
	if len(down) == 0 && len(noCORS) == 0 && len(noTLS) == 0 {
		over := ""
		if site.Target.Scheme == "https" {
			over = " over HTTPS"
		}
		subject, verb := "The API server "+reachable[0]+" answers", "allows"
		if n > 1 {
			subject, verb = fmt.Sprintf("All %d API servers (%s) answer", n, strings.Join(reachable, ", ")), "allow"
		}
		return report.DeepProbe{Status: report.Pass, Details: details,
			Message: fmt.Sprintf("%s%s and %s browser agents: the CORS preflight from %s is answered with Access-Control-Allow-Origin.%s",
				subject, over, verb, gather.APIPreflightOrigin, skipped)}
	}
	var problems, fixes []string
	if len(down) > 0 {
		problems = append(problems, strings.Join(down, "; "))
		fixes = append(fixes, "bring up or remove the servers that do not answer")
	}
	if len(noTLS) > 0 {
		problems = append(problems, "served over plain HTTP on an HTTPS site: "+strings.Join(noTLS, ", "))
		fixes = append(fixes, "serve the API over HTTPS and declare its https:// URL")
	}
	if len(noCORS) > 0 {
		problems = append(problems, "no CORS for browser agents: "+strings.Join(noCORS, "; "))
		fixes = append(fixes, "answer OPTIONS preflights with a 2xx carrying Access-Control-Allow-Origin (and Access-Control-Allow-Methods) so agents running in browsers can call the API")
	}
	return report.DeepProbe{Status: report.Partial, Details: details,
		Message: fmt.Sprintf("%d of %d API servers answer, with problems: %s. To fix: %s.%s", len(reachable), n, strings.Join(problems, "; "), strings.Join(fixes, "; "), skipped)}
}

// apiPreflight judges a CORS preflight as a browser would: a 2xx whose
// Access-Control-Allow-Origin is * or the requesting origin.
func apiPreflight(r *fetch.Response) (bool, string) {
	switch {
	case r == nil:
		return false, "(no CORS preflight was sent)"
	case r.Err != nil:
		return false, "(the CORS preflight got no answer: " + apiWhy(r.Err) + ")"
	case r.Status < 200 || r.Status > 299:
		return false, fmt.Sprintf("(answered the CORS preflight with %d)", r.Status)
	}
	acao := strings.TrimSpace(r.Header.Get("Access-Control-Allow-Origin"))
	switch acao {
	case "*", gather.APIPreflightOrigin:
		return true, ""
	case "":
		return false, "(answered the CORS preflight without Access-Control-Allow-Origin)"
	}
	return false, "(its CORS preflight allows another origin, not " + gather.APIPreflightOrigin + ")"
}

func apiErrorsProbe(in gather.Source) report.DeepProbe {
	doc := gather.Get(in, gather.APIErrors)
	switch {
	case doc == nil:
		return apiNA("No OpenAPI description was found, so there are no documented errors to try.")
	case doc.Unloadable != "":
		return apiNA(apiUnloadable(doc.SpecURL, doc.Unloadable, "there are no documented errors to try"))
	case doc.OffSite:
		return apiNA(fmt.Sprintf("The OpenAPI description at %s declares no server that can be requested on the site's domain, so no operation was called (the deep scan only calls the site's own domain).", doc.SpecURL))
	case doc.Candidates == 0 || len(doc.Tries) == 0:
		return apiNA(fmt.Sprintf("No GET operation in the OpenAPI description at %s documents a 4xx that a read can provoke (a 404 on a path with a parameter, or a 401/403 on a secured operation), so nothing was tried. Document the errors your operations return so agents can handle them.", doc.SpecURL))
	}
	var (
		matched, unanswered int
		problems            []string
		rows                []map[string]any
	)
	for _, t := range doc.Tries {
		ok, problem, row := apiJudgeError(t)
		rows = append(rows, row)
		switch {
		case ok:
			matched++
		case t.Resp == nil || t.Resp.Err != nil:
			unanswered++
			problems = append(problems, problem)
		default:
			problems = append(problems, problem)
		}
	}
	n := len(doc.Tries)
	details := map[string]any{"base": doc.Base, "candidates": doc.Candidates, "tried": rows}
	more := ""
	if doc.Candidates > n {
		more = fmt.Sprintf(" (%d of the %d operations that document one were tried)", n, doc.Candidates)
	}
	if matched == n {
		subject := "The request"
		if n > 1 {
			subject = fmt.Sprintf("All %d requests", n)
		}
		return report.DeepProbe{Status: report.Pass, Details: details,
			Message: fmt.Sprintf("%s that should produce a documented error got it, with the documented status and media type%s.", subject, more)}
	}
	if len(problems) > 3 {
		problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
	}
	status := report.Partial
	if matched == 0 {
		status = report.Fail
	}
	fix := "Return the status codes and error bodies the OpenAPI description documents (agents branch on them), or correct the description."
	if unanswered == n-matched {
		fix = "The API's server did not answer (see api.servers): bring it up, or declare the server that serves the API."
	}
	return report.DeepProbe{Status: status, Details: details,
		Message: fmt.Sprintf("%d of %d requests that should produce a documented error came back as documented%s: %s. %s",
			matched, n, more, strings.Join(problems, "; "), fix)}
}

// apiJudgeError compares one answer with what its operation documents.
func apiJudgeError(t gather.APIErrorTry) (bool, string, map[string]any) {
	r := t.Resp
	row := map[string]any{"operation": "GET " + t.Path, "url": t.URL, "documented": t.Codes, "expect": t.Expect}
	call := "GET " + t.URL
	if t.Expect == gather.APIExpectNoCredentials {
		call += " (without credentials)"
	}
	if r == nil || r.Err != nil {
		why := "it was not sent"
		if r != nil {
			why = apiWhy(r.Err)
		}
		row["error"] = why
		return false, call + " got no answer (" + why + ")", row
	}
	got := r.ContentType()
	row["status"], row["contentType"], row["latencyMs"] = r.Status, got, r.Elapsed.Milliseconds()
	code := strconv.Itoa(r.Status)
	documented := false
	for _, c := range t.Codes {
		if c == code || (c == "4XX" && r.Status >= 400 && r.Status < 500) {
			documented = true
		}
	}
	if !documented {
		row["match"] = false
		return false, fmt.Sprintf("%s answered %d, not the documented %s", call, r.Status, apiOr(t.Codes)), row
	}
	var types []string
	for _, k := range []string{code, "4XX", "default"} {
		if ts, ok := t.Types[k]; ok {
			types = ts
			break
		}
	}
	row["documentedTypes"] = types
	if len(types) > 0 && !apiTypeMatches(types, got) {
		row["match"] = false
		if got == "" {
			got = "no Content-Type"
		}
		return false, fmt.Sprintf("%s answered %d as %s, where the description documents %s", call, r.Status, got, apiOr(types)), row
	}
	if gather.APIIsJSON(got) && !t.JSONParses {
		row["match"] = false
		return false, fmt.Sprintf("%s answered %d with a %s body that is not valid JSON", call, r.Status, got), row
	}
	row["match"] = true
	return true, "", row
}

// apiTypeMatches reports got among documented media types; ranges
// (application/*, */*) match, and JSON types match each other since any JSON
// parser reads them.
func apiTypeMatches(documented []string, got string) bool {
	for _, d := range documented {
		switch {
		case d == got, d == "*/*":
			return true
		case strings.HasSuffix(d, "/*") && strings.HasPrefix(got, strings.TrimSuffix(d, "*")):
			return true
		case gather.APIIsJSON(d) && gather.APIIsJSON(got):
			return true
		}
	}
	return false
}

func apiNA(msg string) report.DeepProbe { return report.DeepProbe{Status: report.NA, Message: msg} }

// apiUnloadable is the message of an API probe whose description was found
// but does not load.
func apiUnloadable(specURL, why, so string) string {
	return fmt.Sprintf("The OpenAPI description at %s does not load (%s), so %s; check 1.3 says what to fix.", specURL, why, so)
}

func apiOr(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// apiSkipped says what a probe did not contact and why, for its message.
func apiSkipped(crossSite, unusable []string, beyond, limit int, what string) string {
	var b strings.Builder
	if len(crossSite) > 0 {
		fmt.Fprintf(&b, " Not contacted, being on another domain than the site's: %s.", strings.Join(apiFirst(crossSite, 5), ", "))
	}
	if len(unusable) > 0 {
		fmt.Fprintf(&b, " Declared but not requestable (not an absolute http(s) URL, or a template without defaults): %s.", strings.Join(apiFirst(unusable, 5), ", "))
	}
	if beyond > 0 {
		fmt.Fprintf(&b, " %d more same-site %s were not tried (the probe tries %d).", beyond, what, limit)
	}
	return b.String()
}

func apiFirst(list []string, n int) []string {
	if len(list) > n {
		return append(list[:n:n], fmt.Sprintf("and %d more", len(list)-n))
	}
	return list
}

// apiWhy is the user-facing cause of a request that got no answer, worded by
// the fetcher (no address of our network, no library text).
func apiWhy(err error) string {
	if s := fetch.Describe(err); s != "" {
		return s
	}
	return "no answer"
}
