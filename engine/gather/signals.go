package gather

import (
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/commerce"
	"github.com/agentready/agentready/engine/parse/webbotauth"
)

// The identity and commerce signals (not scored) cost at most three
// requests, one per well-known document. Each needs only the site's origin,
// so all three run in the first round beside the homepage and the scan keeps
// its dependent-round count. ap2 and mpp read what other gatherers fetched
// (the agent card, every response, the OpenAPI description) and ask for
// nothing.
var (
	BotAuthDir  = NewKey[*fetch.Response]("webbotauth-directory")
	UCPProfile  = NewKey[*fetch.Response]("ucp-profile")
	ACPDocument = NewKey[*fetch.Response]("acp-discovery")
)

const acceptBotAuth = webbotauth.MediaType + ",application/json;q=0.9,*/*;q=0.5"

var signalGatherers = []*Gatherer{
	Define(BotAuthDir, "GET "+webbotauth.Path+" (Web Bot Auth key directory, for the webbotauth signal).", nil,
		func(c *Ctx) (*fetch.Response, error) {
			return c.Fetch(fetch.Request{URL: c.URL(webbotauth.Path), Accept: acceptBotAuth, MaxBody: webbotauth.MaxBytes + 1}), nil
		}),
	Define(UCPProfile, "GET "+commerce.UCPPath+" (UCP business profile, for the ucp signal).", nil,
		func(c *Ctx) (*fetch.Response, error) {
			return c.Fetch(fetch.Request{URL: c.URL(commerce.UCPPath), Accept: acceptJSON, MaxBody: commerce.MaxBytes + 1}), nil
		}),
	Define(ACPDocument, "GET "+commerce.ACPPath+" (ACP discovery document, for the acp signal).", nil,
		func(c *Ctx) (*fetch.Response, error) {
			return c.Fetch(fetch.Request{URL: c.URL(commerce.ACPPath), Accept: acceptJSON, MaxBody: commerce.MaxBytes + 1}), nil
		}),
}

// withoutSignals leaves the signal documents out of Responses: the scored
// checks that read every response (rate-limit headers, 402 answers) must
// not judge a site by requests made only for the unscored signals. The mpp
// signal reads those documents separately.
func withoutSignals(c *Ctx, all []*fetch.Response) []*fetch.Response {
	skip := map[*fetch.Response]bool{Get(c, BotAuthDir): true, Get(c, UCPProfile): true, Get(c, ACPDocument): true}
	out := make([]*fetch.Response, 0, len(all))
	for _, r := range all {
		if !skip[r] {
			out = append(out, r)
		}
	}
	return out
}
