package store

import (
	"strings"
	"testing"
)

// REDIS_URL's two forms: one Redis, or several nodes of a Redis Cluster.
func TestParseRedisURL(t *testing.T) {
	for _, c := range []struct {
		url     string
		single  string   // the one Redis's address
		cluster []string // the Cluster's seed nodes
		err     string   // a fragment of the refusal
	}{
		{url: "redis://127.0.0.1:6379/0", single: "127.0.0.1:6379"},
		{url: "rediss://user:secret@redis.example:6380/2", single: "redis.example:6380"},
		{url: "redis://127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003", cluster: []string{"127.0.0.1:17001", "127.0.0.1:17002", "127.0.0.1:17003"}},
		{url: "redis://:secret@h1:7000,h2:7000/0", cluster: []string{"h1:7000", "h2:7000"}},
		{url: "redis://[::1]:7000,[::1]:7001/", cluster: []string{"[::1]:7000", "[::1]:7001"}},
		{url: "redis://h1:7000,h2:7000/3", err: "only database 0"},
		{url: "redis://h1:7000,h2/0", err: "host:port,host:port"},
		{url: "http://h1:7000", err: "not a valid redis://"},
		{url: "redis://:hunter2@h1:7000,h2:7000?dial_timeout=nonsense", err: "not a valid redis://"},
		{url: "", err: "not a valid redis://"},
	} {
		t.Run(c.url, func(t *testing.T) {
			cluster, single, err := parseRedisURL(c.url)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case c.single != "":
				if single == nil || cluster != nil || single.Addr != c.single {
					t.Fatalf("single %+v, cluster %+v; want one Redis at %s", single, cluster, c.single)
				}
			default:
				if cluster == nil || single != nil || strings.Join(cluster.Addrs, " ") != strings.Join(c.cluster, " ") {
					t.Fatalf("cluster %+v, single %+v; want the nodes %v", cluster, single, c.cluster)
				}
				if strings.Contains(c.url, "secret") && cluster.Password != "secret" {
					t.Errorf("the password was not kept: %q", cluster.Password)
				}
			}
		})
	}
}

// Whatever REDIS_URL holds, parsing it ends with options or a refusal that
// repeats none of it (it may carry a password).
func FuzzParseRedisURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "redis://:pw@h1:1,h2:2/0", "rediss://u:p@[::1]:7000,[::1]:7001/", "redis://h1:1,h2:2/3?dial_timeout=3", "redis://%zz@h:1,h:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cluster, single, err := parseRedisURL(raw)
		if err != nil {
			if cluster != nil || single != nil {
				t.Fatal("options and an error")
			}
			if msg := err.Error(); len(raw) > 12 && strings.Contains(msg, raw) {
				t.Fatalf("the refusal repeats the URL: %q", msg)
			}
			return
		}
		if (cluster == nil) == (single == nil) {
			t.Fatalf("want exactly one of the forms: %+v %+v", cluster, single)
		}
	})
}
