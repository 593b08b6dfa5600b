package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/webhook"
)

// Deps is what the service needs from the origin.
type Deps struct {
	Store store.Monitors
	// ValidateURL applies the scanner's rules to a target (the same as /api/scan).
	ValidateURL func(raw string) (string, error)
	// Scan scans url afresh through the origin's one scan path. An error
	// wrapping ErrTryLater means the scanner could not take the run now
	// (busy, shutting down): the run is retried soon instead of recorded.
	Scan func(ctx context.Context, url string) (res *report.Result, raw []byte, err error)
}

// ErrTryLater marks a scan the origin could not run now.
var ErrTryLater = errors.New("the scanner cannot take this run now")

// refuse is a refusal the caller can act on; the transports answer it, as
// any *apierr.Error, with its code's status and the envelope.
func refuse(code apierr.Code, format string, a ...any) *apierr.Error {
	return apierr.Errorf(code, format, a...)
}

// Service creates monitors and runs their schedule and deliveries.
type Service struct {
	cfg    Config
	deps   Deps
	sender *sender
	// The kicks wake a loop when new work is due now (a created monitor, a
	// run's deliveries, a redelivery), so it does not wait for the next poll.
	runKick, kick chan struct{}
	wg            sync.WaitGroup
	recent        *recentScans // the scans runs made lately, for runs due before they began
	// sendSlots holds a token per delivery being sent (Senders at most),
	// by the sender loop or by a run sending its own; sendFreed wakes the
	// sender loop when a run gives one back.
	sendSlots, sendFreed chan struct{}
}

// New builds a service; Run starts its loops.
func New(cfg Config, deps Deps) *Service {
	cfg.defaults()
	return &Service{cfg: cfg, deps: deps, sender: newSender(cfg), kick: make(chan struct{}, 1), runKick: make(chan struct{}, 1),
		recent: &recentScans{keep: cfg.RunLease}, sendSlots: make(chan struct{}, cfg.Senders), sendFreed: make(chan struct{}, 1)}
}

// Config is the effective configuration (defaults applied).
func (s *Service) Config() Config { return s.cfg }

// CreateRequest is the body of POST /api/monitors.
type CreateRequest struct {
	URL         *string  `json:"url"`
	CallbackURL *string  `json:"callback_url"`
	Cadence     *string  `json:"cadence"`
	Events      []string `json:"events"`
}

// Cadence words and what they mean.
var cadenceWords = map[string]time.Duration{"hourly": time.Hour, "daily": 24 * time.Hour, "weekly": 7 * 24 * time.Hour}

