package xmldoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

func TestCorpus(t *testing.T) {
	cases := map[string]Info{
		"feeds/supabase-changelog-multigres.xml": {RSS, 2, true},
		"sitemaps/llmstxt-org.xml":               {URLSet, 6, true},
		"sitemaps/supabase-index.xml":            {SitemapIndex, 2, true},
	}
	corpus := testenv.Shared(t, "corpus")
	for f, want := range cases {
		b, err := os.ReadFile(filepath.Join(corpus, f))
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(b); got != want {
			t.Errorf("%s: %+v, want %+v", f, got, want)
		}
	}
}

func TestKinds(t *testing.T) {
	cases := []struct {
		body string
		want Info
	}{
		{`<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>a</title></entry></feed>`, Info{Atom, 1, true}},
		{`{"version":"https://jsonfeed.org/version/1.1","title":"t","items":[{"id":"1"}]}`, Info{JSONFeed, 1, true}},
		{`<rss><channel><item>`, Info{RSS, 1, false}},
		{`<html><body>not a feed</body></html>`, Info{}},
		{`{"version":"1","items":[]}`, Info{}},
		{`<urlset><url><loc>https://a/</loc></url>`, Info{URLSet, 1, false}},
	}
	for _, c := range cases {
		if got := Detect([]byte(c.body)); got != c.want {
			t.Errorf("%.40s: %+v, want %+v", c.body, got, c.want)
		}
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte(`<rss><channel><item/></channel></rss>`))
	f.Add([]byte(strings.Repeat("<a>", 1000)))
	f.Fuzz(func(t *testing.T, b []byte) {
		info := Detect(b)
		if info.Valid && info.Kind == None {
			t.Fatal("valid without a kind")
		}
	})
}
