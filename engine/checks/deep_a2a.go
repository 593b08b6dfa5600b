package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

var _ = deepProbe(&DeepProbe{
	ID:   "a2a.interfaces",
	Name: "A2A agent answers",
	Doc: "Up to two same-site JSON-RPC interfaces of the A2A agent card (v1.0 supportedInterfaces, v0.3 url with preferredTransport and additionalInterfaces) get one POST of the read-only " +
		gather.A2AMethodV1 + " (v1.0) or " + gather.A2AMethodV03 + " (v0.3) method, which creates no task; one HTTP+JSON interface gets a GET. " +
		"Pass: every interface tried answers JSON-RPC (a result, or a JSON-RPC error such as -32601, which still shows a live endpoint); partial: only some do, or the only evidence is an HTTP answer " +
		"(an HTTP+JSON interface, or a 401/403 asking for credentials); fail: interfaces declared but none answers; n/a: no card, or no interface on the site's domain. gRPC interfaces are not called. " +
		"When a security scheme of the card names the authorization server whose token the deep scan holds (the one oauth.challenge uses), the interfaces are called with that token.",
	Requires: []gather.AnyKey{gather.AgentInterfaces},
	Run:      a2aInterfacesProbe,
})

func a2aInterfacesProbe(in gather.Source) report.DeepProbe {
	doc := gather.Get(in, gather.AgentInterfaces)
	switch {
	case doc == nil:
		return apiNA("No A2A agent card was found, so there is no agent interface to call.")
	case doc.Unreadable:
		return apiNA(fmt.Sprintf("The A2A agent card at %s is not a JSON object, so its interfaces cannot be read; the free scan's agent-card check says what to fix.", doc.CardURL))
	case doc.Declared == 0:
		return apiNA(fmt.Sprintf("The A2A agent card at %s declares no interface (supportedInterfaces in v1.0, url in v0.3), so there is nothing to call. Declare the URL where the agent answers.", doc.CardURL))
	}
	var skipped strings.Builder
	if len(doc.GRPC) > 0 {
		fmt.Fprintf(&skipped, " gRPC interfaces are not called: %s.", strings.Join(apiFirst(doc.GRPC, 5), ", "))
	}
	skipped.WriteString(apiSkipped(doc.CrossSite, doc.Unusable, doc.Beyond, gather.A2AMaxJSONRPC, "interfaces"))
	if len(doc.Tried) == 0 {
		return report.DeepProbe{Status: report.NA, Details: map[string]any{"declared": doc.Declared, "crossSite": doc.CrossSite, "grpc": doc.GRPC},
			Message: fmt.Sprintf("The A2A agent card at %s declares %d interface(s), none that this probe calls on the site's domain.%s", doc.CardURL, doc.Declared, skipped.String())}
	}
	if doc.AuthScheme != "" {
		fmt.Fprintf(&skipped, " The interfaces were called with the deep scan's OAuth token, from the authorization server %s that the card's security scheme %q names.", doc.AuthIssuer, doc.AuthScheme)
	}
	var (
		ok, evidence, broken []string
		rpcTried, rpcLive    int
		rows                 []map[string]any
	)
	for _, t := range doc.Tried {
		outcome, text, row := a2aJudge(t)
		rows = append(rows, row)
		if t.Binding == gather.A2AJSONRPC {
			rpcTried++
			if outcome != a2aBroken {
				rpcLive++
			}
		}
		switch outcome {
		case a2aOK:
			ok = append(ok, text)
		case a2aEvidence:
			evidence = append(evidence, text)
		default:
			broken = append(broken, text)
		}
	}
	details := map[string]any{"declared": doc.Declared, "interfaces": rows}
	if doc.AuthScheme != "" {
		details["authScheme"], details["authorizationServer"] = doc.AuthScheme, doc.AuthIssuer
	}
	if len(doc.CrossSite) > 0 {
		details["crossSite"] = doc.CrossSite
	}
	if len(doc.GRPC) > 0 {
		details["grpc"] = doc.GRPC
	}
	const fix = "Serve the A2A endpoint at the URL the card declares, answering JSON-RPC 2.0 POSTs (an unknown method gets a JSON-RPC error, not a 404 page), or correct the card."
	switch {
	case len(ok) > 0 && len(broken) == 0 && len(evidence) == 0:
		return report.DeepProbe{Status: report.Pass, Details: details,
			Message: "The agent answers JSON-RPC: " + strings.Join(ok, "; ") + "." + skipped.String()}
	case rpcTried > 0 && rpcLive == 0 && len(ok) == 0:
		return report.DeepProbe{Status: report.Fail, Details: details,
			Message: "The agent card declares JSON-RPC interfaces, but none gave a JSON-RPC answer: " + strings.Join(append(broken, evidence...), "; ") + ". " + fix + skipped.String()}
	case len(ok) > 0 || len(evidence) > 0:
		var parts []string
		if len(ok) > 0 {
			parts = append(parts, "answers JSON-RPC: "+strings.Join(ok, "; "))
		}
		if len(evidence) > 0 {
			parts = append(parts, "answers, without a JSON-RPC response to show: "+strings.Join(evidence, "; "))
		}
		if len(broken) > 0 {
			parts = append(parts, "broken: "+strings.Join(broken, "; "))
		}
		rec := " Make every declared interface answer; an HTTP answer alone does not show that an agent can talk to it."
		if len(broken) > 0 {
			rec = " " + fix
		}
		return report.DeepProbe{Status: report.Partial, Details: details,
			Message: "The agent " + strings.Join(parts, "; ") + "." + rec + skipped.String()}
	}
	return report.DeepProbe{Status: report.Fail, Details: details,
		Message: "No interface the agent card declares answered: " + strings.Join(broken, "; ") + ". " + fix + skipped.String()}
}

