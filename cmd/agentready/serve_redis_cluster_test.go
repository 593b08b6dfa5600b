//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/redisurl"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
	"github.com/redis/go-redis/v9"
)

// An issue: `agentready serve` did not start with REDIS_URL naming a Redis
// Cluster in go-redis's own form (redis://h1:p1?addr=h2:p2&addr=h3:p3).
// The real binary is started with every form docs/deploy.md lists (and
// go-redis's) against the Cluster of REDIS_CLUSTER_URL, with and without a
// user and password of its own; each must answer /healthz, mint a token,
// scan a loopback site, and run a monitor whose delivery arrives (state
// that only works when every key a script touches is in one slot). A
// malformed REDIS_URL must stop serve saying what is wrong, never the
// password.
func TestServeRedisClusterURLForms(t *testing.T) {
	clusterURL := testenv.RedisClusterURL(t)
	first, nodes := redisurl.Seeds(clusterURL)
	cu, err := url.Parse(first)
	if err != nil || len(nodes) < 2 {
		t.Fatal("REDIS_CLUSTER_URL should name several nodes of a Redis Cluster (.ci/redis-cluster.sh start prints one)")
	}
	ctx := context.Background()
	admin, err := store.OpenRedis(ctx, clusterURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the cleanups below, which use it
	cc, ok := admin.Client().(*redis.ClusterClient)
	if !ok {
		t.Fatal("REDIS_CLUSTER_URL is not a Redis Cluster")
	}

	// An ACL user of this run's own on every node, with a password that
	// must be percent-encoded in a URL.
	user := "agentready-serve-test-" + randomHex(t, 4)
	password := "p/w?x#y@z:" + randomHex(t, 8)
	err = cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all").Err()
	})
	if err != nil {
		t.Fatalf("ACL SETUSER on every node: %v", err)
	}
	t.Cleanup(func() {
		err := cc.ForEachShard(context.Background(), func(ctx context.Context, c *redis.Client) error {
			return c.Do(ctx, "ACL", "DELUSER", user).Err()
		})
		if err != nil {
			t.Errorf("ACL DELUSER %s on every node: %v", user, err)
		}
	})

	scheme := cu.Scheme + "://"
	own := "" // REDIS_CLUSTER_URL's own user and password, if any
	if cu.User != nil {
		own = cu.User.String() + "@"
	}
	acl := url.UserPassword(user, password).String() + "@"
	addrs := func(nodes []string) string { // go-redis's addr parameters, as written by hand
		var q []string
		for _, n := range nodes {
			q = append(q, "addr="+n)
		}
		return strings.Join(q, "&")
	}
	encoded := url.Values{"addr": nodes[2%len(nodes):]}.Encode() // ':' as %3A, '[' as %5B
	last := nodes[len(nodes)-1]

	bin := madeCLI(t, "")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html lang=en><head><title>Cluster fixture</title></head><body><h1>A site scanned through a Redis Cluster</h1><p>Some words.</p></body></html>")
	}))
	defer site.Close()
	receiver := newDeliveryReceiver(t)
	var scanned []string // the URLs scans put into the Cluster's history, removed at the end
	t.Cleanup(func() {
		for _, u := range scanned {
			cc.HDel(ctx, "agentready:{history}", u)
			cc.ZRem(ctx, "agentready:{history}:rank", u)
			cc.Del(ctx, "agentready:series:"+u)
		}
	})

	for _, c := range []struct{ name, url string }{
		{"comma-separated", scheme + own + strings.Join(nodes, ",")},
		{"comma-separated, database 0", scheme + own + strings.Join(nodes, ",") + "/0"},
		{"go-redis addr=", scheme + own + nodes[0] + "?" + addrs(nodes[1:])},
		{"go-redis addr=, database 0, percent-encoded", scheme + own + nodes[0] + "/0?" + url.Values{"addr": nodes[1:]}.Encode()},
		{"one node", scheme + own + last},
		{"user and password, comma-separated", scheme + acl + strings.Join(nodes, ",") + "/0"},
		{"user and password, go-redis addr=", scheme + acl + nodes[0] + "?" + addrs(nodes[1:])},
		{"user and password, both forms mixed", scheme + acl + nodes[0] + "," + nodes[1] + "/0?" + encoded},
		{"user and password, one node", scheme + acl + last},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServe(t, bin, c.url)
			defer s.noSecret(t, password)
			scanned = appendNew(scanned, s.works(t, site.URL, receiver))
			if code := s.stop(t); code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0:\n%s", code, s.output())
			}
			// REDIS_CLUSTER_URL works without a password, so every node
			// answers without one: serve must say so of each node the URL
			// names, comma-separated or in addr=, when it names a password.
			if strings.Contains(c.url, acl) && own == "" {
				_, named := redisurl.Seeds(c.url)
				for _, n := range named {
					if !strings.Contains(s.output(), "warning: Redis at "+n+" accepts connections without a password") {
						t.Errorf("no warning that %s answers without the password:\n%s", n, s.output())
					}
				}
			}
		})
	}

	for _, c := range []struct{ name, url, want string }{
		{"a node without its port", scheme + acl + nodes[0] + "," + cu.Hostname(), "node 2 of the 2"},
		{"an empty addr=", scheme + acl + nodes[0] + "?addr=", "node 2 of the 2"},
		{"an unknown parameter", scheme + acl + nodes[0] + "?" + addrs(nodes[1:]) + "&pool=big", "unexpected option: pool"},
		{"a database other than 0", scheme + acl + nodes[0] + "/2?" + addrs(nodes[1:]), "only database 0"},
		{"a broken escape in the password", scheme + user + ":pw%zz" + randomHex(t, 4) + "@" + strings.Join(nodes, ","), "two hexadecimal digits"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			cmd := serveCommand(t, bin, c.url)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if code := exitCode(err); code != 1 || !strings.Contains(out.String(), "REDIS_URL") || !strings.Contains(out.String(), c.want) {
					t.Errorf("exit %d (want 1), output %q: want it to say %q", code, out.String(), c.want)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("serve still running 30 s after a malformed REDIS_URL:\n%s", out.String())
			}
			for _, secret := range []string{password, url.PathEscape(password), "pw%zz"} {
				if strings.Contains(out.String(), secret) {
					t.Errorf("the refusal repeats the password: %q", out.String())
				}
			}
		})
	}
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s || s == "" {
			return list
		}
	}
	return append(list, s)
}

