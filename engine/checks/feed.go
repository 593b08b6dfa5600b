package checks

import (
	"fmt"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/xmldoc"
)

// Checks of the feed family (engine/gather/feed.go): the RSS, Atom or JSON
// Feed (1.14).

func feed(in gather.Source) Outcome {
	doc := gather.Get(in, gather.Feed)
	r, info := doc.Resp, doc.Info
	if doc.Linked && r == nil {
		return partial("The homepage links a feed on another site, which the scanner does not fetch.", "Serve the feed from your own site.", nil, "")
	}
	if info.Kind.IsFeed() {
		how := "at " + r.RequestURL
		if doc.Linked {
			how = "linked from the homepage"
		}
		return pass(fmt.Sprintf("%s feed with %s, %s.", feedName[info.Kind], plural(info.Entries, "entry", "entries"), how), info, at(r))
	}
	if doc.Linked {
		return partial("The homepage links a feed, but "+r.RequestURL+" is not a valid feed ("+absence(r)+").", "Make the linked feed URL serve valid RSS, Atom or JSON Feed.", probeOf(r), at(r))
	}
	msg := "No feed is linked from the homepage or served at /feed, /feed.xml, /rss.xml, /atom.xml, /index.xml, /rss"
	if r != nil && r.OK() && !r.Complete() {
		msg += " (" + r.RequestURL + " " + absence(r) + ")"
	}
	return fail(msg+".", "", map[string]any{"tried": gather.FeedPaths})
}

var feedName = map[xmldoc.Kind]string{xmldoc.RSS: "An RSS", xmldoc.RDF: "An RSS 1.0", xmldoc.Atom: "An Atom", xmldoc.JSONFeed: "A JSON Feed"}
