package stack_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
)

var updateCatalog = flag.Bool("update", false, "rewrite edge/site/catalog.json from engine/checks")

// catalogJSON is the check catalog the edge renders /how-we-score and the
// starter snippets from: the edge may not import engine/, so `make docs`
// writes it from the same definitions as docs/checks.md.
func catalogJSON(t *testing.T) []byte {
	t.Helper()
	var cat edge.Catalog
	for _, l := range report.Levels[:4] {
		cat.Levels = append(cat.Levels, edge.CatalogLevel{Number: l.Number, Name: l.Name, Description: l.Description})
	}
	for _, c := range checks.Web() {
		d := c.Definition
		cat.Checks = append(cat.Checks, edge.CatalogCheck{ID: d.ID, Level: d.Level, Name: d.Name, Category: d.Category,
			LooksFor: d.LooksFor, Rule: d.Rule, Fix: d.Fix, Effort: string(d.Effort), Snippet: d.Snippet})
	}
	b, err := json.MarshalIndent(cat, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestEdgeCatalogIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "edge", "site", "catalog.json")
	got := catalogJSON(t)
	if *updateCatalog {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != string(got) {
		t.Fatalf("edge/site/catalog.json is out of date: run `make docs` (%v)", err)
	}
}

// The edge fills a starter snippet in for a site exactly as the engine does.
func TestEdgeStartersMatchEngine(t *testing.T) {
	sites := []string{"https://www.acme.example:8443/", "http://127.0.0.1:8080", "https://shop.example.co.uk/path?q=1", "https://{origin}.example/", "not a url", "ftp://x.example/"}
	n := 0
	for _, c := range checks.Web() {
		if c.Snippet == "" {
			continue
		}
		for _, s := range sites {
			n++
			if got, want := edge.Starter(c.Snippet, s), c.Starter(s); got != want {
				t.Errorf("check %s, site %q: the edge fills in %q, the engine %q", c.ID, s, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no web check has a starter snippet: the test compares nothing")
	}
}
