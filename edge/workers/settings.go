package workers

import (
	"errors"
	"net/url"
	"strings"

	"github.com/agentready/agentready/edge"
)

// Settings are the Worker's own settings, beside the edge's (edge.FromEnv).
// They are read once per isolate.
type Settings struct {
	Origin *url.URL // ORIGIN_URL
	Redis  Target   // REDIS_URL (or REDIS_ADDR)
	Prefix string   // AGENTREADY_RATE_PREFIX, "rate:" by default
}

// placeholder reports whether v is still one of wrangler.toml's placeholders,
// written "<what to put here>" so that a deployment that forgets one fails
// on its first request instead of talking to a host nobody chose.
func placeholder(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "<") }

// required reads a setting that has no default on Workers.
func required(getenv func(string) string, name, what string) (string, error) {
	v := strings.TrimSpace(getenv(name))
	switch {
	case v == "":
		return "", &edge.ConfigError{Setting: name, Err: errors.New("not set: set it to " + what + " (`wrangler secret put " + name + "`, or wrangler.toml [vars] for a value that is not secret)")}
	case placeholder(v):
		return "", &edge.ConfigError{Setting: name, Err: errors.New("still wrangler.toml's placeholder: replace it with " + what)}
	}
	return v, nil
}

// baseURL reads an absolute http(s) URL setting.
func baseURL(getenv func(string) string, name, what string) (*url.URL, error) {
	v, err := required(getenv, name, what)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, &edge.ConfigError{Setting: name, Err: errors.New("not an http(s) base URL: set it to " + what)}
	}
	return u, nil
}

// ReadSettings reads everything a Worker needs from its environment: the
// edge's configuration and the platform's settings. On Workers the public
// base URL, the origin and a Redis are required (a Worker keeps no
// allowances of its own, and its fetch cannot pass the caller's Host on to
// the origin). The error is an *edge.ConfigError naming the setting at fault.
func ReadSettings(getenv func(string) string) (edge.Config, Settings, error) {
	var s Settings
	var err error
	if s.Origin, err = baseURL(getenv, "ORIGIN_URL", "the origin's base URL (https://origin.example.com)"); err != nil {
		return edge.Config{}, s, err
	}
	if _, err = baseURL(getenv, "AGENTREADY_BASE_URL", "the public base URL of the service (https://agentready.example.com)"); err != nil {
		return edge.Config{}, s, err
	}
	redisURL, addr := strings.TrimSpace(getenv("REDIS_URL")), strings.TrimSpace(getenv("REDIS_ADDR"))
	if redisURL == "" && addr == "" || placeholder(redisURL) {
		_, err = required(getenv, "REDIS_URL", "the Redis that holds the allowances, redis:// or rediss://[user:password@]host[:port][/db] (host:port,host:port,… for a Redis Cluster)")
		return edge.Config{}, s, err
	}
	if s.Redis, err = ParseTarget(redisURL, addr); err != nil {
		name := "REDIS_URL"
		if redisURL == "" {
			name = "REDIS_ADDR"
		}
		return edge.Config{}, s, &edge.ConfigError{Setting: name, Err: err}
	}
	if s.Prefix = getenv("AGENTREADY_RATE_PREFIX"); s.Prefix == "" {
		s.Prefix = "rate:"
	}
	cfg, err := edge.FromEnv(getenv)
	return cfg, s, err
}
