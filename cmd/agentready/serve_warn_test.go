package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/redistest"
)

// What serve warns about at start, for each setting that works but leaves
// a deployment weaker than it looks (docs/deploy.md, "What production needs").
func TestStartupWarnings(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	keys := "k1:" + secret
	for _, tc := range []struct {
		name string
		addr string
		env  map[string]string
		open []string // what the Redis probe finds answering without a password
		want []string // a fragment of each warning, in order; none when empty
	}{
		{name: "loopback, nothing set", addr: "127.0.0.1:8080"},
		{name: "localhost, nothing set", addr: "localhost:8080"},
		{name: "IPv6 loopback, nothing set", addr: "[::1]:8080"},
		{name: "every interface, nothing set", addr: "0.0.0.0:8080",
			want: []string{"AGENTREADY_TOKEN_KEYS is empty and serve listens beyond loopback", "AGENTREADY_EDGE_SECRET is empty and serve listens beyond loopback"}},
		{name: "no host is every interface", addr: ":8080",
			env:  map[string]string{"AGENTREADY_EDGE_SECRET": secret},
			want: []string{"AGENTREADY_TOKEN_KEYS is empty"}},
		{name: "a private address, keys set, secret blank", addr: "10.0.0.5:8081",
			env:  map[string]string{"AGENTREADY_TOKEN_KEYS": keys, "AGENTREADY_EDGE_SECRET": "  "},
			want: []string{"AGENTREADY_EDGE_SECRET is empty"}},
		{name: "a host name may resolve anywhere", addr: "agentready.internal:8080",
			env:  map[string]string{"AGENTREADY_TOKEN_KEYS": keys},
			want: []string{"AGENTREADY_EDGE_SECRET is empty"}},
		{name: "every interface, both set", addr: "0.0.0.0:8080",
			env: map[string]string{"AGENTREADY_TOKEN_KEYS": keys, "AGENTREADY_EDGE_SECRET": secret}},
		{name: "Redis open although the URL names a password", addr: "127.0.0.1:8080",
			env:  map[string]string{"REDIS_URL": "redis://:" + secret + "@redis:6379/0"},
			open: []string{"redis:6379"},
			want: []string{"Redis at redis:6379 accepts connections without a password, although REDIS_URL names one"}},
		{name: "Redis wants its password", addr: "127.0.0.1:8080",
			env: map[string]string{"REDIS_URL": "redis://:" + secret + "@redis:6379/0"}},
		{name: "everything at once", addr: "0.0.0.0:8080",
			env:  map[string]string{"REDIS_URL": "redis://:" + secret + "@h1:7000,h2:7000/0"},
			open: []string{"h1:7000", "h2:7000"},
			want: []string{"Redis at h1:7000", "Redis at h2:7000", "AGENTREADY_TOKEN_KEYS", "AGENTREADY_EDGE_SECRET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed := ""
			probe := func(_ context.Context, u string) []string { probed = u; return tc.open }
			got := startupWarnings(context.Background(), tc.addr, func(k string) string { return tc.env[k] }, probe)
			if len(got) != len(tc.want) {
				t.Fatalf("%d warnings, want %d (%q):\n%s", len(got), len(tc.want), tc.want, strings.Join(got, "\n"))
			}
			for i, w := range got {
				if !strings.Contains(w, tc.want[i]) {
					t.Errorf("warning %d says %q; want it to say %q", i, w, tc.want[i])
				}
				if strings.Contains(w, secret) || strings.Contains(w, "redis://") {
					t.Errorf("warning %d repeats a secret or the URL: %q", i, w)
				}
				if !strings.Contains(w, "docs/deploy.md") {
					t.Errorf("warning %d does not say where to read what to do: %q", i, w)
				}
			}
			if probed != tc.env["REDIS_URL"] {
				t.Errorf("the Redis probe was given %q, want REDIS_URL %q (and no probe without one)", probed, tc.env["REDIS_URL"])
			}
		})
	}
}

// The Redis probe against a real redis-server of the test's own on a free
// loopback port: without requirepass it answers a PING with no password,
// which serve must report (naming the address, never the password); once
// requirepass is set, it must not.
func TestStartupWarningRedisWithoutPassword(t *testing.T) {
	s := redistest.Start(t)
	const password = "test-only-password-4f1d"
	withPassword := "redis://:" + password + "@" + s.Addr + "/0"
	env := func(u string) func(string) string {
		return func(k string) string {
			if k == "REDIS_URL" {
				return u
			}
			return ""
		}
	}
	ctx := context.Background()

	got := startupWarnings(ctx, "127.0.0.1:0", env(withPassword), redisOpenHosts)
	want := "Redis at " + s.Addr + " accepts connections without a password"
	if len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], "Set requirepass") {
		t.Fatalf("a Redis without requirepass behind a URL with a password: warnings %q; want one saying %q and to set requirepass", got, want)
	}
	if strings.Contains(got[0], password) || strings.Contains(got[0], "redis://") {
		t.Fatalf("the warning repeats the password or the URL: %q", got[0])
	}
	// A Cluster's seed list: only the node that answers is named.
	closed := closedPort(t)
	if open := redisOpenHosts(ctx, "redis://:"+password+"@"+closed+","+s.Addr+"/0"); len(open) != 1 || open[0] != s.Addr {
		t.Errorf("seed nodes %s (closed) and %s (open): reported %q, want only the open one", closed, s.Addr, open)
	}
	// No password in the URL: nothing to check, no warning (and no dial).
	if got := startupWarnings(ctx, "127.0.0.1:0", env(s.URL), redisOpenHosts); len(got) != 0 {
		t.Errorf("REDIS_URL without a password: warnings %q, want none", got)
	}

	redisCommand(t, s.Addr, "CONFIG", "SET", "requirepass", password)
	if got := startupWarnings(ctx, "127.0.0.1:0", env(withPassword), redisOpenHosts); len(got) != 0 {
		t.Errorf("a Redis with requirepass set: warnings %q, want none", got)
	}
}

// redisCommand sends one command without authenticating and wants +OK.
func redisCommand(t *testing.T, addr string, args ...string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	cmd := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		cmd += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+OK\r\n" {
		t.Fatalf("redis %s: %q %v, want +OK", args[0], line, err)
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
