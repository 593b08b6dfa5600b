package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/agentready/agentready/internal/redisurl"
)

// startupWarnings are what serve says at start about settings it runs with
// although they leave a deployment weaker than its operator believes: a
// Redis that a password in REDIS_URL seems to protect but does not, and
// signing secrets made up per process on an address other machines reach
// (docs/deploy.md, "What production needs"). None stops the start: each
// works for a trial run. addr is the listen address; env reads a setting;
// openRedis returns the hosts of a REDIS_URL that answer without its
// password (redisOpenHosts). No warning repeats a secret or the URL.
func startupWarnings(ctx context.Context, addr string, env func(string) string, openRedis func(context.Context, string) []string) []string {
	var out []string
	if u := env("REDIS_URL"); u != "" {
		for _, host := range openRedis(ctx, u) {
			out = append(out, fmt.Sprintf("Redis at %s accepts connections without a password, although REDIS_URL names one: anyone who reaches it reads and changes allowances, monitors and their webhook secrets. Set requirepass (or an ACL user) in its configuration to the password in REDIS_URL (docs/deploy.md, \"What production needs\")", host))
		}
	}
	if !listensBeyondLoopback(addr) {
		return out
	}
	if strings.TrimSpace(env("AGENTREADY_TOKEN_KEYS")) == "" {
		out = append(out, "AGENTREADY_TOKEN_KEYS is empty and serve listens beyond loopback: the token key is made anew at every start, so a restart invalidates every token callers hold, and no other process accepts them. Set it (docs/deploy.md, \"What production needs\")")
	}
	if strings.TrimSpace(env("AGENTREADY_EDGE_SECRET")) == "" {
		out = append(out, "AGENTREADY_EDGE_SECRET is empty and serve listens beyond loopback: the secret that signs callers' identities is made anew at every start, so no other edge or origin can share this one's. Set it, the same on every edge and origin (docs/deploy.md, \"What production needs\")")
	}
	return out
}

// listensBeyondLoopback reports whether a listen address may be reached
// from other machines: any address but a loopback IP or localhost (an empty
// host and 0.0.0.0 are every interface; a name may resolve to anything).
func listensBeyondLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

// redisOpenHosts returns the hosts (host:port) of redisURL that answer a
// PING sent without the password the URL names; nil when it names none.
// Every node is tried: each comma-separated host and each addr= parameter
// (go-redis's Cluster form), as origin/store reads them (redisurl.Seeds). A
// host that refuses, does not answer within a second, or fails the TLS
// handshake of a rediss:// URL is not reported: only a PONG proves the
// password is not needed.
func redisOpenHosts(ctx context.Context, redisURL string) []string {
	first, hosts := redisurl.Seeds(redisURL)
	u, err := url.Parse(first)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.User == nil {
		return nil
	}
	if pw, ok := u.User.Password(); !ok || pw == "" {
		return nil
	}
	var open []string
	for _, h := range hosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), "6379") // the URL's default port
		}
		if pingWithoutPassword(ctx, h, u.Scheme == "rediss") {
			open = append(open, h)
		}
	}
	return open
}

// pingWithoutPassword sends one PING on a fresh connection, before any
// AUTH or HELLO, and reports whether Redis answered PONG (a Redis that
// needs a password answers -NOAUTH).
func pingWithoutPassword(ctx context.Context, hostport string, useTLS bool) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if useTLS {
		host, _, _ := net.SplitHostPort(hostport)
		tc := tls.Client(conn, &tls.Config{ServerName: host})
		if tc.HandshakeContext(ctx) != nil {
			return false
		}
		conn = tc
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReaderSize(conn, 256).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
