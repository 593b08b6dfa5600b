package redistest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// MasterOf is the address of the master that holds slot.
func MasterOf(t testing.TB, cc *redis.ClusterClient, slot uint16) string {
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

// KeysOnEveryMaster returns perMaster keys for each master of the Cluster,
// each key being key(i) for some i: the tests decide on all of them, so
// that each master runs some of the decisions.
func KeysOnEveryMaster(t testing.TB, cc *redis.ClusterClient, slotOf func(key string) uint16, perMaster int, key func(i int) string) map[string][]string {
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
		if m := MasterOf(t, cc, slotOf(k)); len(byMaster[m]) < perMaster {
			if byMaster[m] = append(byMaster[m], k); len(byMaster[m]) == perMaster {
				full++
			}
		}
	}
	return byMaster
}

// Migrating starts moving slot from the master that holds it to another
// (IMPORTING on that one, MIGRATING on its owner), as redis-cli --cluster
// reshard does before it moves keys, so that a key of the slot that the
// owner does not have is answered -ASK. The cleanup deletes keys (made in
// the slot on the importing node, by the test) and makes the slot stable
// again, where it was.
func Migrating(t testing.TB, cc *redis.ClusterClient, slot uint16, keys ...string) (from, to string) {
	t.Helper()
	ctx := context.Background()
	from = MasterOf(t, cc, slot)
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

// KeysIn reports how many keys of slot the node at addr holds itself.
func KeysIn(t testing.TB, addr string, slot uint16) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	n, err := c.ClusterCountKeysInSlot(context.Background(), int(slot)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// OpenCluster is a go-redis Cluster client on seeds, answering a PING, for
// a test to look at what the code under test did; closed with the test.
func OpenCluster(t testing.TB, seeds []string, user, password string) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, Username: user, Password: password})
	t.Cleanup(func() { cc.Close() })
	if err := cc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("REDIS_CLUSTER_URL: %v", err)
	}
	return cc
}
