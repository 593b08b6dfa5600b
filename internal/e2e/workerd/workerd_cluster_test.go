package workerd_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/workers"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/redis/go-redis/v9"
)

// scanStep is what a caller sees of one scan's allowance.
type scanStep struct {
	Status                   int
	Limit, Remaining, Policy string
	RetryAfter               bool
}

// schedule scans once for each address in turn, rounds times, through the
// Worker at base (the address as CF-Connecting-IP), and returns what each
// address saw, round by round.
func schedule(t *testing.T, base string, ips []string, rounds int) map[string][]scanStep {
	t.Helper()
	out := map[string][]scanStep{}
	for range rounds {
		for _, ip := range ips {
			req, _ := http.NewRequest(http.MethodGet, base+"/api/scan?format=json&url=https://cluster-test.example/", nil)
			req.Header.Set("CF-Connecting-IP", ip)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			h := resp.Header
			out[ip] = append(out[ip], scanStep{resp.StatusCode, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("RateLimit-Policy"), h.Get("Retry-After") != ""})
		}
	}
	return out
}

// withSeed is the Cluster URL raw with seed put first among its hosts.
func withSeed(raw, seed string) string {
	scheme, rest, _ := strings.Cut(raw, "://")
	at := strings.LastIndexByte(rest[:strings.IndexAny(rest+"/", "/?#")], '@')
	return scheme + "://" + rest[:at+1] + seed + "," + rest[at+1:]
}

// rateKey is the Redis key of an anonymous caller's scan allowance.
func rateKey(prefix, ip string) string {
	return prefix + "scan:" + identity.Caller{Tier: identity.Anonymous, Subject: ip}.Key()
}

// A Worker whose REDIS_URL is a Redis Cluster (with a first seed that
// refuses connections) gives every caller the same allowances as a Worker
// on one Redis — callers whose counters are spread over every master, so
// that decisions are redirected (MOVED) until the Worker has learnt the
// slots — and a slot being moved is followed through -ASK.
func TestWorkerdRedisCluster(t *testing.T) {
	root, workerd, redisURL := requirements(t)
	target, cc := clusterTarget(t)
	clusterURL := withSeed(testenv.RedisClusterURL(t), "127.0.0.1:"+strconv.Itoa(freePort(t)))
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }))
	t.Cleanup(origin.Close)
	start := func(t *testing.T, redis, prefix string) *running {
		port := freePort(t)
		env := deployment(edgetest.Env(), port, redis)
		env["ORIGIN_URL"] = origin.URL
		if prefix != "" {
			env["AGENTREADY_RATE_PREFIX"] = prefix
		}
		svc := startWorkerd(t, filepath.Join(root, "build", "worker"), workerd, env, port)
		t.Cleanup(func() {
			for _, bad := range []string{"crossed requests", "edge: allowance store:"} {
				if strings.Contains(svc.logs.String(), bad) {
					t.Errorf("the Worker's log says %q:\n%s", bad, svc.logs)
				}
			}
		})
		return svc
	}
	// The free allowance is 3: three scans, then the 402.
	want := []scanStep{{200, "3", "2", "3;w=86400", false}, {200, "3", "1", "3;w=86400", false}, {200, "3", "0", "3;w=86400", false}, {402, "3", "0", "3;w=86400", true}}

	t.Run("the same schedule as one Redis", func(t *testing.T) {
		prefix := "workerd-cluster:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
		var ips []string
		byMaster := redistest.KeysOnEveryMaster(t, cc, workers.KeySlot, 2, func(i int) string { return rateKey(prefix, "198.51.100."+strconv.Itoa(i)) })
		for _, keys := range byMaster {
			for _, k := range keys {
				ips = append(ips, strings.TrimPrefix(k, rateKey(prefix, "")))
			}
		}
		one := schedule(t, start(t, redisURL, "").base, ips, len(want))
		for _, ip := range ips {
			if !reflect.DeepEqual(one[ip], want) {
				t.Fatalf("on one Redis, %s saw %+v, want %+v", ip, one[ip], want)
			}
		}
		cluster := schedule(t, start(t, clusterURL, prefix).base, ips, len(want))
		if !reflect.DeepEqual(cluster, one) {
			t.Errorf("on the Cluster:\n%+v\non one Redis:\n%+v", cluster, one)
		}
		for master, keys := range byMaster {
			for _, k := range keys {
				if n, err := cc.Exists(context.Background(), k).Result(); err != nil || n != 1 {
					t.Errorf("the counter %s (slot %d, on %s) is not in the Cluster: %v", k, workers.KeySlot(k), master, err)
				}
			}
		}
	})

	t.Run("a slot being moved", func(t *testing.T) {
		// Every counter of this Worker is in one slot (the prefix is a hash
		// tag), held by another master than the first live seed, and moving:
		// the first decision is redirected twice, by MOVED and then ASK.
		var prefix string
		for i := 0; ; i++ {
			prefix = "{workerd-ask-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(i) + "}:"
			// A slot where the master holds no key yet (earlier runs' and
			// other tests' keys live on), so that the counts below are ours.
			if m := redistest.MasterOf(t, cc, workers.KeySlot(prefix)); m != target.Seeds[0] && redistest.KeysIn(t, m, workers.KeySlot(prefix)) == 0 {
				break
			}
		}
		ips := []string{"192.0.2.10", "192.0.2.11"}
		slot := workers.KeySlot(prefix)
		from, to := redistest.Migrating(t, cc, slot, rateKey(prefix, ips[0]), rateKey(prefix, ips[1]))
		got := schedule(t, start(t, clusterURL, prefix).base, ips, len(want))
		for _, ip := range ips {
			if !reflect.DeepEqual(got[ip], want) {
				t.Errorf("%s saw %+v, want %+v", ip, got[ip], want)
			}
		}
		if n := redistest.KeysIn(t, to, slot); n != 2 {
			t.Errorf("the importing node %s holds %d counters of the slot, want 2", to, n)
		}
		if n := redistest.KeysIn(t, from, slot); n != 0 {
			t.Errorf("the migrating node %s holds %d counters of the slot, want none", from, n)
		}
	})
}

// clusterTarget reads REDIS_CLUSTER_URL as the Worker would, and opens a
// go-redis Cluster client on it to look at what the decisions did.
func clusterTarget(t testing.TB) (workers.Target, *redis.ClusterClient) {
	t.Helper()
	target, err := workers.ParseTarget(testenv.RedisClusterURL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return target, redistest.OpenCluster(t, target.Seeds, target.User, target.Password)
}
