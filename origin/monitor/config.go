package monitor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/engine/fetch"
)

// Config tunes the monitors. Zero fields take the defaults in parentheses;
// FromEnv reads them from AGENTREADY_* settings (docs/api.md lists them).
type Config struct {
	MinCadence   time.Duration         // shortest cadence a caller may ask for (15 min)
	MaxCadence   time.Duration         // longest (30 days)
	MaxPerTier   map[identity.Tier]int // monitors one caller may hold (anonymous 3, token 10, key 200)
	MaxPerMinter int                   // monitors all the tokens one address minted may hold together (10): its free tokens (10 an hour) would otherwise each hold MaxPerTier[Token]
	Workers      int                   // scheduled scans at once on this origin (8): the rest of the scanner stays for interactive callers
	Senders      int                   // deliveries in flight at once on this origin (16)
	RunLease     time.Duration         // how long a claimed run stays with its origin before another may take it (2 min; longer than a scan)
	Poll         time.Duration         // how often the store is asked for due work when none was due (1 s)
	Retries      []time.Duration       // waits between delivery attempts (10 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h)
	Jitter       float64               // ± this fraction on each wait (0.2)
	Timeout      time.Duration         // one delivery attempt, connect to answer (10 s)
	MaxFailures  int                   // scheduled deliveries in a row failing their first attempt before the monitor is disabled (10)
	ReportTTL    time.Duration         // how long a run's report_url answers (the retry schedule at its longest jitter, plus an hour: 29 h by default)
	AllowPrivate bool                  // callbacks and targets on loopback/private addresses, and http callbacks (local testing only)
	Now          func() time.Time
	// Policy is the scanner's address policy (engine/fetch): callbacks pass
	// the same guard, on any port, widened by AllowPrivate. Its allow-list
	// admits exactly the receivers it names (and, like AllowPrivate, http
	// callbacks); with Opaque every refused or unresolvable callback gets
	// one answer.
	Policy fetch.AddressPolicy
	// Resolver resolves callback hosts, at creation and at every delivery
	// (nil: the system resolver).
	Resolver fetch.Resolver
}

// DefaultRetries is the delivery schedule: about a day of attempts.
var DefaultRetries = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour}

// DefaultMaxPerTier is how many monitors a caller of each tier may hold.
var DefaultMaxPerTier = map[identity.Tier]int{identity.Anonymous: 3, identity.Token: 10, identity.APIKey: 200}

// DefaultMaxPerMinter is how many monitors all the tokens one address
// minted may hold together.
const DefaultMaxPerMinter = 10

// policy is the guard callbacks pass: the scanner's, on any port (receivers
// listen on 8443, 3000 behind a tunnel…), widened by AllowPrivate.
func (c *Config) policy() fetch.AddressPolicy {
	p := c.Policy
	p.AllowPrivate = p.AllowPrivate || c.AllowPrivate
	p.AllowAnyPort = true
	return p
}

func (c *Config) defaults() {
	if c.MinCadence <= 0 {
		c.MinCadence = 15 * time.Minute
	}
	if c.MaxCadence <= 0 {
		c.MaxCadence = 30 * 24 * time.Hour
	}
	perTier := make(map[identity.Tier]int, len(DefaultMaxPerTier))
	for t, n := range DefaultMaxPerTier {
		perTier[t] = n
	}
	for t, n := range c.MaxPerTier { // given tiers override; 0 means none allowed
		perTier[t] = n
	}
	c.MaxPerTier = perTier
	if c.MaxPerMinter <= 0 {
		c.MaxPerMinter = DefaultMaxPerMinter
	}
	if c.Workers <= 0 {
		c.Workers = 8
	}
	if c.Senders <= 0 {
		c.Senders = 16
	}
	if c.RunLease <= 0 {
		c.RunLease = 2 * time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Retries == nil {
		c.Retries = DefaultRetries
	}
	if c.Jitter == 0 {
		c.Jitter = 0.2
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = 10
	}
	if c.ReportTTL <= 0 {
		// A report must outlive the last retry of the events that link to it.
		var total time.Duration
		for _, d := range c.Retries {
			total += d
		}
		c.ReportTTL = time.Duration(float64(total)*(1+max(c.Jitter, 0))) + time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// deliveryLease outlasts one attempt with room for the store writes after it.
func (c *Config) deliveryLease() time.Duration { return 3*c.Timeout + 5*time.Second }

// FromEnv reads the AGENTREADY_MONITOR_* and AGENTREADY_WEBHOOK_* settings.
func FromEnv(env func(string) string) (Config, error) {
	var c Config
	durations := []struct {
		name string
		to   *time.Duration
	}{
		{"AGENTREADY_MONITOR_MIN_CADENCE", &c.MinCadence},
		{"AGENTREADY_MONITOR_LEASE", &c.RunLease},
		{"AGENTREADY_MONITOR_POLL", &c.Poll},
		{"AGENTREADY_WEBHOOK_TIMEOUT", &c.Timeout},
	}
	for _, d := range durations {
		if v := env(d.name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive Go duration such as 15m or 30s", d.name, v)
			}
			*d.to = x
		}
	}
	ints := []struct {
		name string
		to   *int
	}{
		{"AGENTREADY_MONITOR_WORKERS", &c.Workers},
		{"AGENTREADY_WEBHOOK_SENDERS", &c.Senders},
		{"AGENTREADY_MONITOR_MAX_FAILURES", &c.MaxFailures},
		{"AGENTREADY_MONITORS_PER_MINTER", &c.MaxPerMinter},
	}
	for _, d := range ints {
		if v := env(d.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s=%q: want a whole number above 0", d.name, v)
			}
			*d.to = n
		}
	}
	tiers := []struct {
		name string
		tier identity.Tier
	}{{"AGENTREADY_MONITORS_ANONYMOUS", identity.Anonymous}, {"AGENTREADY_MONITORS_TOKEN", identity.Token}, {"AGENTREADY_MONITORS_KEY", identity.APIKey}}
	for _, t := range tiers {
		if v := env(t.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return c, fmt.Errorf("%s=%q: want a whole number (0: this tier may not create monitors)", t.name, v)
			}
			if c.MaxPerTier == nil {
				c.MaxPerTier = map[identity.Tier]int{}
			}
			c.MaxPerTier[t.tier] = n
		}
	}
	if v := env("AGENTREADY_WEBHOOK_RETRIES"); v != "" {
		for _, f := range strings.Split(v, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil || d <= 0 {
				return c, fmt.Errorf("AGENTREADY_WEBHOOK_RETRIES=%q: want comma-separated waits such as 10s,1m,5m", v)
			}
			c.Retries = append(c.Retries, d)
		}
	}
	return c, nil
}
