package workers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/ratelimit"
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
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: target.Seeds, Username: target.User, Password: target.Password})
	t.Cleanup(func() { cc.Close() })
	if err := cc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("REDIS_CLUSTER_URL: %v", err)
	}
	return target, cc
}

// masterOf is the address of the master that holds slot.
func masterOf(t testing.TB, cc *redis.ClusterClient, slot uint16) string {
	t.Helper()
	slots, err := cc.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if s.Start <= int(slot) && int(slot) <= s.End && len(s.Nodes) > 0 {
			return s.Nodes[0].Addr
		}
	}
	t.Fatalf("no master holds slot %d", slot)
	return ""
}

// keysOnEveryMaster returns perMaster keys for each master of the Cluster,
// each key being key(i) for some i: the tests decide on all of them, so
// that each master runs some of the decisions.
func keysOnEveryMaster(t testing.TB, cc *redis.ClusterClient, perMaster int, key func(i int) string) map[string][]string {
	t.Helper()
	masters, err := cc.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	byMaster := map[string][]string{}
	for _, s := range masters {
		byMaster[s.Nodes[0].Addr] = nil
	}
	if len(byMaster) < 3 {
		t.Fatalf("REDIS_CLUSTER_URL has %d masters; the test needs 3", len(byMaster))
	}
	for i, full := 0, 0; full < len(byMaster); i++ {
		k := key(i)
		if m := masterOf(t, cc, keySlot(k)); len(byMaster[m]) < perMaster {
			if byMaster[m] = append(byMaster[m], k); len(byMaster[m]) == perMaster {
				full++
			}
		}
	}
	return byMaster
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
	byMaster := keysOnEveryMaster(t, cc, 2, func(i int) string { return "rate:" + run + strconv.Itoa(i) })
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

// migrating starts moving slot from the master that holds it to another
// (IMPORTING on that one, MIGRATING on its owner), as redis-cli --cluster
// reshard does before it moves keys, so that a key of the slot that the
// owner does not have is answered -ASK. The cleanup deletes keys (made in
// the slot on the importing node, by the test) and makes the slot stable
// again, where it was.
func migrating(t testing.TB, cc *redis.ClusterClient, slot uint16, keys ...string) (from, to string) {
	t.Helper()
	ctx := context.Background()
	from = masterOf(t, cc, slot)
	ids := map[string]string{}
	nodes, err := cc.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		// <id> <ip:port@cport> <flags> …: the masters, by address.
		f := strings.Fields(line)
		if len(f) < 3 || !strings.Contains(f[2], "master") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		ids[addr] = f[0]
		if addr != from && (to == "" || addr < to) {
			to = addr
		}
	}
	if ids[from] == "" || to == "" {
		t.Fatalf("CLUSTER NODES names no master at %s, or no other master:\n%s", from, nodes)
	}
	node := func(addr string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		return c
	}
	src, dst := node(from), node(to)
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[from]).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn := dst.Conn()
		defer conn.Close()
		for _, k := range keys {
			conn.Do(ctx, "ASKING")
			if err := conn.Del(ctx, k).Err(); err != nil {
				t.Errorf("deleting %s on %s: %v", k, to, err)
			}
		}
		for _, c := range []*redis.Client{src, dst} {
			if err := c.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err(); err != nil {
				t.Errorf("CLUSTER SETSLOT %d STABLE: %v", slot, err)
			}
		}
	})
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[to]).Err(); err != nil {
		t.Fatal(err)
	}
	return from, to
}

// keysIn reports how many keys of slot the node at addr holds itself.
func keysIn(t testing.TB, addr string, slot uint16) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	n, err := c.ClusterCountKeysInSlot(context.Background(), int(slot)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
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
		if masterOf(t, cc, keySlot(key)) != target.Seeds[0] {
			break
		}
	}
	slot := keySlot(key)
	from, to := migrating(t, cc, slot, key)
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
	if n := keysIn(t, to, slot); n != 1 {
		t.Errorf("the importing node %s holds %d keys of the slot, want the decisions' one", to, n)
	}
	if n := keysIn(t, from, slot); n != 0 {
		t.Errorf("the migrating node %s holds %d keys of the slot, want none", from, n)
	}
}
