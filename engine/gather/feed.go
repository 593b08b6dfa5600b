package gather

import (
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/xmldoc"
	"github.com/agentready/agentready/engine/weburl"
)

// The feed family: the RSS, Atom or JSON Feed the homepage links, else the
// first feed at a common path. Its check is in engine/checks/feed.go.

// FeedDoc is the feed linked from the homepage, else found at a common path.
type FeedDoc struct {
	Resp   *fetch.Response // nil when the linked feed is on another site
	Linked bool
	Info   xmldoc.Info
}

var feedGatherer = Define(Feed, "The feed the homepage links (<link rel=alternate> RSS, Atom or JSON Feed), else the first feed at a common path.", []AnyKey{Home},
	func(c *Ctx) (*FeedDoc, error) {
		home := Get(c, Home)
		out := &FeedDoc{}
		if home.Page != nil {
			for _, l := range home.Page.Links {
				if !l.HasRel("alternate") || l.Href == "" {
					continue
				}
				if strings.Contains(l.Type, "rss") || strings.Contains(l.Type, "atom") || strings.Contains(l.Type, "feed+json") {
					out.Linked = true
					if weburl.SameSite(c.Site.Target, l.Href) {
						out.Resp = c.Fetch(fetch.Request{URL: l.Href, Accept: acceptFeed})
						out.Info = feedInfo(out.Resp)
					}
					return out, nil
				}
			}
		}
		reqs := make([]fetch.Request, len(FeedPaths))
		for i, p := range FeedPaths {
			reqs[i] = fetch.Request{URL: c.URL(p), Accept: acceptFeed}
		}
		all := c.FetchAll(reqs)
		out.Resp = all[0]
		for _, r := range all {
			if info := feedInfo(r); info.Kind.IsFeed() {
				out.Resp, out.Info = r, info
				break
			}
		}
		return out, nil
	})

func feedInfo(r *fetch.Response) xmldoc.Info {
	if r == nil || !r.OK() || !r.Complete() {
		return xmldoc.Info{}
	}
	return xmldoc.Detect(r.Body)
}
