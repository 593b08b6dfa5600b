package survey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testQueue connects to a fresh survey of a name of its own, deleted at the
// end of the test.
func testQueue(t *testing.T, url string) *redisQueue {
	t.Helper()
	name := fmt.Sprintf("test-%d", time.Now().UnixNano())
	q, err := dialQueue(context.Background(), url, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		q.c.Del(context.Background(), q.keys.stream, q.keys.meta, q.keys.workers)
		q.Close()
	})
	return q
}

// writeTestList writes a plain list of n sites of n/2 registrable domains,
// with a duplicate and an invalid line, and its account as prepass makes it.
func writeTestList(t *testing.T, n int) (string, queueMeta) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# a list\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "s%d.d%d.example\n", i, i/2)
	}
	b.WriteString("s1.d0.example\nnot a site\n")
	path := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	info, total, skipped, err := prepass(path, Shard{}, filepath.Join(t.TempDir(), SkippedFile))
	if err != nil {
		t.Fatal(err)
	}
	if total != n || skipped != (SkipCounts{Duplicates: 1, Invalid: 1}) {
		t.Fatalf("prepass: %d sites, %+v", total, skipped)
	}
	return path, queueMeta{List: info, Sites: total, Skipped: skipped}
}

// Loading is idempotent: loaders racing over one list, and a loader run
// again, put each site in the stream once, in list order, with its line
// as the entry's ID; another list under the same name is refused.
func TestSurveyQueueLoadsAListOnce(t *testing.T) {
	t.Parallel()
	list, meta := writeTestList(t, 1300) // more than two pipelines' worth
	meta.ClaimIdle = 42 * time.Second
	for name, url := range QueueURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := testQueue(t, url)
			var wg sync.WaitGroup
			added := make([]int, 3)
			errs := make([]error, 3)
			for i := range added {
				wg.Add(1)
				go func() {
					defer wg.Done()
					added[i], errs[i] = q.load(ctx, list, meta)
				}()
			}
			wg.Wait()
			total := 0
			for i := range added {
				if errs[i] != nil {
					t.Fatalf("loader %d: %v", i, errs[i])
				}
				total += added[i]
			}
			xi, err := q.c.XInfoStream(ctx, q.keys.stream).Result()
			if err != nil {
				t.Fatal(err)
			}
			if total != 1300 || xi.Length != 1300 || xi.EntriesAdded != 1300 {
				t.Errorf("three loaders added %v (%d), the stream holds %d of %d added; want 1300 once", added, total, xi.Length, xi.EntriesAdded)
			}
			if xi.FirstEntry.ID != "2-0" || xi.LastEntry.ID != "1301-0" {
				t.Errorf("entries %s…%s, want the list's lines 2…1301", xi.FirstEntry.ID, xi.LastEntry.ID)
			}
			it, err := parseEntry(xi.FirstEntry.ID, xi.FirstEntry.Values)
			if err != nil || it.Line != 2 || it.URL != "https://s1.d0.example/" || it.Rank != 1 || it.Site != "d0.example" {
				t.Errorf("first entry %+v: %v", it, err)
			}
			got, ok, err := q.meta(ctx)
			if err != nil || !ok || !got.Loaded || got.List != meta.List || got.Sites != 1300 || got.Skipped != meta.Skipped || got.ClaimIdle != meta.ClaimIdle {
				t.Errorf("meta %+v (ok %v, %v), want %+v loaded", got, ok, err, meta)
			}
			if n, err := q.load(ctx, list, meta); n != 0 || err != nil {
				t.Errorf("loaded again: %d added, %v", n, err)
			}
			other, otherMeta := writeTestList(t, 3)
			if _, err := q.load(ctx, other, otherMeta); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "another list") {
				t.Errorf("another list under the same name: %v", err)
			}
		})
	}
}

// A loader that stopped half way (here: the stream holds the first lines
// only) is continued by the next: the missing lines are added, none twice.
func TestSurveyQueueLoadContinuesAStoppedLoader(t *testing.T) {
	t.Parallel()
	list, meta := writeTestList(t, 40)
	for name, url := range QueueURLs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := testQueue(t, url)
			if err := claimScript.Run(ctx, q.c, []string{q.keys.meta}, meta.fields()...).Err(); err != nil {
				t.Fatal(err)
			}
			for line := 2; line <= 11; line++ {
				if err := q.c.XAdd(ctx, &redis.XAddArgs{Stream: q.keys.stream, ID: fmt.Sprintf("%d-0", line), Values: []any{"url", fmt.Sprintf("https://s%d.d%d.example/", line-1, (line-1)/2), "rank", line - 1}}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			n, err := q.load(ctx, list, meta)
			if err != nil || n != 30 {
				t.Fatalf("the second loader added %d, %v; want the 30 missing", n, err)
			}
			if xi, _ := q.c.XInfoStream(ctx, q.keys.stream).Result(); xi.Length != 40 || xi.EntriesAdded != 40 {
				t.Errorf("%+v", xi)
			}
		})
	}
}

