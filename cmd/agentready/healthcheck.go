package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheckCmd asks a running `serve` for GET /healthz and exits 0 on a
// 200, 1 otherwise: the container's HEALTHCHECK (deploy/Dockerfile), which
// then needs no curl in the image. The address defaults to the one serve
// listens on (AGENTREADY_ADDR), a wildcard host asked on loopback.
func healthcheckCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("healthcheck", "healthcheck", stderr)
	target := fs.String("url", "", "")
	timeout := fs.Duration("timeout", 3*time.Second, "")
	wait := fs.Duration("wait", 0, "")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentready healthcheck: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	u := *target
	if u == "" {
		var err error
		if u, err = healthURL(envOr("AGENTREADY_ADDR", "127.0.0.1:8080")); err != nil {
			fmt.Fprintf(stderr, "agentready healthcheck: %v\n", err)
			return exitUsage
		}
	}
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	deadline := time.Now().Add(*wait)
	for {
		status, err := askHealth(client, u)
		if err == nil && status == http.StatusOK {
			fmt.Fprintf(stdout, "healthy: %s answered 200\n", u)
			return exitOK
		}
		if time.Now().After(deadline) {
			if err != nil {
				fmt.Fprintf(stderr, "unhealthy: %s did not answer (%v)\n", u, err)
			} else {
				fmt.Fprintf(stderr, "unhealthy: %s answered %d\n", u, status)
			}
			return 1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func askHealth(c *http.Client, u string) (int, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// healthURL is /healthz on the address serve listens on; a wildcard or
// empty host (0.0.0.0:8080, [::]:8080, :8080) is asked on loopback.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("AGENTREADY_ADDR=%q is not HOST:PORT; pass --url http://HOST:PORT/healthz", addr)
	}
	switch strings.Trim(host, "[]") {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
