package survey

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
)

// The shard of a domain is fixed by its bytes: FNV-1a as the standard
// library computes it, modulo N, pinned here so that no change (of Go, of
// this code) moves a site to another shard between machines.
func TestShardOfIsStable(t *testing.T) {
	for _, d := range []string{"example.com", "example.co.uk", "xn--bcher-kva.example", "127.0.0.1", ""} {
		h := fnv.New64a()
		h.Write([]byte(d))
		if got, want := fnv1a(d), h.Sum64(); got != want {
			t.Errorf("fnv1a(%q) = %x, hash/fnv says %x", d, got, want)
		}
	}
	pinned := map[string][3]int{ // ShardOf for N = 2, 4, 16
		"example.com":   {0, 2, 6},
		"example.org":   {1, 1, 1},
		"google.com":    {1, 1, 5},
		"example.co.uk": {1, 3, 11},
	}
	for d, want := range pinned {
		got := [3]int{ShardOf(d, 2), ShardOf(d, 4), ShardOf(d, 16)}
		if got != want {
			t.Errorf("ShardOf(%q) = %v, pinned %v", d, got, want)
		}
	}
}

// Shards partition a list: every item and every skip of the whole list is
// in exactly one shard, and the shards together hold nothing else.
func TestShardsPartitionTheList(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		switch {
		case i%97 == 0:
			fmt.Fprintf(&b, "not valid %d\n", i)
		case i%31 == 0:
			fmt.Fprintf(&b, "site%d.example\n", i/2) // a duplicate, or not
		case i%7 == 0:
			fmt.Fprintf(&b, "www.site%d.example\n", i-1) // shares site i-1's registrable domain
		default:
			fmt.Fprintf(&b, "site%d.example\n", i)
		}
	}
	list := b.String()
	collect := func(s Shard) map[string]bool {
		out := map[string]bool{}
		src := newSource(strings.NewReader(list), s)
		for {
			it, sk, err := src.next()
			if err != nil {
				return out
			}
			key := ""
			if it != nil {
				if ShardOf(it.Site, s.norm().Count) != s.norm().Index {
					t.Fatalf("%s (registrable domain %s) drawn by shard %s", it.URL, it.Site, s)
				}
				key = fmt.Sprintf("item %d %s", it.Line, it.URL)
			} else {
				key = fmt.Sprintf("skip %d %s", sk.Line, sk.Reason)
			}
			if out[key] {
				t.Fatalf("%s twice in shard %s", key, s)
			}
			out[key] = true
		}
	}
	whole := collect(Shard{})
	for _, n := range []int{2, 3, 4, 16} {
		union := map[string]string{}
		for i := 0; i < n; i++ {
			s := Shard{i, n}
			for k := range collect(s) {
				if other, dup := union[k]; dup {
					t.Fatalf("%s in shards %s and %s", k, other, s)
				}
				union[k] = s.String()
			}
		}
		if len(union) != len(whole) {
			t.Errorf("%d shards hold %d items and skips, the whole list %d", n, len(union), len(whole))
		}
		for k := range whole {
			if _, ok := union[k]; !ok {
				t.Errorf("%d shards lost %s", n, k)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]string{"0/1": "0/1", "3/4": "3/4", " 0/16 ": "0/16", "4/4": "0/4", "1/1": "0/1"} {
		s, err := ParseShard(in)
		if err != nil || s.String() != want {
			t.Errorf("ParseShard(%q) = %v, %v", in, s, err)
		}
	}
	for _, in := range []string{"5/4", "-1/4", "1/0", "1", "a/b", "1/4/5", "0/70000", ""} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) accepted", in)
		}
	}
}

// The duplicate filter tells every new target from every repeated one, and
// keeps to its stated bytes per site.
func TestSeenFilter(t *testing.T) {
	f := &seenFilter{}
	const n = 100_000
	for i := 0; i < n; i++ {
		if !f.add(fmt.Sprintf("https://site%d.example/", i)) {
			t.Fatalf("site %d reported as a duplicate", i)
		}
	}
	for i := 0; i < n; i += 7 {
		if f.add(fmt.Sprintf("https://site%d.example/", i)) {
			t.Fatalf("site %d repeated was reported as new", i)
		}
	}
	if perSite := float64(8*len(f.slots)) / n; perSite < 10.6 || perSite > 21.4 {
		t.Errorf("%.1f bytes per site, stated 10.7–21.3", perSite)
	}
}

// An IP address or localhost has no registrable domain: its site is
// host:port, so a list of local servers on several ports spreads over the
// shards (keyed by the host alone, every one fell into one shard).
func TestSiteOfLocalHosts(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8001/":       "127.0.0.1:8001",
		"http://127.0.0.1/":            "127.0.0.1",
		"http://[::1]:8001/":           "[::1]:8001",
		"http://localhost:3000/":       "localhost:3000",
		"http://10.0.0.7:8080/":        "10.0.0.7:8080",
		"http://www.example.com:8080/": "example.com",
		"https://shop.example.co.uk/":  "example.co.uk",
	} {
		ln, err := NewListReader(strings.NewReader(in + "\n")).Next()
		if err != nil || ln.Invalid != "" {
			t.Fatalf("%s: %v %s", in, err, ln.Invalid)
		}
		if ln.Entry.Site != want {
			t.Errorf("site of %s = %q, want %q", in, ln.Entry.Site, want)
		}
	}
	var b strings.Builder
	for p := 8000; p < 8016; p++ {
		fmt.Fprintf(&b, "http://127.0.0.1:%d/\n", p)
	}
	for i := 0; i < 2; i++ {
		src := newSource(strings.NewReader(b.String()), Shard{i, 2})
		n := 0
		for {
			it, _, err := src.next()
			if err != nil {
				break
			}
			if it != nil {
				n++
			}
		}
		if n == 0 || n == 16 || n+src.elsewhere != 16 {
			t.Errorf("shard %d/2 of 16 ports of 127.0.0.1 draws %d sites, %d elsewhere", i, n, src.elsewhere)
		}
	}
}

// N/N, the last shard counted from 1, is refused with the shards named.
func TestParseShardNamesTheShards(t *testing.T) {
	for in, want := range map[string]string{
		"3/2":   "the 2 shards of this split are 0/2 and 1/2",
		"4/3":   "are 0/3, 1/3 and 2/3",
		"-1/16": "are 0/16, 1/16, … 15/16",
		"2/1":   "the one shard of a list not split is 0/1",
	} {
		_, err := ParseShard(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "count from 0") {
			t.Errorf("ParseShard(%q): %v; want it to say %q", in, err, want)
		}
	}
}
