package xmldoc

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
)

// Kind of document.
type Kind string

const (
	None         Kind = ""
	RSS          Kind = "rss"
	Atom         Kind = "atom"
	RDF          Kind = "rss1.0"
	JSONFeed     Kind = "jsonfeed"
	URLSet       Kind = "urlset"
	SitemapIndex Kind = "sitemapindex"
)

// IsFeed reports a feed kind.
func (k Kind) IsFeed() bool { return k == RSS || k == Atom || k == RDF || k == JSONFeed }

// IsSitemap reports a sitemap kind.
func (k Kind) IsSitemap() bool { return k == URLSet || k == SitemapIndex }

// Info is what Detect learned.
type Info struct {
	Kind    Kind `json:"kind"`
	Entries int  `json:"entries"` // items/entries, or url/sitemap children (counted up to 100000)
	Valid   bool `json:"valid"`   // the whole document parsed
}

// Detect classifies body.
func Detect(body []byte) Info {
	t := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if bytes.HasPrefix(t, []byte("{")) {
		var jf struct {
			Version string            `json:"version"`
			Items   []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(t, &jf) == nil && strings.Contains(jf.Version, "jsonfeed.org") && jf.Items != nil {
			return Info{Kind: JSONFeed, Entries: len(jf.Items), Valid: true}
		}
		return Info{}
	}
	dec := xml.NewDecoder(bytes.NewReader(t))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	info := Info{}
	depth := 0
	for tokens := 0; tokens < 2_000_000; tokens++ {
		tok, err := dec.Token()
		if err == io.EOF {
			info.Valid = info.Kind != None && depth == 0
			return info
		}
		if err != nil {
			return info
		}
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			name := strings.ToLower(e.Name.Local)
			if depth == 1 {
				switch name {
				case "rss":
					info.Kind = RSS
				case "feed":
					info.Kind = Atom
				case "rdf":
					info.Kind = RDF
				case "urlset":
					info.Kind = URLSet
				case "sitemapindex":
					info.Kind = SitemapIndex
				default:
					return info
				}
				continue
			}
			switch {
			case (info.Kind == RSS || info.Kind == RDF) && name == "item",
				info.Kind == Atom && name == "entry" && depth == 2,
				info.Kind == URLSet && name == "url" && depth == 2,
				info.Kind == SitemapIndex && name == "sitemap" && depth == 2:
				if info.Entries < 100000 {
					info.Entries++
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	return info
}
