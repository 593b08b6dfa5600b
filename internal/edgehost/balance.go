package edgehost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Balancer spreads the edge's requests over several origins (`serve --role
// edge`, AGENTREADY_ORIGINS): round robin over the healthy ones, each with a
// connection pool of its own. An origin is taken out when a connection to it
// is refused (passively, on the request that found out, which is retried on
// the next origin) or when its GET /healthz does not answer 200 (a probe
// every ProbeInterval); it is let back in when its health check answers 200
// again, or when it answers a request it was tried for as a last resort
// (every origin out: each is still tried, so one that is merely slow to
// report is not lost). Only a request that never reached an origin is
// retried, so nothing runs twice: a request the origin died under fails
// with the edge's 502, and a response, a Server-Sent Events stream
// included, stays with the origin that started it.
type Balancer struct {
	origins   []*origin
	next      atomic.Uint64
	transport *http.Transport
	probe     *http.Client
	interval  time.Duration
	ctx       context.Context // ends with Close
	cancel    context.CancelFunc
	stopped   sync.WaitGroup
}

type origin struct {
	url  *url.URL
	down atomic.Bool
}

// BalancerOptions tune a Balancer; zero fields take the defaults in parentheses.
type BalancerOptions struct {
	ProbeInterval time.Duration // how often each origin's /healthz is asked (2 s)
	ProbeTimeout  time.Duration // how long a probe may take (2 s)
	DialTimeout   time.Duration // connecting to an origin; past it the next is tried (3 s)
}

// NewBalancer checks the origins' URLs (http or https, a host, no path
// beyond "/") and starts probing them; Close stops the probes.
func NewBalancer(origins []string, o BalancerOptions) (*Balancer, error) {
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = 2 * time.Second
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 2 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 3 * time.Second
	}
	b := &Balancer{interval: o.ProbeInterval}
	seen := map[string]bool{}
	for _, s := range origins {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			if err == nil && u.User != nil {
				s = u.Redacted()
			}
			return nil, fmt.Errorf("origin %q: want a base URL such as http://origin-a:8081 (http or https, no path, no credentials)", s)
		}
		u.Path = ""
		if seen[u.Host] {
			return nil, fmt.Errorf("origin %s is listed twice", u.Host)
		}
		seen[u.Host] = true
		b.origins = append(b.origins, &origin{url: u})
	}
	if len(b.origins) == 0 {
		return nil, errors.New("no origin given: list at least one base URL, e.g. http://origin-a:8081")
	}
	t := Transport(nil)
	t.Proxy = nil // origins are reached directly, never through HTTP_PROXY
	t.DialContext = (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	b.transport = t
	b.probe = &http.Client{Transport: t, Timeout: o.ProbeTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.stopped.Add(1)
	go b.probeLoop()
	return b, nil
}

// URL is the first origin's base URL: what the edge's hosts are configured
// with (the Balancer puts each request's own origin in its place).
func (b *Balancer) URL() string { return b.origins[0].url.String() }

// Healthy lists the origins now in the rotation.
func (b *Balancer) Healthy() []string {
	var up []string
	for _, o := range b.origins {
		if !o.down.Load() {
			up = append(up, o.url.String())
		}
	}
	return up
}

// Close stops the probes and the idle connections.
func (b *Balancer) Close() {
	b.cancel()
	b.stopped.Wait()
	b.transport.CloseIdleConnections()
}

// RoundTrip sends req to the next healthy origin, and on to the following
// ones while connections are refused. A request with a body moves on only
// when it can be sent again (GetBody; the wazero host sets it).
func (b *Balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	n := len(b.origins)
	start := int((b.next.Add(1) - 1) % uint64(n))
	var lastErr error
	tries := 0
	for pass := 0; pass < 2; pass++ { // the healthy ones in turn, then the others
		for i := 0; i < n; i++ {
			o := b.origins[(start+i)%n]
			if o.down.Load() != (pass == 1) {
				continue
			}
			out := req.WithContext(req.Context()) // a shallow copy: only the URL differs
			u := *req.URL
			u.Scheme, u.Host = o.url.Scheme, o.url.Host
			out.URL = &u
			if tries > 0 && req.Body != nil && req.Body != http.NoBody {
				if req.GetBody == nil {
					return nil, lastErr
				}
				body, err := req.GetBody()
				if err != nil {
					return nil, lastErr
				}
				out.Body = body
			}
			tries++
			resp, err := b.transport.RoundTrip(out)
			if err == nil {
				if o.down.CompareAndSwap(true, false) {
					slog.Info("origin answers again", "origin", o.url.String())
				}
				return resp, nil
			}
			if !neverReached(err) || req.Context().Err() != nil {
				return nil, err
			}
			if o.down.CompareAndSwap(false, true) {
				slog.Warn("origin refused a connection; skipped until its health check passes", "origin", o.url.String())
			}
			lastErr = err
		}
	}
	return nil, lastErr
}

// neverReached: the request failed before a connection to the origin
// existed (refused, unreachable, no such host, dial timeout), so sending it
// elsewhere cannot run it twice.
func neverReached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (b *Balancer) probeLoop() {
	defer b.stopped.Done()
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		var wg sync.WaitGroup
		for _, o := range b.origins {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.check(o)
			}()
		}
		wg.Wait()
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check asks one origin's /healthz and moves it in or out of the rotation.
func (b *Balancer) check(o *origin) {
	req, _ := http.NewRequestWithContext(b.ctx, http.MethodGet, o.url.String()+"/healthz", nil)
	resp, err := b.probe.Do(req)
	if b.ctx.Err() != nil {
		return // closing
	}
	healthy, why := false, "no answer"
	if err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
		resp.Body.Close()
		healthy, why = resp.StatusCode == http.StatusOK, resp.Status
	}
	switch {
	case healthy && o.down.CompareAndSwap(true, false):
		slog.Info("origin healthy again; back in the rotation", "origin", o.url.String())
	case !healthy && o.down.CompareAndSwap(false, true):
		slog.Warn("origin failed its health check; skipped until it passes", "origin", o.url.String(), "health", why)
	}
}
