package workers

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// A real Redis Cluster (REDIS_CLUSTER_URL, .ci/redis-cluster.sh start):
// decide against it outside workerd; TestWorkerdRedisCluster runs the
// same through the Worker.

// clusterTarget reads REDIS_CLUSTER_URL as the Worker would, and opens a
// go-redis Cluster client on it to look at what the decisions did.
func clusterTarget(t testing.TB) (Target, *redis.ClusterClient) {
	t.Helper()
	target, err := ParseTarget(testenv.RedisClusterURL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return target, redistest.OpenCluster(t, target.Seeds, target.User, target.Password)
}

// keySlot is the Cluster's own CLUSTER KEYSLOT.
func TestKeySlotAgreesWithRedis(t *testing.T) {
	_, cc := clusterTarget(t)
	ctx := context.Background()
	keys := []string{"", "{", "}", "{}", "a{b}c", "{a}{b}", "x{{y}}", "rate:scan:anonymous:2001:db8::1", "ünïcode{ß}"}
	for i := 0; i < 300; i++ {
		keys = append(keys, fmt.Sprintf("rate:scan:anonymous:198.51.100.%d", i), fmt.Sprintf("k%d{t%d}x", i, i%7))
	}
	for _, k := range keys {
		want, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := keySlot(k); int64(got) != want {
			t.Errorf("keySlot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
}

// Decisions for keys on every master: each goes to the node that holds its
// key, the script and redis_rate share each count as on one Redis, and once
// the first MOVED has taught the slot map, one connection per decision.
func TestDecideOnRedisCluster(t *testing.T) {
	target, cc := clusterTarget(t)
	run := "rltest-cluster:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	byMaster := redistest.KeysOnEveryMaster(t, cc, keySlot, 2, func(i int) string { return "rate:" + run + strconv.Itoa(i) })
	lib := ratelimit.NewRedis(cc)
	var slots slotMap
	var dials, decisions int
	for master, keys := range byMaster {
		for _, key := range keys {
			for i, want := range []int64{2, 1, 0, -1} { // remaining after each call; -1: denied
				var allowed, remaining int64
				if i == 1 { // the second through redis_rate, on the same count
					res, err := lib.AllowN(context.Background(), key[len("rate:"):], ratelimit.PerDay(3), 1)
					if err != nil {
						t.Fatal(err)
					}
					allowed, remaining = int64(res.Allowed), int64(res.Remaining)
				} else {
					v, err := decide(netDial(&dials), target, &slots, key, 3, 24*time.Hour, 1)
					if err != nil {
						t.Fatalf("%s (on %s): %v", key, master, err)
					}
					decisions++
					allowed, remaining = v.allowed, v.remaining
				}
				if want < 0 && allowed != 0 || want >= 0 && (allowed != 1 || remaining != want) {
					t.Errorf("%s (on %s), call %d: allowed %d remaining %d, want remaining %d", key, master, i+1, allowed, remaining, want)
				}
			}
			if got := slots.lookup(keySlot(key)); got != "" && got != master {
				t.Errorf("the map puts %s on %s, the Cluster on %s", key, got, master)
			}
		}
	}
	// A key on the first seed needs no redirection; the first on another
	// master is redirected once, and its MOVED brings the whole map.
	if dials != decisions+1 {
		t.Errorf("%d decisions opened %d connections, want one each and one more for the first MOVED", decisions, dials)
	}
}

// A slot that is being moved: its new keys are made on the importing node
// through -ASK and ASKING, and the count goes on there. The slot is held
// by another master than the first seed, so the first decision is
// redirected twice (MOVED, then ASK), the limit.
func TestDecideFollowsASKOnRedisCluster(t *testing.T) {
	target, cc := clusterTarget(t)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	var key string
	for i := 0; ; i++ {
		key = "rate:{rltest-ask-" + run + "-" + strconv.Itoa(i) + "}:k"
		// A slot where the master holds no key yet (earlier runs' and other
		// tests' keys live on), so that the count below is this test's.
		if m := redistest.MasterOf(t, cc, keySlot(key)); m != target.Seeds[0] && redistest.KeysIn(t, m, keySlot(key)) == 0 {
			break
		}
	}
	slot := keySlot(key)
	from, to := redistest.Migrating(t, cc, slot, key)
	var slots slotMap
	for i, want := range []struct {
		remaining int64 // -1: denied
		dials     int
	}{{2, 3}, {1, 2}, {0, 2}, {-1, 2}} {
		var dials int
		v, err := decide(netDial(&dials), target, &slots, key, 3, 24*time.Hour, 1)
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if want.remaining < 0 && v.allowed != 0 || want.remaining >= 0 && (v.allowed != 1 || v.remaining != want.remaining) {
			t.Errorf("call %d: %+v, want remaining %d", i+1, v, want.remaining)
		}
		if dials != want.dials {
			t.Errorf("call %d opened %d connections, want %d", i+1, dials, want.dials)
		}
	}
	if slots.lookup(slot) != from {
		t.Errorf("the map puts slot %d on %q: an ASK must not move it from %s", slot, slots.lookup(slot), from)
	}
	if n := redistest.KeysIn(t, to, slot); n != 1 {
		t.Errorf("the importing node %s holds %d keys of the slot, want the decisions' one", to, n)
	}
	if n := redistest.KeysIn(t, from, slot); n != 0 {
		t.Errorf("the migrating node %s holds %d keys of the slot, want none", from, n)
	}
}
