package checks

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/weburl"
)

var _ = deepProbe(&DeepProbe{
	ID:   "level5.contract",
	Name: "Agent contract, verified",
	Doc: "The level-5 contract the agent card (capabilities and extension params) or ai.json declares: intentEndpoints, sessions, scopedTokens, " +
		"auditLog, sandbox, toolSchemas, openapi. Each same-site URL is requested once with GET and must answer as what it claims to be: an API " +
		"endpoint answers JSON (or an auth challenge, or 405 with Allow), tool schemas are JSON tool definitions, each valid (a name, a description and an object input schema, the rule the repository scan applies too), an OpenAPI URL loads as " +
		"OpenAPI; an HTML page (a soft 404 above all) never counts. The audit header must appear on the site's answers; scoped tokens must name " +
		"scopes. Declarations on another registrable domain are refused, not followed. A declared URL that is the authorization server's token endpoint is judged by the deep scan's one request to it (oauth.metadata's), never requested twice. pass: every item verifies. partial: some do. fail: none. " +
		"na: nothing declared.",
	Requires: []gather.AnyKey{gather.Contract, gather.Home},
	Run:      verifyContract,
})

// What each kind is called in messages.
var contractNoun = map[gather.ContractKind]string{
	gather.ContractIntent:  "intent endpoint",
	gather.ContractSession: "sessions endpoint",
	gather.ContractTokens:  "scoped-token endpoint",
	gather.ContractAudit:   "audit header",
	gather.ContractSandbox: "sandbox",
	gather.ContractTools:   "tool schemas",
	gather.ContractOpenAPI: "OpenAPI description",
}

