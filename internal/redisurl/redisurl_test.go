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
