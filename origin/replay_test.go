package origin_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

// A signed identity is good for one request (docs/deploy.md, "N origins on
// one Redis"). Headers captured between the edge and an origin, sent again
// (to the same origin or another sharing the store), with another query or
// another body, are refused; so are paths in any spelling but the canonical
// one.
func TestEdgeSignaturesCannotBeReplayed(t *testing.T) {
	secret := []byte("edge-secret-for-the-replay-test-0001")
	stores := map[string]func(t *testing.T) (store.Backend, store.Backend){
		"embedded": func(t *testing.T) (store.Backend, store.Backend) { st := embedded(t); return st, st },
	}
	if u := os.Getenv("REDIS_URL"); testenv.Optional(t, u != "", "REDIS_URL: two origins on one Redis (.ci/run starts redis-server)") {
		stores["redis"] = func(t *testing.T) (store.Backend, store.Backend) {
			prefix := fmt.Sprintf("agentready-test:replay:%d:", time.Now().UnixNano())
			one := func() store.Backend {
				r, err := store.OpenRedis(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { r.Close() })
				return r.WithPrefix(prefix)
			}
			return one(), one()
		}
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			o1 := startOrigin(t, origin.Config{EdgeSecret: secret}, a)
			o2 := startOrigin(t, origin.Config{EdgeSecret: secret}, b)
			s := site(t, "empty")
			query := "format=json&url=" + url.QueryEscape(s.URL)
			req := identity.Request{Method: "GET", Path: "/api/scan", Query: query}
			signed := func() []string {
				var h []string
				for k, v := range identity.Sign(secret, identity.Caller{Tier: identity.APIKey, Subject: "acme"}, "203.0.113.7", req, time.Now()) {
					h = append(h, k, v)
				}
				return h
			}
			code := func(resp int, b []byte) string {
				if resp == 200 {
					return "200"
				}
				return string(envelope(t, b).Code)
			}
			h := signed()
			if r, b := get(t, o1.URL+"/api/scan?"+query, h...); r.StatusCode != 200 {
				t.Fatalf("the signed request: %d %s", r.StatusCode, b)
			}
			hits := len(s.Hits())
			for _, c := range []struct {
				name, origin, target string
				hdr                  []string
			}{
				{"the same headers again", o1.URL, "/api/scan?" + query, h},
				{"the same headers at another origin", o2.URL, "/api/scan?" + query, h},
				{"fresh=1 added", o2.URL, "/api/scan?" + query + "&fresh=1", signed()},
			} {
				if r, b := get(t, c.origin+c.target, c.hdr...); code(r.StatusCode, b) != "invalid_identity" {
					t.Errorf("%s: %d %.200s", c.name, r.StatusCode, b)
				}
			}
			if n := len(s.Hits()) - hits; n != 0 {
				t.Errorf("replays scanned the site: %d requests", n)
			}
			// Another body under a POST's signature.
			posted := identity.Request{Method: "POST", Path: "/api/scan", Body: []byte(`{"url":"` + s.URL + `"}`)}
			var ph []string
			for k, v := range identity.Sign(secret, identity.Caller{Tier: identity.APIKey, Subject: "acme"}, "203.0.113.7", posted, time.Now()) {
				ph = append(ph, k, v)
			}
			if r, b := post(t, nil, o1.URL+"/api/scan", "application/json", `{"url":"https://other.example/"}`, ph...); code(r.StatusCode, b) != "invalid_identity" {
				t.Errorf("another body: %d %.200s", r.StatusCode, b)
			}
		})
	}
	o := startOrigin(t, origin.Config{EdgeSecret: secret}, nil)
	for _, path := range []string{"//api/scan", "/api/./scan", "/api/%73can", "/api/scan/../scan", "/./api/scan"} {
		if status, body := rawGet(t, o.URL, path+"?url=example.com"); status != 400 || !strings.Contains(body, "invalid_path") {
			t.Errorf("%s: %d %.200s", path, status, body)
		}
	}
}

// rawGet sends a request target exactly as written (net/http would clean it).
func rawGet(t *testing.T, base, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
	r := bufio.NewReader(c)
	var status int
	line, _ := r.ReadString('\n')
	if f := strings.Fields(line); len(f) > 1 {
		status = atoi(f[1])
	}
	var rest strings.Builder
	for {
		l, err := r.ReadString('\n')
		rest.WriteString(l)
		if err != nil {
			break
		}
	}
	return status, rest.String()
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
