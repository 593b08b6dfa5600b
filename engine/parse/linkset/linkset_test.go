package linkset

import (
	"net/url"
	"testing"
)

func TestParseCatalog(t *testing.T) {
	base, _ := url.Parse("https://example.com/.well-known/api-catalog")
	ls, err := Parse([]byte(`{"linkset":[
	 {"anchor":"/api/v1","service-desc":[{"href":"/openapi.json","type":"application/json"}],"Service-Doc":[{"href":"https://example.com/docs"}]},
	 {"item":[{"href":"https://example.com/other"},{"title":"no href"}]},
	 {"anchor":"https://example.com/x","status":{"href":"/not-an-array"}}]}`), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Contexts) != 3 || ls.Contexts[0].Anchor != "https://example.com/api/v1" || !ls.Complete() {
		t.Fatalf("%+v", ls)
	}
	if got := ls.Targets("service-doc"); len(got) != 1 {
		t.Errorf("relation names are case-insensitive: %+v", got)
	}
	if got := ls.Targets("service-desc")[0].Href; got != "https://example.com/openapi.json" {
		t.Errorf("href resolved to %q", got)
	}
	if len(ls.Findings) != 3 {
		t.Errorf("findings %v: want missing anchor, target without href, non-array relation", ls.Findings)
	}
	if _, err := Parse([]byte(`{"links":[]}`), nil); err != ErrNotLinkset {
		t.Errorf("no linkset member: %v", err)
	}
}

func TestParseHeader(t *testing.T) {
	base, _ := url.Parse("https://example.com/")
	links := ParseHeader([]string{
		`</.well-known/api-catalog>; rel="api-catalog", <https://example.com/openapi.json>; rel="service-desc describedby"; type="application/json"`,
		`<llms.txt>;rel=alternate;type=text/markdown, <x>; title="a, b; c"; rel=next`,
	}, base)
	if len(links) != 4 {
		t.Fatalf("%d links: %+v", len(links), links)
	}
	if links[0].Href != "https://example.com/.well-known/api-catalog" || links[0].Rels[0] != "api-catalog" {
		t.Errorf("%+v", links[0])
	}
	if len(links[1].Rels) != 2 || links[1].Type != "application/json" {
		t.Errorf("space-separated rels: %+v", links[1])
	}
	if links[2].Type != "text/markdown" || links[3].Rels[0] != "next" {
		t.Errorf("unquoted params, quoted commas: %+v %+v", links[2], links[3])
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"linkset":[{"anchor":"https://a/","service-desc":[{"href":"/o.json"}]}]}`), `<a>; rel="x"; title="y, z"`)
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		if ls, err := Parse(body, nil); err == nil && len(ls.Contexts) > 1000 {
			t.Fatal("contexts unbounded")
		}
		if len(ParseHeader([]string{header}, nil)) > 500 {
			t.Fatal("header links unbounded")
		}
	})
}