// Every key of a survey hashes to one slot of a Cluster.
func TestSurveyQueueKeysShareASlot(t *testing.T) {
	k := keysFor("top-200k.2026")
	slot := func(key string) string {
		i := strings.IndexByte(key, '{')
		j := strings.IndexByte(key[i:], '}')
		return key[i+1 : i+j]
	}
	for _, key := range []string{k.stream, k.meta, k.workers, k.lease + "example.com"} {
		if slot(key) != "top-200k.2026" {
			t.Errorf("%s: hash tag %q", key, slot(key))
		}
	}
}

func TestSurveyQueueNames(t *testing.T) {
	for name, ok := range map[string]bool{"top-200k": true, "a": true, "0abc_def.1": true, "": false, "-x": false, "a{b}": false, "a b": false, strings.Repeat("x", 101): false} {
		if got := CheckQueueName(name) == nil; got != ok {
			t.Errorf("%q: accepted %v", name, got)
		}
	}
	for name, ok := range map[string]bool{"pod-7": true, "host-123": true, "a b": false, "": false, "é": false} {
		if got := CheckWorkerName(name) == nil; got != ok {
			t.Errorf("worker %q: accepted %v", name, got)
		}
	}
}

func TestSurveyQueueParseEntry(t *testing.T) {
	for _, c := range []struct {
		id, url, rank string
		ok            bool
	}{
		{"4-0", "https://example.com/", "3", true},
		{"4-0", "http://127.0.0.1:8080/", "0", true},
		{"4-1", "https://example.com/", "3", false},
		{"04-0", "https://example.com/", "3", false},
		{"0-0", "https://example.com/", "3", false},
		{"4-0", "https://EXAMPLE.com", "3", false}, // not as a loader writes it
		{"4-0", "ftp://example.com/", "3", false},
		{"4-0", "https://example.com/", "-1", false},
		{"4-0", "", "3", false},
	} {
		_, err := parseEntry(c.id, map[string]any{"url": c.url, "rank": c.rank})
		if (err == nil) != c.ok {
			t.Errorf("%s %s %s: %v", c.id, c.url, c.rank, err)
		}
	}
}

// FuzzParseQueueEntry: whatever a stream entry holds, it is a site the
// scanner reads, with its list line, or a refusal; never a panic.
func FuzzParseQueueEntry(f *testing.F) {
	f.Add("4-0", "https://example.com/", "3")
	f.Add("12-0", "http://[::1]:8080/", "0")
	f.Add("1-0", "https://xn--bcher-kva.example/", "99999999999999999999")
	f.Fuzz(func(t *testing.T, id, url, rank string) {
		it, err := parseEntry(id, map[string]any{"url": url, "rank": rank})
		if err != nil {
			if strings.Contains(err.Error(), url) && len(url) > 40 {
				t.Fatalf("the refusal repeats the entry: %v", err)
			}
			return
		}
		if it.Line < 1 || it.Rank < 0 || it.URL != url || it.Site == "" {
			t.Fatalf("%+v from %q %q %q", it, id, url, rank)
		}
	})
}

// FuzzParseQueueMeta: a survey's account read back from Redis is one a
// loader could have written, or a refusal.
func FuzzParseQueueMeta(f *testing.F) {
	f.Add(strings.Repeat("a", 64), "list.csv", "csv", "10", "8", "1", "1", "1", "30000")
	f.Fuzz(func(t *testing.T, sha, name, format, lines, sites, dups, invalid, loaded, claimIdle string) {
		m, err := parseMeta(map[string]string{"sha256": sha, "name": name, "format": format, "lines": lines,
			"sites": sites, "duplicates": dups, "invalid": invalid, "loaded": loaded, "claim_idle_ms": claimIdle})
		if err != nil {
			return
		}
		if m.Sites > m.List.Lines || m.Sites < 0 || m.Skipped.Duplicates < 0 || m.Skipped.Invalid < 0 || len(m.List.SHA256) != 64 || m.ClaimIdle < 0 || m.ClaimIdle > 24*time.Hour {
			t.Fatalf("%+v", m)
		}
	})
}