// ParseCadence reads "15m", "6h", "hourly", "daily" or "weekly".
func ParseCadence(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if d, ok := cadenceWords[strings.ToLower(s)]; ok {
		return d, true
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// validateCallback reads a callback URL with the scanner's URL guard, before
// it is stored: the host spelling rules of the scanner's URLs (weburl.Host:
// no numeric hosts in non-standard notations, no single-label names), then
// the address policy on every address the host resolves to, through the
// resolver deliveries use. The dialer applies the policy again at every
// attempt (DNS changes): this is for a clear answer now, and so that no
// monitor is kept for a receiver that can never be reached.
func (s *Service) validateCallback(ctx context.Context, raw string) (string, *apierr.Error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", refuse(apierr.InvalidCallbackURL, "callback_url must be an absolute https:// URL of your webhook receiver.")
	}
	policy := s.cfg.policy()
	if u.Scheme == "http" && !policy.AllowPrivate && len(policy.Allow) == 0 {
		return "", refuse(apierr.InvalidCallbackURL, "callback_url must use https: deliveries carry signed data and are only sent over TLS (http is accepted only by a server started with --allow-private or --allow).")
	}
	u.Fragment, u.RawFragment = "", ""
	if len(u.String()) > 2048 {
		return "", refuse(apierr.InvalidCallbackURL, "callback_url is longer than 2048 characters.")
	}
	host, err := weburl.Host(u.Hostname())
	if err != nil {
		return "", refuse(apierr.InvalidCallbackURL, "callback_url %s.", err.Error())
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return "", refuse(apierr.InvalidCallbackURL, "callback_url's port is not a number between 1 and 65535.")
		}
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := policy.CheckHost(rctx, s.cfg.Resolver, host, port); err != nil {
		return "", refuse(apierr.InvalidCallbackURL, "callback_url: %s. Deliveries only go to public receivers.", policy.Explain(err, strings.Trim(host, "[]")))
	}
	return u.String(), nil
}

// Created is a new monitor with the secret it signs with (shown only once).
type Created struct {
	Monitor store.Monitor
	Secret  string
}

// Create validates req and stores a monitor for caller, its first run due
// at once. base is the public base URL report links are built on.
func (s *Service) Create(ctx context.Context, caller identity.Caller, base string, req CreateRequest) (Created, error) {
	if req.URL == nil || strings.TrimSpace(*req.URL) == "" {
		return Created{}, refuse(apierr.MissingURL, "url is required: the site to monitor, e.g. \"example.com\".")
	}
	target, err := s.deps.ValidateURL(*req.URL)
	if err != nil {
		return Created{}, refuse(apierr.InvalidURL, "url: %s", err.Error())
	}
	if req.CallbackURL == nil || strings.TrimSpace(*req.CallbackURL) == "" {
		return Created{}, refuse(apierr.InvalidCallbackURL, "callback_url is required: the https URL your webhook receiver listens on.")
	}
	cadence := "daily"
	if req.Cadence != nil {
		cadence = strings.TrimSpace(*req.Cadence)
	}
	interval, ok := ParseCadence(cadence)
	switch {
	case !ok:
		return Created{}, refuse(apierr.InvalidCadence, "cadence must be a duration such as \"15m\" or \"6h\", or one of hourly, daily, weekly.")
	case interval < s.cfg.MinCadence:
		return Created{}, refuse(apierr.CadenceTooShort, "cadence is shorter than this service's minimum of %s; ask for %s or longer.", apierr.Duration(s.cfg.MinCadence), apierr.Duration(s.cfg.MinCadence))
	case interval > s.cfg.MaxCadence:
		return Created{}, refuse(apierr.InvalidCadence, "cadence is longer than the maximum of %s.", apierr.Duration(s.cfg.MaxCadence))
	}
	events := []string{webhook.EventScanCompleted, webhook.EventScoreChanged}
	if req.Events != nil {
		seen := map[string]bool{}
		events = events[:0:0]
		for _, e := range req.Events {
			if e != webhook.EventScanCompleted && e != webhook.EventScoreChanged {
				return Created{}, refuse(apierr.InvalidEvents, "events may hold only \"scan.completed\" and \"score.changed\" (omit it for both).")
			}
			if !seen[e] {
				seen[e] = true
				events = append(events, e)
			}
		}
		if len(events) == 0 {
			return Created{}, refuse(apierr.InvalidEvents, "events is empty: a monitor must deliver at least one event type (omit it for both).")
		}
	}
	max := s.cfg.MaxPerTier[caller.Tier]
	if max <= 0 {
		return Created{}, refuse(apierr.TooManyMonitors, "callers of this tier may not create monitors; use an API key.")
	}
	// Last of the checks: it resolves the callback's host.
	callback, rerr := s.validateCallback(ctx, *req.CallbackURL)
	if rerr != nil {
		return Created{}, rerr
	}
	id, err := webhook.NewID("mon")
	if err != nil {
		return Created{}, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return Created{}, err
	}
	now := s.cfg.Now().UTC()
	m := store.Monitor{ID: id, URL: target, CallbackURL: callback, Cadence: cadence, Interval: interval, Events: events,
		Secret: secret, Quota: caller.Key(), Created: now.Truncate(time.Second), BaseURL: strings.TrimSuffix(base, "/")}
	if caller.Tier == identity.Token || caller.Tier == identity.APIKey {
		m.Owner = caller.Key()
	}
	if caller.Tier == identity.Token && caller.Minter != "" {
		// Tokens are free and each address mints ten an hour: what they
		// hold together counts against the address that minted them.
		m.Minter = "minter:" + caller.Minter
	}
	switch err := s.deps.Store.Create(ctx, m, now, max, s.cfg.MaxPerMinter); {
	case errors.Is(err, store.ErrMinterQuota):
		return Created{}, refuse(apierr.TooManyMonitors, "the tokens minted from this address already hold %d monitors together, the most they may; delete one (DELETE /api/monitors/{id}) or use an API key.", s.cfg.MaxPerMinter)
	case errors.Is(err, store.ErrQuota):
		return Created{}, refuse(apierr.TooManyMonitors, "this caller already has %d monitors, the most its tier allows; delete one (DELETE /api/monitors/{id}) or use an API key.", max)
	case err != nil:
		return Created{}, err
	}
	m.NextRun = now
	nudge(s.runKick)
	return Created{Monitor: m, Secret: secret}, nil
}

// Get returns a monitor that caller may see: a monitor bound to a caller is
// invisible (not found, not forbidden) to everyone else.
func (s *Service) Get(ctx context.Context, caller identity.Caller, id string) (store.Monitor, error) {
	if !plausibleID(id, "mon_") {
		return store.Monitor{}, store.ErrNotFound
	}
	m, err := s.deps.Store.Get(ctx, id)
	if err != nil {
		return m, err
	}
	if m.Owner != "" && m.Owner != caller.Key() {
		return store.Monitor{}, store.ErrNotFound
	}
	return m, nil
}

// plausibleID refuses ids that no monitor or event can have before they
// reach the store (and its keys).
func plausibleID(id, prefix string) bool {
	if !strings.HasPrefix(id, prefix) || len(id) > 64 {
		return false
	}
	for _, r := range id[len(prefix):] {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Delete removes a monitor caller may see (read once: the store deletes
// the monitor this read found).
func (s *Service) Delete(ctx context.Context, caller identity.Caller, id string) error {
	m, err := s.Get(ctx, caller, id)
	if err != nil {
		return err
	}
	return s.deps.Store.Delete(ctx, m)
}

// ListMax is the most monitors one list answer holds.
const ListMax = 1000

// List returns the monitors bound to caller (created with its token or API
// key), oldest first. A caller without credentials is refused: its
// monitors are bound to nobody (whoever holds an id controls it), and
// listing them by address would hand them to everyone behind that address.
func (s *Service) List(ctx context.Context, caller identity.Caller) ([]store.Monitor, error) {
	if caller.Tier != identity.Token && caller.Tier != identity.APIKey {
		return nil, refuse(apierr.CredentialsRequired, "only monitors created with a token or an API key can be listed, by the same token or key; a monitor created without credentials is known only by the id its creation returned.")
	}
	all, err := s.deps.Store.List(ctx, caller.Key(), ListMax)
	if err != nil {
		return nil, err
	}
	mine := all[:0]
	for _, m := range all {
		if m.Owner == caller.Key() {
			mine = append(mine, m)
		}
	}
	return mine, nil
}

// Deliveries lists a monitor's recent deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, caller identity.Caller, id string, limit int) ([]store.Delivery, error) {
	if _, err := s.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	return s.deps.Store.Deliveries(ctx, id, limit)
}

// Redeliver queues a delivery again now, with the same webhook-id.
func (s *Service) Redeliver(ctx context.Context, caller identity.Caller, id, deliveryID string) (store.Delivery, error) {
	m, err := s.Get(ctx, caller, id)
	if err != nil {
		return store.Delivery{}, err
	}
	if !plausibleID(deliveryID, "evt_") {
		return store.Delivery{}, store.ErrNotFound
	}
	d, err := s.deps.Store.Redeliver(ctx, m, deliveryID, s.cfg.Now())
	switch {
	case errors.Is(err, store.ErrDisabled):
		return d, refuse(apierr.MonitorDisabled, "the monitor is disabled, so nothing is delivered for it; GET it for the reason, then create a new monitor.")
	case errors.Is(err, store.ErrInFlight):
		return d, refuse(apierr.DeliveryInFlight, "this delivery is being attempted right now; list the deliveries in a few seconds to see how it went.")
	case err != nil:
		return d, err
	}
	nudge(s.kick)
	return d, nil
}

// Report is the report a run of a monitor caller may see produced.
func (s *Service) Report(ctx context.Context, caller identity.Caller, id, reportID string) ([]byte, error) {
	if _, err := s.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	if !plausibleID(reportID, "rep_") {
		return nil, store.ErrNotFound
	}
	return s.deps.Store.Report(ctx, id, reportID)
}

// ReportURL is where a run's report is served.
func ReportURL(m store.Monitor, reportID string) string {
	if reportID == "" {
		return ""
	}
	return m.BaseURL + "/api/monitors/" + m.ID + "/reports/" + reportID
}

// TestResult is what POST /api/monitors/{id}/test answers: how the receiver
// took a sample delivery.
type TestResult struct {
	DeliveryID string `json:"delivery_id"`
	Delivered  bool   `json:"delivered"`
	StatusCode int    `json:"status_code,omitempty"`
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

// Test sends a sample delivery now and waits for the receiver's answer. It
// is not queued or retried: it is how a user checks a receiver.
func (s *Service) Test(ctx context.Context, caller identity.Caller, id string) (TestResult, error) {
	m, err := s.Get(ctx, caller, id)
	if err != nil {
		return TestResult{}, err
	}
	evID, err := webhook.NewID("evt")
	if err != nil {
		return TestResult{}, err
	}
	ev := webhook.Event{ID: evID, Type: webhook.EventScanCompleted, CreatedAt: s.cfg.Now().UTC(), MonitorID: m.ID, Test: true,
		Data: webhook.Data{URL: m.URL, Score: m.Run.Score, Grade: m.Run.Grade, Level: m.Run.Level, LevelName: m.Run.LevelName,
			ReportURL: ReportURL(m, m.Run.ReportID), ScheduledFor: m.Run.LastScheduled}}
	if ev.Data.ScheduledFor.IsZero() {
		ev.Data.ScheduledFor = ev.CreatedAt // no run yet: the sample stands for one now
	}
	// The sample stands for a run that found what the last one did: its
	// previous is that run, and nothing changed since (a report of no
	// checks leaves every list empty).
	ev.Data.Previous = previousOf(m.Run, &report.Result{})
	body, err := json.Marshal(ev)
	if err != nil {
		return TestResult{}, err
	}
	out := s.sender.send(ctx, m, store.Delivery{ID: evID, Type: ev.Type, Payload: body}, s.cfg.Now())
	return TestResult{DeliveryID: evID, Delivered: out.delivered(), StatusCode: out.code, LatencyMS: out.latency.Milliseconds(), Error: out.err}, nil
}

func nudge(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// jittered spreads d by ± the configured fraction, so receivers that failed
// together are not all retried in the same instant.
func (s *Service) jittered(d time.Duration) time.Duration {
	if s.cfg.Jitter <= 0 {
		return d
	}
	f := 1 + s.cfg.Jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}
