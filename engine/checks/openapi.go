package checks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/gather"
)

// Checks of the OpenAPI family (engine/gather/openapi.go): the OpenAPI
// description (1.3), the documentation page (1.5) and the API catalog (1.16).
// The API-design checks graded from the parsed description (levels 2 and 3)
// stay in level2.go and level3.go.

func openAPISpec(in gather.Source) Outcome {
	doc := gather.Get(in, gather.Spec)
	if s := doc.Spec; s != nil {
		det := map[string]any{"version": s.Version, "title": s.Title, "paths": s.Paths, "operations": len(s.Operations), "source": doc.Source, "findings": s.Findings}
		if s.Paths == 0 && len(s.Operations) == 0 {
			return partial(fmt.Sprintf("An OpenAPI %s document was found but declares no paths.", s.Version), "Describe your API's paths and operations in the document.", det, at(doc.Resp))
		}
		msg := fmt.Sprintf("OpenAPI %s document %q with %s and %s (found via %s).", s.Version, s.Title, plural(s.Paths, "path", "paths"), plural(len(s.Operations), "operation", "operations"), doc.Source)
		if n := len(s.Unresolved); n > 0 {
			// Still a description by the check's rule; what a broken
			// reference stood for is unknown, the rest is graded.
			det["unresolved"] = first(s.Unresolved, 20)
			msg += fmt.Sprintf(" %s not resolve within it, so what %s for is unknown to agents (see details).", plural(n, "$ref does", "$refs do"), map[bool]string{true: "it stands", false: "they stand"}[n == 1])
		}
		return pass(msg, det, at(doc.Resp))
	}
	if doc.Err != nil {
		return partial("A document that looks like an OpenAPI description was found but does not load: "+shortErr(doc.Err)+".",
			"Validate the document with an OpenAPI validator and fix the error shown.", map[string]any{"error": doc.Err.Error()}, at(doc.Resp))
	}
	return fail("No OpenAPI or Swagger document was found via links or at the common paths.", "", map[string]any{"tried": gather.SpecPaths})
}

var loginPath = regexp.MustCompile(`(?i)/(login|log-in|signin|sign-in|sign_in|auth|sso|oauth|account/login)(/|$|\?)`)

func docsAccess(in gather.Source) Outcome {
	docs, spec := gather.Get(in, gather.Docs), gather.Get(in, gather.Spec)
	r := docs.Resp
	if r != nil && r.Err == nil {
		det := map[string]any{"url": at(r), "status": r.Status, "source": docs.Source}
		switch {
		case r.Status == 401 || r.Status == 403:
			return partial(fmt.Sprintf("The documentation at %s requires authentication (%d).", r.RequestURL, r.Status),
				"Make developer documentation public; agents cannot log in to read it.", det, at(r))
		case r.OK() && !r.Complete() && (r.LooksHTML() || r.ContentType() == "text/markdown"):
			// A page that is there but cannot be read whole is neither public
			// documentation nor no documentation.
			det["cut"], det["bytesRead"] = cutReason(r), len(r.Body)
			return partial(fmt.Sprintf("The documentation page at %s answered %d, but its body was cut after %d bytes: %s.", at(r), r.Status, len(r.Body), cutReason(r)),
				"Serve the documentation page whole and promptly: a complete response within a few seconds, under 2 MiB (split larger pages).", det, at(r))
		case docs.Found:
			if len(r.Redirects) > 0 && loginPath.MatchString(at(r)) {
				return partial("The documentation link redirects to a login page ("+at(r)+").", "Make developer documentation public; agents cannot log in to read it.", det, at(r))
			}
			return pass("Public documentation answers at "+at(r)+" (found via "+docs.Source+").", det, at(r))
		}
	}
	if spec.Spec != nil {
		return partial("An OpenAPI document exists, but no human-readable documentation page was found.", "", map[string]any{"tried": gather.DocsPaths}, "")
	}
	return fail("No documentation page was found via links or at /docs, /documentation, /developers, /api/docs.", "", map[string]any{"tried": gather.DocsPaths})
}

func apiCatalog(in gather.Source) Outcome {
	cat, head := gather.Get(in, gather.Catalog), gather.Get(in, gather.CatalogHead)
	r := cat.Resp
	if !r.Found() {
		return fail("No API catalog at /.well-known/api-catalog ("+absence(r)+").", "", probeOf(r))
	}
	ct := r.ContentType()
	det := map[string]any{"contentType": ct, "profile": strings.Contains(r.Header.Get("Content-Type"), "rfc9727")}
	if head != nil {
		det["headLinkHeader"] = strings.Contains(strings.ToLower(strings.Join(head.Header.Values("Link"), ",")), "api-catalog")
	}
	ls := cat.Linkset
	if ls == nil {
		msg := "The API catalog is not an RFC 9264 linkset"
		if cat.Err != nil {
			msg += " (" + shortErr(cat.Err) + ")"
		}
		return partial(msg+".", "", det, at(r))
	}
	det["contexts"], det["relations"] = len(ls.Contexts), ls.Relations()
	if len(ls.Findings) > 0 {
		det["findings"] = first(ls.Findings, 10)
	}
	switch {
	case !ls.Complete():
		return partial("The API catalog linkset has no context with an anchor and a service-desc link.", "", det, at(r))
	case ct != "application/linkset+json":
		return partial("The API catalog is a valid linkset but is served as "+ct+", not application/linkset+json.", "Serve it with `Content-Type: application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"`.", det, at(r))
	}
	return pass(fmt.Sprintf("RFC 9727 API catalog with %s.", plural(len(ls.Contexts), "API", "APIs")), det, at(r))
}
