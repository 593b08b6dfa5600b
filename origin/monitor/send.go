package monitor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/webhook"
)

// sender posts deliveries through the scanner's address guard: the callback
// host is resolved and checked at every dial, redirects are not followed.
type sender struct {
	client  *http.Client
	policy  fetch.AddressPolicy
	timeout time.Duration
}

// UserAgent identifies deliveries to receivers.
const UserAgent = "agentready-webhooks/1.0 (+https://github.com/agentready/agentready/blob/main/docs/webhooks.md)"

func newSender(cfg Config) *sender {
	// The address rules, not the port, keep deliveries off internal networks.
	policy := cfg.policy()
	return &sender{policy: policy, timeout: cfg.Timeout, client: fetch.GuardedClient(policy, cfg.Resolver, cfg.Timeout, 4)}
}

type outcome struct {
	code       int
	err        string
	latency    time.Duration
	retryAfter time.Duration
}

func (o outcome) delivered() bool { return o.code >= 200 && o.code < 300 }

// send makes one attempt: sign with this attempt's time, post, read a little
// of the answer (so the connection can be reused), classify.
func (s *sender) send(ctx context.Context, m store.Monitor, d store.Delivery, at time.Time) outcome {
	h, err := webhook.Sign(m.Secret, d.ID, at, d.Payload)
	if err != nil {
		return outcome{err: "the monitor's secret cannot sign (" + err.Error() + ")"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.CallbackURL, bytes.NewReader(d.Payload))
	if err != nil {
		return outcome{err: "the callback URL cannot be requested"}
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(webhook.HeaderEvent, d.Type)
	start := time.Now()
	resp, err := s.client.Do(req)
	lat := time.Since(start)
	if err != nil {
		return outcome{err: s.describe(err, req.URL.Hostname()), latency: lat}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	o := outcome{code: resp.StatusCode, latency: lat}
	if !o.delivered() {
		o.err = "the receiver answered " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			o.err += " (redirects are not followed: give the final URL as callback_url)"
		}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			o.retryAfter = time.Duration(secs) * time.Second
		}
	}
	return o
}

// describe says why an attempt got no answer, in words that name neither
// our network nor a library (and, for the hosted service, not how its
// resolver sees the receiver's name).
func (s *sender) describe(err error, host string) string {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		// A resolver's timeout is its answer about the name, not the receiver's.
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer within " + s.timeout.String()
	}
	return s.policy.Explain(err, host)
}
