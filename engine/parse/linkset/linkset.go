package linkset

import (
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/internal/jsonerr"
)

// Target is one link target object.
type Target struct {
	Href  string `json:"href"`
	Type  string `json:"type,omitempty"`
	Title string `json:"title,omitempty"`
}

// Context is one link context object: an anchor and its relations.
type Context struct {
	Anchor string              `json:"anchor"`
	Rels   map[string][]Target `json:"rels"`
}

// Linkset is a parsed document.
type Linkset struct {
	Contexts []Context
	Findings []string
}

// ErrNotLinkset means the JSON has no `linkset` array.
var ErrNotLinkset = errors.New("JSON object without a `linkset` array")

// Parse reads a linkset; base resolves relative anchors and hrefs.
func Parse(body []byte, base *url.URL) (*Linkset, error) {
	var doc struct {
		Linkset json.RawMessage `json:"linkset"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, errors.New("not a JSON linkset: " + jsonerr.Describe(body, err))
	}
	var raw []map[string]json.RawMessage
	if len(doc.Linkset) == 0 || json.Unmarshal(doc.Linkset, &raw) != nil {
		return nil, ErrNotLinkset
	}
	ls := &Linkset{}
	for i, obj := range raw {
		if i >= 1000 {
			ls.Findings = append(ls.Findings, "more than 1000 context objects; the rest were ignored")
			break
		}
		c := Context{Rels: map[string][]Target{}}
		if a, ok := obj["anchor"]; ok {
			_ = json.Unmarshal(a, &c.Anchor)
			c.Anchor = resolve(c.Anchor, base)
		} else {
			ls.Findings = append(ls.Findings, "context object without `anchor`")
		}
		for rel, v := range obj {
			if rel == "anchor" {
				continue
			}
			var ts []Target
			if err := json.Unmarshal(v, &ts); err != nil {
				ls.Findings = append(ls.Findings, "relation "+rel+" is not an array of target objects")
				continue
			}
			for _, t := range ts {
				if t.Href == "" {
					ls.Findings = append(ls.Findings, "relation "+rel+" has a target without `href`")
					continue
				}
				t.Href = resolve(t.Href, base)
				c.Rels[strings.ToLower(rel)] = append(c.Rels[strings.ToLower(rel)], t)
			}
		}
		ls.Contexts = append(ls.Contexts, c)
	}
	return ls, nil
}

func resolve(ref string, base *url.URL) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ref
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u.String()
}

// Targets returns every target of rel across contexts.
func (l *Linkset) Targets(rel string) []Target {
	var out []Target
	for _, c := range l.Contexts {
		out = append(out, c.Rels[rel]...)
	}
	return out
}

// Complete reports a context with an anchor and a service-desc target.
func (l *Linkset) Complete() bool {
	for _, c := range l.Contexts {
		if c.Anchor != "" && len(c.Rels["service-desc"]) > 0 {
			return true
		}
	}
	return false
}

// Relations lists the relation names used, sorted.
func (l *Linkset) Relations() []string {
	seen := map[string]bool{}
	for _, c := range l.Contexts {
		for r := range c.Rels {
			seen[r] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// HeaderLink is one link of an HTTP Link header field.
type HeaderLink struct {
	Href string
	Rels []string
	Type string
}

// ParseHeader parses RFC 8288 Link header values; base resolves references.
func ParseHeader(values []string, base *url.URL) []HeaderLink {
	var out []HeaderLink
	for _, v := range values {
		for len(v) > 0 && len(out) < 500 {
			v = strings.TrimLeft(v, " \t,")
			if !strings.HasPrefix(v, "<") {
				break
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			l := HeaderLink{Href: resolve(v[1:end], base)}
			v = v[end+1:]
			// parameters until the next top-level comma
			for {
				v = strings.TrimLeft(v, " \t")
				if !strings.HasPrefix(v, ";") {
					break
				}
				v = strings.TrimLeft(v[1:], " \t")
				eq := strings.IndexAny(v, "=;,")
				name := v
				if eq >= 0 {
					name = v[:eq]
				}
				name = strings.ToLower(strings.TrimSpace(name))
				val := ""
				if eq >= 0 && v[eq] == '=' {
					v = strings.TrimLeft(v[eq+1:], " \t")
					if strings.HasPrefix(v, "\"") {
						j := 1
						for j < len(v) && v[j] != '"' {
							if v[j] == '\\' {
								j++
							}
							j++
						}
						if j >= len(v) {
							val, v = v[1:], ""
						} else {
							val, v = v[1:j], v[j+1:]
						}
					} else {
						k := strings.IndexAny(v, ";,")
						if k < 0 {
							k = len(v)
						}
						val, v = strings.TrimSpace(v[:k]), v[k:]
					}
				} else if eq >= 0 {
					v = v[eq:]
				} else {
					v = ""
				}
				switch name {
				case "rel":
					l.Rels = append(l.Rels, strings.Fields(strings.ToLower(val))...)
				case "type":
					l.Type = strings.ToLower(val)
				}
			}
			out = append(out, l)
		}
	}
	return out
}
