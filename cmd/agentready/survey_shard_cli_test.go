package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/survey"
)

// Once, `survey --shard 1/2` and `2/2` over a list of local sites
// with --allow-private wrote 0 lines each, and `survey merge` exited 2.
// Every site of such a list is on 127.0.0.1, so keyed by the host alone
// they all fell into one shard (the other wrote 0 lines and said only
// "Surveyed 0 sites"); 2/2 is past the last shard (they count from 0) and
// was refused with a message that did not say so; and the merge found no
// survey in 2/2's directory (2/2 is now read as 0/2). These tests run the built binary as a user
// does, on loopback fixture sites.
func TestSurveyShardCLI(t *testing.T) {
	bin := madeCLI(t, "")

	// The documented split of a list of local sites: each shard surveys the
	// sites whose host:port hashes (FNV-1a) to its index, the union is the
	// list, each site once, and the merge counts every site.
	t.Run("local sites split over two shards and merged", func(t *testing.T) {
		dir := t.TempDir()
		sites, perShard, list := localSites(t, dir)
		union := map[string]string{}
		var dirs []string
		for i := 0; i < 2; i++ {
			shard := fmt.Sprintf("%d/2", i)
			out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
			dirs = append(dirs, out)
			code, stdout, stderr := runBinary(t, bin, "survey", "--in", list, "--out", out, "--shard", shard, "--allow-private", "--concurrency", "4", "--contact", "mailto:survey@example.org")
			if code != exitOK {
				t.Fatalf("--shard %s: exit %d\nstdout: %s\nstderr: %s", shard, code, stdout, stderr)
			}
			got := resultURLs(t, filepath.Join(out, survey.ResultsFile))
			for _, u := range got {
				if other, dup := union[u]; dup {
					t.Errorf("%s surveyed by shard %s and by %s", u, other, shard)
				}
				union[u] = shard
				if !perShard[i][u] {
					t.Errorf("shard %s surveyed %s, which the documented rule (FNV-1a of host:port) gives to the other shard", shard, u)
				}
			}
			if len(got) != len(perShard[i]) {
				t.Errorf("shard %s wrote %d results, the documented rule gives it %d sites: %v", shard, len(got), len(perShard[i]), got)
			}
			if want := fmt.Sprintf("Shard %s: %d ", shard, len(got)); !strings.Contains(stdout, want) {
				t.Errorf("shard %s does not say what it drew (%q):\n%s", shard, want, stdout)
			}
		}
		if len(union) != len(sites) {
			t.Errorf("the shards surveyed %d distinct sites of the list's %d", len(union), len(sites))
		}
		for _, u := range sites {
			if union[u] == "" {
				t.Errorf("no shard surveyed %s", u)
			}
		}

		merged := filepath.Join(dir, "merged")
		code, stdout, stderr := runBinary(t, bin, append(append([]string{"survey", "merge"}, dirs...), "--out", merged)...)
		if code != exitOK {
			t.Fatalf("merge: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if want := fmt.Sprintf("Surveyed %d sites: %d judged, 0 unreachable", len(sites), len(sites)); !strings.Contains(stdout, want) {
			t.Errorf("merge stdout lacks %q:\n%s", want, stdout)
		}
		if want := fmt.Sprintf("Merged 2 shards of local-sites.txt: 0/2 (%d ", len(perShard[0])); !strings.Contains(stdout, want) {
			t.Errorf("merge does not say what it merged (%q):\n%s", want, stdout)
		}
		ad := readAdoption(t, merged)
		if ad.Listed != len(sites) || ad.Sites != len(sites) || ad.Unreachable != 0 || len(ad.Methods.Shards) != 2 {
			t.Errorf("merged adoption: listed %d, judged %d, unreachable %d, %d shards; want %d sites of 2 shards", ad.Listed, ad.Sites, ad.Unreachable, len(ad.Methods.Shards), len(sites))
		}
	})

	// A shard that draws none of the list's sites exits 0, keeps an empty
	// result for the merge, and says that it had nothing to scan.
	t.Run("a shard with nothing to scan says so", func(t *testing.T) {
		dir := t.TempDir()
		u := site(t, "peer") + "/"
		list := filepath.Join(dir, "one-site.txt")
		if err := os.WriteFile(list, []byte(u+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var dirs []string
		results := 0
		for i := 0; i < 2; i++ {
			shard := fmt.Sprintf("%d/2", i)
			out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
			dirs = append(dirs, out)
			code, stdout, stderr := runBinary(t, bin, "survey", "--in", list, "--out", out, "--shard", shard, "--allow-private", "--contact", "mailto:survey@example.org")
			if code != exitOK {
				t.Fatalf("--shard %s: exit %d\nstdout: %s\nstderr: %s", shard, code, stdout, stderr)
			}
			got := resultURLs(t, filepath.Join(out, survey.ResultsFile))
			results += len(got)
			said := strings.Contains(stdout, "Shard "+shard+" had nothing to scan: the list's only entry belongs to another shard")
			if len(got) == 0 && !said {
				t.Errorf("shard %s wrote no result and did not say it had nothing to scan:\n%s", shard, stdout)
			}
			if len(got) > 0 && said {
				t.Errorf("shard %s wrote %d results and says it had nothing to scan:\n%s", shard, len(got), stdout)
			}
		}
		if results != 1 {
			t.Errorf("the two shards wrote %d results for the list's one site", results)
		}
		merged := filepath.Join(dir, "merged")
		code, stdout, stderr := runBinary(t, bin, "survey", "merge", dirs[0], dirs[1], "--out", merged)
		if code != exitOK || !strings.Contains(stdout, "Surveyed 1 sites: 1 judged") || !strings.Contains(stdout, "Merged 2 shards of one-site.txt") {
			t.Fatalf("merge: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if ad := readAdoption(t, merged); ad.Listed != 1 {
			t.Errorf("merged adoption lists %d sites, want 1", ad.Listed)
		}
	})

	// Those commands, 1/2 and 2/2 (a split counted from 1): 2/2 is
	// read as 0/2, so the two runs cover the list, each site once, and the
	// merge counts every site.
	t.Run("shards counted from 1 cover the list", func(t *testing.T) {
		dir := t.TempDir()
		sites, _, list := localSites(t, dir)
		union := map[string]bool{}
		var dirs []string
		for _, shard := range []string{"1/2", "2/2"} {
			out := filepath.Join(dir, "shard-"+shard[:1])
			dirs = append(dirs, out)
			code, stdout, stderr := runBinary(t, bin, "survey", "--shard", shard, "--allow-private", "--in", list, "--out", out, "--concurrency", "4", "--contact", "mailto:survey@example.org")
			if code != exitOK {
				t.Fatalf("--shard %s: exit %d\nstdout: %s\nstderr: %s", shard, code, stdout, stderr)
			}
			for _, u := range resultURLs(t, filepath.Join(out, survey.ResultsFile)) {
				if union[u] {
					t.Errorf("%s surveyed twice", u)
				}
				union[u] = true
			}
		}
		if len(union) != len(sites) {
			t.Errorf("1/2 and 2/2 surveyed %d of the list's %d sites", len(union), len(sites))
		}
		merged := filepath.Join(dir, "merged")
		code, stdout, stderr := runBinary(t, bin, append(append([]string{"survey", "merge"}, dirs...), "--out", merged)...)
		if code != exitOK || readAdoption(t, merged).Listed != len(sites) {
			t.Fatalf("merge: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})

	// A shard past the last is refused with exit 2 before anything is
	// written, naming the shards of the split; a merge given its
	// directory names the directory that holds no survey.
	t.Run("a shard past the last names the shards", func(t *testing.T) {
		dir := t.TempDir()
		list := filepath.Join(dir, "list.txt")
		if err := os.WriteFile(list, []byte("http://127.0.0.1:1/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "shard-3")
		code, stdout, stderr := runBinary(t, bin, "survey", "--shard", "3/2", "--allow-private", "--in", list, "--out", out)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "shards count from 0, so the 2 shards of this split are 0/2 and 1/2") {
			t.Errorf("--shard 3/2: exit %d, stdout %q, stderr %q; want %d and the shards named", code, stdout, stderr, exitUsage)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused run created its --out (%v)", err)
		}
		code, _, stderr = runBinary(t, bin, "survey", "merge", out, "--out", filepath.Join(dir, "merged"))
		if code != exitUsage || !strings.Contains(stderr, out+" holds no survey (it has no survey.json)") {
			t.Errorf("merge of a directory without a survey: exit %d, stderr %q", code, stderr)
		}
	})
}

// localSites starts loopback fixture sites until each shard of two holds
// at least one by the documented rule (more than one round is rare; a
// split that put them all in one shard would then show), and writes their
// list.
func localSites(t *testing.T, dir string) (sites []string, perShard [2]map[string]bool, list string) {
	t.Helper()
	fixtures := []string{"full", "partial", "peer", "empty", "spa", "markup", "soft404"}
	perShard = [2]map[string]bool{{}, {}}
	for i := 0; len(sites) < 3 || len(perShard[0]) == 0 || len(perShard[1]) == 0; i++ {
		if i == 24 {
			t.Fatalf("24 local sites, and one shard of two holds none: %v", perShard)
		}
		u := site(t, fixtures[i%len(fixtures)]) + "/"
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, u)
		perShard[shardOfKey(pu.Host, 2)][u] = true
	}
	list = filepath.Join(dir, "local-sites.txt")
	if err := os.WriteFile(list, []byte("# local fixture sites\n"+strings.Join(sites, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sites, perShard, list
}

// shardOfKey is the documented shard of a site's key among n: FNV-1a
// (64-bit) of its bytes modulo n.
func shardOfKey(key string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(n))
}

// resultURLs is the url of every line of a results file.
func resultURLs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var urls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			URL   string `json:"url"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.URL == "" {
			t.Fatalf("%s: a line that is not a result: %q", path, sc.Text())
		}
		if r.Error != "" {
			t.Errorf("%s: %s was not reached: %s", path, r.URL, r.Error)
		}
		urls = append(urls, r.URL)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return urls
}

func readAdoption(t *testing.T, dir string) *survey.Adoption {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, survey.AdoptionFile))
	if err != nil {
		t.Fatal(err)
	}
	var ad survey.Adoption
	if err := json.Unmarshal(b, &ad); err != nil {
		t.Fatal(err)
	}
	return &ad
}
