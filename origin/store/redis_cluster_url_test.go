package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/redisurl"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/redis/go-redis/v9"
)

// go-redis's own Cluster form (the other nodes in addr parameters), alone
// or mixed with the comma-separated one, is a Cluster too; its other
// parameters and the user, password and TLS are kept.
func TestParseRedisURLClusterForms(t *testing.T) {
	for _, c := range []struct {
		url     string
		cluster []string
		check   func(t *testing.T, o *redis.ClusterOptions)
	}{
		{url: "redis://h1:7000?addr=h2:7000&addr=h3:7000", cluster: []string{"h1:7000", "h2:7000", "h3:7000"}},
		{url: "redis://h1:7000/0?addr=h2:7000", cluster: []string{"h1:7000", "h2:7000"}},
		{url: "redis://h1:7000,h2:7000?addr=h3:7000&dial_timeout=2s", cluster: []string{"h1:7000", "h2:7000", "h3:7000"},
			check: func(t *testing.T, o *redis.ClusterOptions) {
				if o.DialTimeout != 2*time.Second {
					t.Errorf("dial_timeout was not kept: %s", o.DialTimeout)
				}
			}},
		{url: "redis://h1:7000?addr=%5B::1%5D:7001&addr=h2%3A7002", cluster: []string{"h1:7000", "[::1]:7001", "h2:7002"}},
		{url: "redis://h1:7000, h2:7000", cluster: []string{"h1:7000", "h2:7000"}},
		{url: "rediss://app:s%2Fcret@h1:7000?addr=h2:7000", cluster: []string{"h1:7000", "h2:7000"},
			check: func(t *testing.T, o *redis.ClusterOptions) {
				if o.Username != "app" || o.Password != "s/cret" || o.TLSConfig == nil || o.TLSConfig.ServerName != "h1" {
					t.Errorf("user %q, password %q, TLS %+v: want app, s/cret and TLS to h1", o.Username, o.Password, o.TLSConfig)
				}
			}},
	} {
		t.Run(c.url, func(t *testing.T) {
			cluster, single, err := parseRedisURL(c.url)
			if err != nil {
				t.Fatal(err)
			}
			if cluster == nil || single != nil || strings.Join(cluster.Addrs, " ") != strings.Join(c.cluster, " ") {
				t.Fatalf("cluster %+v, single %+v; want the nodes %v", cluster, single, c.cluster)
			}
			if c.check != nil {
				c.check(t, cluster)
			}
		})
	}
}

// A malformed REDIS_URL is refused saying what is wrong, never with the
// user name or password.
func TestParseRedisURLSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"redis://app:hunter2@h1:7000?addr=h2", "node 2 of the 2"},
		{"redis://app:hunter2@h1:7000?addr=", "node 2 of the 2"},
		{"redis://app:hunter2@h1:7000,,h2:7000", "node 2 of the 3"},
		{"redis://app:hunter2@h1:7000,h2:0", "node 2 of the 2"},
		{"redis://app:hunter2@h1:7000/3?addr=h2:7000", "only database 0"},
		{"redis://app:hunter2@h1:7000?addr=h2:7000&bogus=1", "unexpected option: bogus"},
		{"redis://app:hunter2@h1:7000/0?bogus=1", "unexpected option: bogus"},
		{"redis://app:hunter2@h1:7000/x", "invalid database number"},
		{"redis://app:hunter2@h1:7000?addr=h2:7000&dial_timeout=soon", "dial_timeout"},
		{"redis://app:hun%zzter2@h1:7000", "two hexadecimal digits"},
		{"redis://app:hunter2@h1:port", "invalid port"},
		{"redis://app:hunter2@", "names no host"},
		{"http://app:hunter2@h1:7000", "does not begin with redis://"},
		{"h1:7000", "does not begin with redis://"},
	} {
		t.Run(c.url, func(t *testing.T) {
			_, _, err := parseRedisURL(c.url)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "REDIS_URL") {
				t.Fatalf("error %v, want one about REDIS_URL saying %q", err, c.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "app:") {
				t.Fatalf("the refusal repeats the user or password: %v", err)
			}
		})
	}
}

// The forms open the Cluster of REDIS_CLUSTER_URL: go-redis's addr=, and
// one node alone, which is found to be a Cluster's.
func TestOpenRedisClusterForms(t *testing.T) {
	clusterURL := testenv.RedisClusterURL(t)
	first, nodes := redisurl.Seeds(clusterURL)
	scheme, rest, _ := strings.Cut(first, "://")
	userinfo := ""
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo = rest[:at+1]
	}
	if len(nodes) < 2 {
		t.Fatal("REDIS_CLUSTER_URL should name several nodes of a Redis Cluster")
	}
	addr := scheme + "://" + userinfo + nodes[0] + "?addr=" + strings.Join(nodes[1:], "&addr=")
	for name, u := range map[string]string{"addr=": addr, "one node": scheme + "://" + userinfo + nodes[len(nodes)-1]} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, err := OpenRedis(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Cluster() {
				t.Fatal("not opened as a Redis Cluster")
			}
			v := r.WithPrefix("agentready-test:" + t.Name() + ":")
			defer v.DeleteAll(ctx)
			for _, k := range []string{"a", "b", "c", "d"} { // keys in several slots
				if err := v.set(ctx, k, []byte(k), time.Minute); err != nil {
					t.Fatal(err)
				}
				if b, err := v.get(ctx, k); err != nil || string(b) != k {
					t.Fatalf("get %s: %q %v", k, b, err)
				}
			}
		})
	}
}