type a2aOutcome int

const (
	a2aBroken   a2aOutcome = iota
	a2aEvidence            // alive, but not shown to speak JSON-RPC
	a2aOK                  // a JSON-RPC response
)

// a2aJudge classifies one interface's answer and words it.
func a2aJudge(t gather.A2AInterfaceTry) (a2aOutcome, string, map[string]any) {
	r := t.Resp
	row := map[string]any{"url": t.URL, "binding": t.Binding, "version": t.Version}
	if t.Method != "" {
		row["method"] = t.Method
	}
	if t.Authorized {
		row["authorized"] = true
	}
	if r == nil || r.Err != nil {
		why := "it was not sent"
		if r != nil {
			why = apiWhy(r.Err)
		}
		row["error"] = why
		return a2aBroken, t.URL + " could not be reached (" + why + ")", row
	}
	row["status"], row["latencyMs"] = r.Status, r.Elapsed.Milliseconds()
	if ct := r.ContentType(); ct != "" {
		row["contentType"] = ct
	}
	if t.Binding != gather.A2AJSONRPC {
		if r.Status < 500 {
			return a2aEvidence, fmt.Sprintf("%s (HTTP+JSON) answered GET with %d", t.URL, r.Status), row
		}
		return a2aBroken, fmt.Sprintf("%s (HTTP+JSON) answered GET with %d", t.URL, r.Status), row
	}
	if rep := t.Reply; rep != nil {
		if rep.Result {
			row["result"] = true
			if rep.ResultName != "" {
				return a2aOK, fmt.Sprintf("%s returned its extended card (%q) for %s", t.URL, rep.ResultName, t.Method), row
			}
			return a2aOK, fmt.Sprintf("%s returned a result for %s", t.URL, t.Method), row
		}
		row["rpcErrorCode"] = rep.Code
		return a2aOK, fmt.Sprintf("%s answered %s with JSON-RPC error %d (%s), which still shows a live JSON-RPC endpoint", t.URL, t.Method, rep.Code, a2aErrorName(rep.Code)), row
	}
	switch {
	case (r.Status == 401 || r.Status == 403) && t.Authorized:
		return a2aEvidence, fmt.Sprintf("%s refused the token its card's security scheme leads to (HTTP %d) before any JSON-RPC answer", t.URL, r.Status), row
	case r.Status == 401 || r.Status == 403:
		return a2aEvidence, fmt.Sprintf("%s asks for credentials (HTTP %d) before any JSON-RPC answer", t.URL, r.Status), row
	case r.Status >= 300 && r.Status < 400:
		return a2aBroken, fmt.Sprintf("%s answered the POST with a redirect (%d) instead of JSON-RPC; declare the final URL", t.URL, r.Status), row
	case r.LooksHTML():
		return a2aBroken, fmt.Sprintf("%s answered %d with an HTML page, not a JSON-RPC response", t.URL, r.Status), row
	}
	return a2aBroken, fmt.Sprintf("%s answered %d without a JSON-RPC response", t.URL, r.Status), row
}

// a2aErrorName names the JSON-RPC and A2A error codes an agent may meet here.
func a2aErrorName(code int) string {
	switch code {
	case -32700:
		return "parse error"
	case -32600:
		return "invalid request"
	case -32601:
		return "method not found"
	case -32602:
		return "invalid params"
	case -32603:
		return "internal error"
	case -32007:
		return "extended card not configured"
	}
	return "an application error"
}
