package checks

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/parse/commerce"
	"github.com/agentready/agentready/engine/parse/webbotauth"
	"github.com/agentready/agentready/engine/report"
)

// Signal is an identity or commerce signal: judged like a check (a pure
// function over declared artifacts) but never scored, and never a fail.
// The standards behind them are opt-in, so a site that publishes nothing is
// na. Run receives the scan's clock because key validity windows depend on it.
type Signal struct {
	ID       string                                               `json:"id"`
	Name     string                                               `json:"name"`
	Group    string                                               `json:"group"`    // report.GroupIdentity or report.GroupCommerce
	LooksFor string                                               `json:"looksFor"` // the evidence it reads and what it costs
	Rule     string                                               `json:"rule"`     // how pass, partial and na are decided
	Fix      string                                               `json:"fix"`      // what to publish to pass
	Requires []gather.AnyKey                                      `json:"-"`
	Run      func(in gather.Source, now time.Time) signal.Verdict `json:"-"`
}

// Signals returns every signal in report order: identity first, then commerce.
func Signals() []*Signal { return signals }

// SignalByID finds a signal.
func SignalByID(id string) (*Signal, bool) {
	for _, s := range signals {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// Judge runs the signal over the artifacts it requires and adapts its verdict
// to a report entry. Whatever goes wrong (an input missing at the deadline, a
// bug) is na with the reason: a signal never fails a site.
func (s *Signal) Judge(set *gather.Set, now time.Time) (res report.Signal) {
	for _, k := range s.Requires {
		if !gather.Has(set, k) {
			return s.result(signal.NA(fmt.Sprintf("Not evaluated: its input %q was not gathered before the scan ended; scan again.", k.Name())))
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res = s.result(signal.NA(fmt.Sprintf("Not evaluated (internal error: %v); please report it.", r)))
		}
	}()
	return s.result(s.Run(gather.View(set, s.Requires, nil), now))
}

func (s *Signal) result(v signal.Verdict) report.Signal {
	r := report.Signal{ID: s.ID, Name: s.Name, Group: s.Group, Status: v.Status, Passed: v.Passed(),
		Message: v.Message, Details: signalDetails(v.Details), FoundAt: v.FoundAt}
	switch v.Status {
	case report.Pass, report.NA:
	case report.Partial:
		r.Recommendation = v.Recommendation
		if r.Recommendation == "" {
			r.Recommendation = s.Fix
		}
	default:
		// Graders only build pass, partial and na; anything else is a bug
		// that must not reach a report as a failure of the site.
		r.Status, r.Passed, r.Recommendation = report.NA, false, ""
	}
	return r
}

// cutDocument grades a well-known document whose body did not arrive whole:
// judging its beginning would invent errors the site does not have.
func cutDocument(r *fetch.Response, path string) (signal.Verdict, bool) {
	if r == nil || r.Err != nil || !r.OK() || r.Complete() {
		return signal.Verdict{}, false
	}
	if absent, _ := signal.Absent(r.Status, r.ContentType(), r.Body); absent {
		return signal.Verdict{}, false
	}
	v := signal.Partial(fmt.Sprintf("The document at %s could not be read whole (%s), so it was not judged.", path, r.Cut),
		"Serve a small, complete document at "+path+" quickly; scan again.")
	v.FoundAt = r.FinalURL
	return v, true
}

// unanswered grades a well-known document the site never answered for
// (timeout, redirect loop, refused address): na, as nothing was published
// that could be judged, with the fetcher's plain-words reason.
func unanswered(r *fetch.Response, path, what string) (signal.Verdict, bool) {
	if r == nil {
		return signal.NA("No " + what + " was looked for at " + path + "."), true
	}
	if r.Err == nil {
		return signal.Verdict{}, false
	}
	return signal.NA("No " + what + " could be read at " + path + ": " + fetch.Describe(r.Err) + "."), true
}

// document is the Run of a signal that grades one fetched document: not
// asked for or unanswered is na, a document cut by the caps is judged by
// cutDocument, anything else by grade.
func document(k gather.Key[*fetch.Response], path, what string, grade func(*fetch.Response, time.Time) signal.Verdict) func(gather.Source, time.Time) signal.Verdict {
	return func(in gather.Source, now time.Time) signal.Verdict {
		r := gather.Get(in, k)
		if v, no := unanswered(r, path, what); no {
			return v
		}
		if v, cut := cutDocument(r, path); cut {
			return v
		}
		return grade(r, now)
	}
}

var signals = []*Signal{
	{
		ID: "webbotauth", Name: "Web Bot Auth key directory", Group: report.GroupIdentity,
		LooksFor: "GET " + webbotauth.Path + " (one request, in the first round): the JWKS a bot operator publishes so sites can verify the HTTP Message Signatures (RFC 9421) its crawlers send (draft-meunier-webbotauth-httpsig-directory).",
		Rule:     "pass: at least one well-formed public key valid now (Ed25519 or another RFC 9421 algorithm, nbf/exp window open), no private material, no published example key, served as " + webbotauth.MediaType + "; partial: a document that is not a usable JWKS, no key usable now (e.g. every key expired), the wrong media type, an example key from an RFC, or private key material (`d`, RSA primes, an `oct` secret) published, which is reported loudly; na: nothing published (404, 410, another status, an empty body, an HTML soft 404, or no answer at all).",
		Fix:      "Serve " + webbotauth.Path + " as " + webbotauth.MediaType + ` with {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "<public key, base64url>", "kid": "<RFC 7638 thumbprint>"}]}, public halves only.`,
		Requires: []gather.AnyKey{gather.BotAuthDir},
		Run: document(gather.BotAuthDir, webbotauth.Path, "Web Bot Auth key directory", func(r *fetch.Response, now time.Time) signal.Verdict {
			return webbotauth.Grade(webbotauth.Response{URL: r.FinalURL, Status: r.Status, ContentType: r.Header.Get("Content-Type"), Body: r.Body,
				SignatureInput: r.Header.Get("Signature-Input"), Signature: r.Header.Get("Signature")}, now)
		}),
	},
	{
		ID: "ucp", Name: "UCP business profile", Group: report.GroupCommerce,
		LooksFor: "GET " + commerce.UCPPath + " (one request, in the first round): a Universal Commerce Protocol business profile (schema generations 2026-01-01, 2026-01-11 and 2026-04-08).",
		Rule:     "pass: a top-level `ucp` object with a valid version date, services with well-formed endpoints per transport, capabilities named by reverse domain, and no findings; partial: a JSON document that is not a UCP profile (an ACP or x402 document is named as such) or a profile with findings; na: nothing published (404, another status, an empty body, an HTML soft 404, or no answer at all).",
		Fix:      "Publish a profile at " + commerce.UCPPath + " whose `ucp` object has `version` (YYYY-MM-DD), a `services` map with an endpoint per transport and `capabilities` named by reverse domain (see ucp.dev).",
		Requires: []gather.AnyKey{gather.UCPProfile},
		Run: document(gather.UCPProfile, commerce.UCPPath, "UCP business profile", func(r *fetch.Response, _ time.Time) signal.Verdict {
			return commerce.GradeUCP(r.FinalURL, r.Status, r.Header.Get("Content-Type"), r.Body)
		}),
	},
	{
		ID: "acp", Name: "ACP discovery document", Group: report.GroupCommerce,
		LooksFor: "GET " + commerce.ACPPath + " (one request, in the first round): an Agentic Commerce Protocol discovery document.",
		Rule:     "pass: the discovery RFC's required members (`protocol.name` \"acp\" with a version, `api_base_url`, `transports`) with `api_base_url` on this site; partial: a pre-specification shape, a document missing required members, an `api_base_url` on another site, or a document of another protocol; na: nothing published (404, another status, an empty body, an HTML soft 404, or no answer at all).",
		Fix:      "Publish " + commerce.ACPPath + ` with {"protocol": {"name": "acp", "version": "<version>"}, "api_base_url": "https://…", "transports": ["rest"]}.`,
		Requires: []gather.AnyKey{gather.ACPDocument},
		Run: document(gather.ACPDocument, commerce.ACPPath, "ACP discovery document", func(r *fetch.Response, _ time.Time) signal.Verdict {
			return commerce.GradeACP(r.FinalURL, r.Status, r.Header.Get("Content-Type"), r.Body)
		}),
	},
	{
		ID: "ap2", Name: "AP2 extension of the A2A agent card", Group: report.GroupCommerce,
		LooksFor: "The A2A agent card check 1.2 already fetched (no request of its own): its `capabilities.extensions[]` entry for the Agent Payments Protocol.",
		Rule:     "pass: the card declares the extension with the URI the AP2 specification gives; partial: it names AP2 with another URI; na: no agent card, an unreadable card, or a card without the extension.",
		Fix:      `Declare {"uri": "` + commerce.AP2ExtensionURI + `", "params": {"roles": ["merchant"]}} in the agent card's capabilities.extensions.`,
		Requires: []gather.AnyKey{gather.AgentCard},
		Run: func(in gather.Source, _ time.Time) signal.Verdict {
			card := gather.Get(in, gather.AgentCard)
			if card == nil || !card.Resp.Found() {
				return commerce.GradeAP2("", nil)
			}
			return commerce.GradeAP2(card.Resp.FinalURL, card.Resp.Body)
		},
	},
	{
		ID: "mpp", Name: "Machine Payments Protocol challenge", Group: report.GroupCommerce,
		LooksFor: "What the scan already saw (no request of its own): every response carrying `WWW-Authenticate` (a 402 with a `Payment` challenge, draft-ryan-httpauth-payment), and the OpenAPI description's security schemes and documented 402 responses.",
		Rule:     "pass: a 402 carries a well-formed Payment challenge (id, realm, method, intent, request); partial: a Payment challenge that is malformed or comes with another status, or an OpenAPI `http` security scheme `Payment` with no challenge seen; na: neither (a 402 without a Payment challenge, such as x402's, is noted in the details).",
		Fix:      `Answer unpaid requests with 402 and WWW-Authenticate: Payment id="…", realm="…", method="…", intent="charge", request="<base64url JSON>", and declare the scheme in the OpenAPI description.`,
		Requires: []gather.AnyKey{gather.Responses, gather.BotAuthDir, gather.UCPProfile, gather.ACPDocument, gather.Spec},
		Run: func(in gather.Source, _ time.Time) signal.Verdict {
			var seen []commerce.Observed
			// Responses leaves out the signal documents (the scored checks
			// must not see them); a 402 there counts here.
			all := append(slices.Clone(gather.Get(in, gather.Responses)), gather.Get(in, gather.BotAuthDir), gather.Get(in, gather.UCPProfile), gather.Get(in, gather.ACPDocument))
			for _, r := range all {
				if r == nil || r.Err != nil {
					continue
				}
				if wa := r.Header.Values("WWW-Authenticate"); len(wa) > 0 || r.Status == http.StatusPaymentRequired {
					seen = append(seen, commerce.Observed{URL: r.FinalURL, Status: r.Status, WWWAuthenticate: wa})
				}
			}
			return commerce.GradeMPP(seen, gather.Get(in, gather.Spec).Spec)
		},
	},
}

// signalDetails are a verdict's findings as details ({"findings": […]}).
func signalDetails(findings []string) report.Details {
	if len(findings) == 0 {
		return nil
	}
	return report.ObjectDetails(map[string][]string{"findings": findings})
}
