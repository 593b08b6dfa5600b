package redisconn

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A refusal of REDIS_URL names what is wrong and never the password; the
// full table of forms is origin/store's (redis_url_test.go,
// redis_cluster_url_test.go), which reads REDIS_URL through Parse.
func TestOpenRefusesABadURLWithoutItsPassword(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://app:hunter2@h1:7000", "does not begin with redis://"},
		{"redis://app:hunter2@h1:7000,h2:0", "node 2 of the 2"},
		{"redis://app:hunter2@h1:7000/3?addr=h2:7000", "only database 0"},
	} {
		_, _, err := Open(context.Background(), c.url, Options{CallTimeout: time.Second, DialTimeout: time.Second})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "REDIS_URL") {
			t.Errorf("%s: error %v, want one about REDIS_URL saying %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the refusal repeats the password: %v", c.url, err)
		}
	}
}

// A Redis that does not answer is named by its address, with the hint
// that fits its scheme.
func TestOpenSaysWhichRedisDoesNotAnswer(t *testing.T) {
	_, _, err := Open(context.Background(), "redis://127.0.0.1:1/0", Options{CallTimeout: time.Second, DialTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "Redis at 127.0.0.1:1 does not answer within 3 s") {
		t.Fatalf("error %v, want Redis at 127.0.0.1:1 does not answer", err)
	}
}
