package redisurl

import (
	"slices"
	"testing"
)

func TestSplitHosts(t *testing.T) {
	for _, c := range []struct {
		raw, first string
		hosts      []string
	}{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0", []string{"127.0.0.1:6379"}},
		{"redis://a:1,b:2,c:3", "redis://a:1", []string{"a:1", "b:2", "c:3"}},
		{"rediss://u:p@a:1,b:2/0?x=1", "rediss://u:p@a:1/0?x=1", []string{"a:1", "b:2"}},
		{"rediss://u:p,q@a:1,b:2", "rediss://u:p,q@a:1", []string{"a:1", "b:2"}}, // a comma in the password is the password's
		{"[::1]:6379,[::1]:6380", "[::1]:6379,[::1]:6380", []string{"[::1]:6379,[::1]:6380"}},
		{"redis://[::1]:6379,[::1]:6380/0", "redis://[::1]:6379/0", []string{"[::1]:6379", "[::1]:6380"}},
	} {
		first, hosts := SplitHosts(c.raw)
		if first != c.first || !slices.Equal(hosts, c.hosts) {
			t.Errorf("SplitHosts(%q) = %q, %q; want %q, %q", c.raw, first, hosts, c.first, c.hosts)
		}
	}
}

func TestAmbiguous(t *testing.T) {
	for raw, want := range map[string]bool{
		"redis://u:p@h:1/0":               false,
		"redis://u:p%2Fq@h:1/0":           false,
		"redis://h:1,h:2":                 false,
		"redis://default:1234/abc@h:6379": true, // the password 1234/abc
		"redis://u:12#x@h:1":              true,
		"redis://u:a?b@h:1":               true,
		"h:1":                             false,
	} {
		if got := Ambiguous(raw); got != want {
			t.Errorf("Ambiguous(%q) = %v, want %v", raw, got, want)
		}
	}
}

func TestSeeds(t *testing.T) {
	for _, c := range []struct {
		raw, first string
		hosts      []string
	}{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0", []string{"127.0.0.1:6379"}},
		{"redis://a:1,b:2,c:3", "redis://a:1", []string{"a:1", "b:2", "c:3"}},
		{"redis://a:1, b:2 ,c:3/0", "redis://a:1/0", []string{"a:1", "b:2", "c:3"}},
		// go-redis's Cluster form: the addr parameters are nodes, the other parameters stay.
		{"redis://u:p@a:1?addr=b:2&addr=c:3", "redis://u:p@a:1", []string{"a:1", "b:2", "c:3"}},
		{"rediss://:p@a:1/0?dial_timeout=2s&addr=b:2&read_timeout=1s", "rediss://:p@a:1/0?dial_timeout=2s&read_timeout=1s", []string{"a:1", "b:2"}},
		{"redis://a:1,b:2?addr=c:3", "redis://a:1", []string{"a:1", "b:2", "c:3"}},
		{"redis://a:1?addr=%5B::1%5D:7000&addr=[::1]:7001", "redis://a:1", []string{"a:1", "[::1]:7000", "[::1]:7001"}},
		{"redis://a:1?addr=&addr", "redis://a:1", []string{"a:1", "", ""}},
		{"redis://a:1,,b:2", "redis://a:1", []string{"a:1", "", "b:2"}},
		{"redis://a:1#x?addr=b:2", "redis://a:1#x?addr=b:2", []string{"a:1"}}, // in the fragment: not a parameter
		{"rediss://u:p,q@a:1?addr=b:2", "rediss://u:p,q@a:1", []string{"a:1", "b:2"}},
		{"h:1", "h:1", []string{"h:1"}},
	} {
		first, hosts := Seeds(c.raw)
		if first != c.first || !slices.Equal(hosts, c.hosts) {
			t.Errorf("Seeds(%q) = %q, %q; want %q, %q", c.raw, first, hosts, c.first, c.hosts)
		}
	}
}

func FuzzSeeds(f *testing.F) {
	for _, s := range []string{"redis://u:p@a:1?addr=b:2&addr=c:3", "redis://a:1,b:2/0?x=1#f", "rediss://a:1?addr=%5B::1%5D:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		first, hosts := Seeds(raw)
		if len(hosts) == 0 {
			t.Fatal("no host")
		}
		if len(first) > len(raw) {
			t.Fatalf("first %q is longer than %q", first, raw)
		}
	})
}
