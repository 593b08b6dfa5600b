package monitor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/origin/store"
)

func ptr(s string) *string { return &s }

func newTestService(t *testing.T, cfg Config) *Service {
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(cfg, Deps{Store: st.Monitors(), ValidateURL: func(raw string) (string, error) {
		if strings.Contains(raw, " ") {
			return "", errors.New("not a URL")
		}
		return "https://" + strings.TrimPrefix(raw, "https://") + "/", nil
	}})
}

// The create rules, each refusal naming its field with its own code.
func TestCreateValidation(t *testing.T) {
	s := newTestService(t, Config{MaxPerTier: map[identity.Tier]int{identity.Anonymous: 1}})
	anon := identity.Caller{Tier: identity.Anonymous, Subject: "192.0.2.1"}
	ok := func(r CreateRequest) CreateRequest {
		if r.URL == nil {
			r.URL = ptr("example.com")
		}
		if r.CallbackURL == nil {
			r.CallbackURL = ptr("https://hooks.example.com/agentready")
		}
		return r
	}
	for _, c := range []struct {
		name string
		req  CreateRequest
		code apierr.Code
		says string
	}{
		{"no url", CreateRequest{CallbackURL: ptr("https://h.example/")}, apierr.MissingURL, "url"},
		{"bad url", ok(CreateRequest{URL: ptr("not a url")}), apierr.InvalidURL, "url"},
		{"no callback", CreateRequest{URL: ptr("example.com")}, apierr.InvalidCallbackURL, "callback_url"},
		{"ftp callback", ok(CreateRequest{CallbackURL: ptr("ftp://h.example/")}), apierr.InvalidCallbackURL, "https"},
		{"http callback", ok(CreateRequest{CallbackURL: ptr("http://h.example/")}), apierr.InvalidCallbackURL, "https"},
		{"relative callback", ok(CreateRequest{CallbackURL: ptr("/hook")}), apierr.InvalidCallbackURL, "callback_url"},
		{"private callback", ok(CreateRequest{CallbackURL: ptr("https://10.1.2.3/hook")}), apierr.InvalidCallbackURL, "private"},
		{"loopback callback", ok(CreateRequest{CallbackURL: ptr("https://127.0.0.1:8443/hook")}), apierr.InvalidCallbackURL, "private"},
		{"metadata callback", ok(CreateRequest{CallbackURL: ptr("https://169.254.169.254/latest")}), apierr.InvalidCallbackURL, "private"},
		{"mapped loopback callback", ok(CreateRequest{CallbackURL: ptr("https://[::ffff:127.0.0.1]/hook")}), apierr.InvalidCallbackURL, "private"},
		{"localhost callback", ok(CreateRequest{CallbackURL: ptr("https://localhost/hook")}), apierr.InvalidCallbackURL, "localhost"},
		{"cadence words only", ok(CreateRequest{Cadence: ptr("soon")}), apierr.InvalidCadence, "cadence"},
		{"cadence too short", ok(CreateRequest{Cadence: ptr("5m")}), apierr.CadenceTooShort, "15m"},
		{"cadence too long", ok(CreateRequest{Cadence: ptr("2000h")}), apierr.InvalidCadence, "maximum"},
		{"unknown event", ok(CreateRequest{Events: []string{"scan.started"}}), apierr.InvalidEvents, "events"},
		{"no events", ok(CreateRequest{Events: []string{}}), apierr.InvalidEvents, "events"},
	} {
		_, err := s.Create(context.Background(), anon, "https://agentready.example", c.req)
		var me *Error
		if !errors.As(err, &me) || me.Code != c.code || !strings.Contains(me.Message, c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
	}
	created, err := s.Create(context.Background(), anon, "https://agentready.example/", ok(CreateRequest{Cadence: ptr("hourly"), Events: []string{"score.changed", "score.changed"}}))
	if err != nil {
		t.Fatal(err)
	}
	m := created.Monitor
	if m.Interval != time.Hour || len(m.Events) != 1 || m.Owner != "" || !strings.HasPrefix(created.Secret, "whsec_") || len(m.ID) != len("mon_")+26 {
		t.Errorf("created %+v secret %q", m, created.Secret)
	}
	_, err = s.Create(context.Background(), anon, "https://agentready.example", ok(CreateRequest{}))
	var me *Error
	if !errors.As(err, &me) || me.Code != apierr.TooManyMonitors {
		t.Errorf("a second monitor over a maximum of 1: %v", err)
	}
	keyed := identity.Caller{Tier: identity.APIKey, Subject: "acme"}
	km, err := s.Create(context.Background(), keyed, "https://agentready.example", ok(CreateRequest{}))
	if err != nil || km.Monitor.Owner != keyed.Key() {
		t.Fatalf("an API key's monitor is bound to it: %+v %v", km.Monitor, err)
	}
	if _, err := s.Get(context.Background(), anon, km.Monitor.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another caller reads a bound monitor: %v, want not found", err)
	}
	if _, err := s.Get(context.Background(), keyed, km.Monitor.ID); err != nil {
		t.Errorf("its owner cannot read it: %v", err)
	}
	if _, err := s.Get(context.Background(), keyed, m.ID); err != nil {
		t.Errorf("an unbound monitor is readable by whoever holds its id: %v", err)
	}
}

// The guard applies at every attempt, whatever the stored URL says: a name
// that resolves to loopback is refused at dial time and nothing is sent.
func TestDeliveriesGoThroughTheGuard(t *testing.T) {
	var hits atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer recv.Close()
	s := newTestService(t, Config{Timeout: 2 * time.Second})
	port := recv.URL[strings.LastIndex(recv.URL, ":"):]
	m := store.Monitor{ID: "mon_x", CallbackURL: "http://localhost" + port + "/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	out := s.sender.send(context.Background(), m, store.Delivery{ID: "evt_x", Type: "scan.completed", Payload: []byte(`{}`)}, time.Now())
	if out.delivered() || out.code != 0 || !strings.Contains(out.err, "not a public address") && !strings.Contains(out.err, "private") && !strings.Contains(out.err, "loopback") {
		t.Errorf("a loopback receiver by name: %+v", out)
	}
	if strings.Contains(out.err, "127.0.0.1") {
		t.Errorf("the cause names the address: %q", out.err)
	}
	if hits.Load() != 0 {
		t.Errorf("the receiver was reached %d times", hits.Load())
	}
	// Redirects are not followed: a 3xx is a failed attempt, and its target is never asked.
	var redirected atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) }))
	defer target.Close()
	hop := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer hop.Close()
	s = newTestService(t, Config{AllowPrivate: true, Timeout: 2 * time.Second})
	m.CallbackURL = hop.URL
	out = s.sender.send(context.Background(), m, store.Delivery{ID: "evt_x", Type: "scan.completed", Payload: []byte(`{}`)}, time.Now())
	if out.delivered() || out.code != 307 || !strings.Contains(out.err, "redirects are not followed") || redirected.Load() != 0 {
		t.Errorf("a redirecting receiver: %+v (target reached %d times)", out, redirected.Load())
	}
}

func TestNextRun(t *testing.T) {
	due := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now  time.Time
		want time.Time
	}{
		{due.Add(time.Second), due.Add(time.Hour)},                   // on time
		{due.Add(90 * time.Minute), due.Add(time.Hour)},              // late by less than a cadence past the next slot: no slot skipped
		{due.Add(5*time.Hour + time.Minute), due.Add(6 * time.Hour)}, // down for hours: this run stands for the missed ones; the next slot after now, on the cadence's phase
	} {
		if got := nextRun(due, time.Hour, c.now); !got.Equal(c.want) {
			t.Errorf("now %s: next %s, want %s", c.now.Format(time.TimeOnly), got.Format(time.TimeOnly), c.want.Format(time.TimeOnly))
		}
	}
}
