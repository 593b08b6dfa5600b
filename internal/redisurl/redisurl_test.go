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
