package checks

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/repo"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// gatherSite runs the web plan over a fixture site served on loopback.
func gatherSite(t *testing.T, dir string) *gather.Set {
	t.Helper()
	site, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	target, _ := url.Parse(site.URL + "/")
	client := fetch.NewClient(fetch.Config{Policy: loopback.Policy()})
	sess := client.NewSession()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set, err := gather.WebPlan.Run(ctx, sess, gather.Site{Target: target, Origin: site.URL, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return set
}

// runRecording runs c over set through a view that records every artifact
// the check asks for; a read of an undeclared artifact panics in Get and is
// returned as an error.
func runRecording(c *Check, set *gather.Set, read map[string]bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	c.Run(gather.View(set, c.Requires, func(name string) { read[name] = true }))
	return nil
}

// Every check's Requires is exact: over the fixture sites (web checks) and
// fixture repositories (level 5), no check reads an artifact it did not
// declare, and every artifact it declares is read on at least one of them.
// A stale Requires would either crash a check at run time or hide a real
// dependency from the driver.
func TestRequiresAreExact(t *testing.T) {
	testenv.Quick(t, "the exhaustive requires check (every check over every fixture site with each artifact withheld)")
	var sets []*gather.Set
	sites, _ := filepath.Glob("../../testdata/sites/*/_expect.json")
	if len(sites) < 5 {
		t.Fatalf("%d fixture sites", len(sites))
	}
	for _, exp := range sites {
		sets = append(sets, gatherSite(t, filepath.Dir(exp)))
	}
	repos, _ := filepath.Glob("../../testdata/repos/*/_expect.json")
	if len(repos) < 3 {
		t.Fatalf("%d fixture repositories", len(repos))
	}
	for _, exp := range repos {
		found, _, err := repo.Walk(context.Background(), filepath.Dir(exp), repo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		set := gather.NewSet(gather.Site{})
		gather.Put(set, repo.Evidence, found)
		sets = append(sets, set)
	}
	for _, c := range All() {
		used := map[string]bool{}
		judged := 0
		for _, set := range sets {
			if !allPresent(set, c.Requires) {
				continue // a web check over a repository's set, or the reverse
			}
			judged++
			read := map[string]bool{}
			if err := runRecording(c, set, read); err != nil {
				t.Errorf("%s: %v", c.ID, err)
			}
			for name := range read {
				if !declares(c, name) {
					t.Errorf("%s reads %q without declaring it in Requires", c.ID, name)
				}
				used[name] = true
			}
		}
		if judged == 0 {
			t.Errorf("%s: no fixture provides its inputs", c.ID)
			continue
		}
		var unused []string
		for _, k := range c.Requires {
			if !used[k.Name()] {
				unused = append(unused, k.Name())
			}
		}
		sort.Strings(unused)
		if len(unused) > 0 {
			t.Errorf("%s declares %v but never reads them on any fixture", c.ID, unused)
		}
	}
}

func allPresent(set *gather.Set, keys []gather.AnyKey) bool {
	for _, k := range keys {
		if !gather.Has(set, k) {
			return false
		}
	}
	return true
}

func declares(c *Check, name string) bool {
	for _, k := range c.Requires {
		if k.Name() == name {
			return true
		}
	}
	return false
}