// contractResult is one declaration in the details.
type contractResult struct {
	Kind        string `json:"kind"`
	Source      string `json:"source"`
	Declared    string `json:"declared,omitempty"`
	URL         string `json:"url,omitempty"`
	Result      string `json:"result"` // verified, broken, refused, invalid
	HTTPStatus  int    `json:"httpStatus,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	LatencyMS   int64  `json:"latencyMs,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

func verifyContract(in gather.Source) report.DeepProbe {
	doc, home := gather.Get(in, gather.Contract), gather.Get(in, gather.Home)
	site := gather.SiteOf(in).Target
	if len(doc.Items) == 0 {
		return report.DeepProbe{Status: report.NA, Message: "Neither the agent card's capabilities nor ai.json declares a level-5 contract " +
			"(intentEndpoints, sessions, scopedTokens, auditLog, sandbox, toolSchemas), so there is nothing to verify."}
	}
	var results []contractResult
	var problems, refused []string
	verified, auditBroken := 0, false
	for _, it := range doc.Items {
		res := contractResult{Kind: string(it.Kind), Source: it.Source, Declared: it.Declared, URL: it.URL}
		if r := it.Resp; r != nil {
			res.HTTPStatus, res.ContentType, res.LatencyMS = r.Status, r.ContentType(), r.Elapsed.Milliseconds()
		}
		noun := contractNoun[it.Kind]
		what := noun
		if it.URL != "" {
			what += " " + it.URL
		} else if it.Header != "" {
			what += " " + it.Header
		}
		switch {
		case it.Invalid != "":
			res.Result, res.Reason = "invalid", "the declaration "+it.Invalid
			problems = append(problems, fmt.Sprintf("%s (%s): the declaration %s", noun, it.Source, it.Invalid))
		case it.CrossSite:
			host := it.URL
			if u, err := url.Parse(it.URL); err == nil {
				host = u.Host
			}
			res.Result, res.Reason = "refused", "on another registrable domain ("+host+"); not followed"
			refused = append(refused, what)
		default:
			ok, why := contractVerdict(it, doc, home, site)
			if it.FromToken && it.Resp != nil {
				why += " (to the deep scan's one request to the authorization server's token endpoint, not sent twice)"
			}
			if ok {
				res.Result, res.Reason = "verified", why
				verified++
			} else {
				res.Result, res.Reason = "broken", why
				problems = append(problems, what+" "+why)
				auditBroken = auditBroken || it.Kind == gather.ContractAudit
			}
		}
		results = append(results, res)
	}
	n := len(doc.Items)
	msg := fmt.Sprintf("%d of %d declared contract items verify (declared in %s).", verified, n, strings.Join(doc.Sources, " and "))
	if len(problems) > 0 {
		shown := problems
		if len(shown) > 3 {
			shown = shown[:3]
		}
		msg += " Broken: " + strings.Join(shown, "; ") + "."
		if len(problems) > 3 {
			msg += fmt.Sprintf(" (%d more in the details.)", len(problems)-3)
		}
	}
	if len(refused) > 0 {
		shown := refused
		if len(shown) > 3 {
			shown = shown[:3]
		}
		msg += fmt.Sprintf(" Refused, not followed: %s on another registrable domain (%s); agents cannot trust a contract that points off-site, so serve these on your own domain.",
			plural(len(refused), "declaration", "declarations"), strings.Join(shown, "; "))
	}
	if doc.Beyond > 0 {
		msg += fmt.Sprintf(" %s beyond the first %d (or the first %d intent endpoints) %s not tried.", plural(doc.Beyond, "declaration", "declarations"),
			gather.MaxContractItems, gather.MaxContractIntents, map[bool]string{true: "was", false: "were"}[doc.Beyond == 1])
	}
	st := report.Partial
	switch verified {
	case n:
		st = report.Pass
	case 0:
		st = report.Fail
	}
	if st != report.Pass && len(problems) > 0 {
		msg += " Each declared endpoint should answer GET as what it is: JSON from an API (an auth challenge or 405 with Allow will do), a JSON list of tools with input schemas, a loadable OpenAPI document; never an HTML page."
		if auditBroken {
			msg += " Send the declared audit header on every response."
		}
	}
	if len(results) > 20 {
		results = results[:20]
	}
	return report.DeepProbe{Status: st, Message: msg, Details: map[string]any{
		"sources": doc.Sources, "declared": n, "verified": verified, "refused": len(refused), "notTried": doc.Beyond, "items": results}}
}

// contractVerdict decides whether one same-site declaration is what it claims.
func contractVerdict(it *gather.ContractItem, doc *gather.ContractDoc, home *gather.HomePage, site *url.URL) (bool, string) {
	if it.Kind == gather.ContractAudit {
		return auditVerdict(it.Header, doc, home)
	}
	r := it.Resp
	if r == nil {
		return false, "was not requested"
	}
	if r.Err != nil {
		return false, "did not answer (" + fetch.Describe(r.Err) + ")"
	}
	if r.FinalURL != "" && !weburl.SameSite(site, r.FinalURL) {
		host := r.FinalURL
		if u, err := url.Parse(r.FinalURL); err == nil {
			host = u.Host
		}
		return false, "redirects to another domain (" + host + ")"
	}
	if !r.Complete() {
		return false, fmt.Sprintf("answered %d but its body was cut (%s)", r.Status, cutReason(r))
	}
	if r.LooksHTML() {
		if it.SameAsHome {
			return false, fmt.Sprintf("answers %d with the homepage (a soft 404)", r.Status)
		}
		return false, fmt.Sprintf("answers %d with an HTML page", r.Status)
	}
	ct := orUnknown(r.ContentType())
	switch it.Kind {
	case gather.ContractTools:
		switch {
		case r.Status != 200:
			return false, fmt.Sprintf("answers %d", r.Status)
		case !it.JSON:
			return false, "answers " + ct + " that is not JSON"
		case !strings.Contains(r.ContentType(), "json"):
			return false, "is JSON served as " + ct + "; serve it as application/json"
		case it.Tools == 0:
			return false, "is JSON without tool objects (name, description and input schema)"
		case it.ToolsValid < it.Tools:
			return false, fmt.Sprintf("lists %d tools, %d of them not a valid tool definition (first: %s)", it.Tools, it.Tools-it.ToolsValid, it.ToolProblem)
		}
		return true, fmt.Sprintf("%s, each a valid definition (name, description, object input schema)", plural(it.Tools, "tool", "tools"))
	case gather.ContractOpenAPI:
		switch {
		case r.Status != 200:
			return false, fmt.Sprintf("answers %d", r.Status)
		case it.Spec == nil && it.NotOpenAPI:
			return false, "answers " + ct + " that is not an OpenAPI document"
		case it.Spec == nil:
			return false, "answers " + ct + " that does not load as OpenAPI"
		}
		return true, fmt.Sprintf("OpenAPI %s with %s", it.Spec.Version, plural(len(it.Spec.Operations), "operation", "operations"))
	}
	// The endpoints an agent calls: the API itself must answer.
	switch {
	case r.Status >= 500:
		return false, fmt.Sprintf("answers %d", r.Status)
	case r.Status == 429:
		return false, "answered 429 (rate limited), so it could not be verified"
	case (r.Status == 404 || r.Status == 410) && it.Kind != gather.ContractSandbox:
		return false, fmt.Sprintf("answers %d", r.Status)
	case r.Status >= 300 && r.Status < 400:
		return false, fmt.Sprintf("answers %d without a usable redirect", r.Status)
	}
	if it.Kind == gather.ContractTokens && len(it.Scopes) == 0 {
		return false, "is declared without scopes, so its tokens are not scoped (list them in scopes)"
	}
	switch {
	case it.JSON && strings.Contains(r.ContentType(), "json"):
		return true, fmt.Sprintf("answers %d with JSON", r.Status)
	case r.Status == 405 && r.Header.Get("Allow") != "":
		return true, "answers 405 allowing " + clip.To(r.Header.Get("Allow"), 60)
	case (r.Status == 401 || r.Status == 403) && r.Header.Get("WWW-Authenticate") != "":
		return true, fmt.Sprintf("answers %d with an authentication challenge", r.Status)
	case it.JSON:
		return false, fmt.Sprintf("answers %d with JSON typed %s; serve it as application/json", r.Status, ct)
	}
	return false, fmt.Sprintf("answers %d with %s, not an API response (JSON, an auth challenge, or 405 with Allow)", r.Status, ct)
}

// auditVerdict looks for the declared audit header on the site's own
// answers: the homepage and every declared endpoint that was requested.
func auditVerdict(header string, doc *gather.ContractDoc, home *gather.HomePage) (bool, string) {
	seen := 0
	check := func(r *fetch.Response) bool {
		if r == nil || r.Err != nil || r.Header == nil {
			return false
		}
		seen++
		return r.Header.Get(header) != ""
	}
	if check(home.Resp) {
		return true, "is sent on the homepage"
	}
	for _, it := range doc.Items {
		if check(it.Resp) {
			return true, "is sent by " + it.URL
		}
	}
	return false, fmt.Sprintf("is missing from all %s read (the homepage and the declared endpoints)", plural(seen, "answer", "answers"))
}