// serveCommand is `agentready serve` on a free loopback port with REDIS_URL
// set, the native edge, no Chromium, and allowances no rerun exhausts
// (they live in the shared Cluster).
func serveCommand(t *testing.T, bin, redisURL string) *exec.Cmd {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--edge-wasm", "", "--allow-private")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTREADY_") && !strings.HasPrefix(kv, "REDIS_URL=") && !strings.HasPrefix(kv, "CHROME_PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "REDIS_URL="+redisURL, "CHROME_PATH=/nonexistent/chromium",
		"AGENTREADY_FREE_DAILY=1000000", "AGENTREADY_TOKEN_MINTS_HOURLY=1000000", "AGENTREADY_MONITORS_ANONYMOUS=1000")
	return cmd
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// served is a running `agentready serve`.
type served struct {
	cmd  *exec.Cmd
	base string
	done chan error
	mu   sync.Mutex
	out  bytes.Buffer // stdout and stderr
	code int
}

func (s *served) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *served) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// startServe starts serve and waits, up to 30 s, for the line naming its
// address; serve exiting first fails the test with what it said.
func startServe(t *testing.T, bin, redisURL string) *served {
	t.Helper()
	s := &served{cmd: serveCommand(t, bin, redisURL), done: make(chan error, 1), code: -1}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s, line)
			if _, rest, ok := strings.Cut(line, " serving on "); ok {
				select {
				case addr <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.base = <-addr:
		return s
	case err := <-s.done:
		s.done <- err
		t.Fatalf("serve exited (%v) instead of starting:\n%s", err, s.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not say where it serves within 30 s:\n%s", s.output())
	}
	return nil
}

// stop sends SIGTERM and waits up to 30 s for the exit; its exit code.
func (s *served) stop(t *testing.T) int {
	if s.code >= 0 {
		return s.code
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.code = exitCode(err)
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		s.code = exitCode(<-s.done)
		t.Errorf("serve still running 30 s after SIGTERM:\n%s", s.output())
	}
	return s.code
}

func (s *served) noSecret(t *testing.T, password string) {
	for _, secret := range []string{password, url.PathEscape(password), url.QueryEscape(password)} {
		if strings.Contains(s.output(), secret) {
			t.Errorf("serve's output repeats the password of REDIS_URL:\n%s", s.output())
		}
	}
}

// works checks the service answers and keeps its state in the Cluster:
// /healthz names the Redis store, a token is minted, a loopback site is
// scanned, and a monitor on it delivers its first event. It returns the
// scanned URL.
func (s *served) works(t *testing.T, site string, receiver *deliveryReceiver) string {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	do := func(method, path, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, s.output())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d\n%s", method, path, resp.StatusCode, b, want, s.output())
		}
		return b
	}
	var health struct{ Status, Store string }
	if err := json.Unmarshal(do("GET", "/healthz", "", 200), &health); err != nil || health.Store != "redis" {
		t.Fatalf("/healthz: %+v %v, want the redis store", health, err)
	}
	var token struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(do("POST", "/api/agent/token", `{"grant_type":"client_credentials","scope":"scan:read"}`, 200), &token); err != nil || token.AccessToken == "" {
		t.Fatalf("POST /api/agent/token: no access_token (%v)", err)
	}
	var scan struct {
		URL   string
		Score struct{ Total int }
	}
	if err := json.Unmarshal(do("GET", "/api/scan?format=json&url="+url.QueryEscape(site), "", 200), &scan); err != nil || scan.URL == "" || scan.Score.Total == 0 {
		t.Fatalf("GET /api/scan: %+v %v, want a report", scan, err)
	}
	var mon struct{ ID string }
	body := fmt.Sprintf(`{"url":%q,"callback_url":%q,"cadence":"daily","events":["scan.completed"]}`, site, receiver.url)
	if err := json.Unmarshal(do("POST", "/api/monitors", body, 201), &mon); err != nil || !strings.HasPrefix(mon.ID, "mon_") {
		t.Fatalf("POST /api/monitors: %+v %v, want a monitor", mon, err)
	}
	deleted := false
	t.Cleanup(func() { // on a failure, before serve stops (cleanups run last first)
		if !deleted && s.code < 0 {
			if req, err := http.NewRequest("DELETE", s.base+"/api/monitors/"+mon.ID, nil); err == nil {
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}
	})
	do("GET", "/api/monitors/"+mon.ID, "", 200)
	if !receiver.wait(mon.ID, 30*time.Second) {
		t.Fatalf("no delivery of monitor %s within 30 s:\n%s", mon.ID, s.output())
	}
	do("DELETE", "/api/monitors/"+mon.ID, "", 204)
	deleted = true
	return scan.URL
}

// deliveryReceiver is a monitor's callback: it records the monitors whose
// events arrived.
type deliveryReceiver struct {
	url  string
	mu   sync.Mutex
	seen map[string]bool
	news chan struct{}
}

func newDeliveryReceiver(t *testing.T) *deliveryReceiver {
	r := &deliveryReceiver{seen: map[string]bool{}, news: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			MonitorID string `json:"monitor_id"`
		}
		if json.NewDecoder(req.Body).Decode(&ev) == nil && ev.MonitorID != "" {
			r.mu.Lock()
			r.seen[ev.MonitorID] = true
			r.mu.Unlock()
			select {
			case r.news <- struct{}{}:
			default:
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hook"
	return r
}

// wait reports whether an event of monitor id arrives within d.
func (r *deliveryReceiver) wait(id string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok := r.seen[id]
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-r.news:
		case <-deadline.C:
			return false
		}
	}
}
