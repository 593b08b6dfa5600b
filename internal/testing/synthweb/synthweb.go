// Package synthweb is the survey's synthetic web: any number of virtual sites
// served by one loopback listener, told apart by the Host header and reached
// through the scanner's resolver hook. What each site is follows from its
// number alone (Kind), and each kind's verdicts are pinned in advance
// (testdata/sites/<profile>/_expect.json for the checks, testdata/survey/
// synthweb.json for the rest), so the adoption report of a survey over the
// first n sites is known before the survey runs (Expected).
//
// The sites are the project's fixture sites (internal/testing/fixture) answering
// under many names, plus kinds no fixture site has: slow (every answer
// delayed), hung (answers nothing), redirecting to another site, and names
// that do not resolve.
package synthweb

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/internal/testing/fixture"
)

// Kind is what a synthetic site does.
type Kind struct {
	// Profile is the fixture site (testdata/sites/<Profile>) it serves, or
	// "" for a site that never answers (Hung, NoSuchHost).
	Profile string
	Delay   time.Duration // before every answer (slow sites)
	Hung    bool          // accepts connections, never answers
	// NoSuchHost: the name does not resolve.
	NoSuchHost bool
	// RedirectTo is, for a redirecting site, the number of the site every
	// path is permanently redirected to (same path): the scan follows it and
	// judges what that site serves.
	RedirectTo int
}

// Profiles are the fixture sites the synthetic web serves, by name, with
// their directories under testdata. The verdicts of the testdata/sites ones
// are pinned by their _expect.json (held by the engine's tests); the two
// signal sites add identity and commerce signals that pass and that are
// partial.
var Profiles = []struct{ Name, Dir string }{
	{"full", "sites/full"},
	{"partial", "sites/partial"},
	{"peer", "sites/peer"},
	{"empty", "sites/empty"},
	{"soft404", "sites/soft404"},
	{"signals-pass", "signals/pass"},
	{"signals-partial", "signals/partial"},
}

// profileOf draws a site's profile: a rotation of 16 so that the profiles
// have different shares (4, 3, 2, 3, 1, 2 and 1 in 16).
func profileOf(i int) string {
	switch r := i % 16; {
	case r < 4:
		return "full"
	case r < 7:
		return "partial"
	case r < 9:
		return "peer"
	case r < 12:
		return "empty"
	case r < 13:
		return "soft404"
	case r < 15:
		return "signals-pass"
	}
	return "signals-partial"
}

// KindOf is site i's kind (i ≥ 1). Every 100th site hangs, and the 50th of
// each hundred does not resolve; the 7th of every 25 redirects to the next
// site (which is never hung, unresolvable or redirecting); one in 20 answers
// slowly (100–300 ms per answer); the rest serve a profile as they are.
func KindOf(i int) Kind {
	switch {
	case i%100 == 0:
		return Kind{Hung: true}
	case i%100 == 50:
		return Kind{NoSuchHost: true}
	case i%25 == 7:
		return Kind{Profile: profileOf(i + 1), RedirectTo: i + 1}
	case i%20 == 3:
		return Kind{Profile: profileOf(i), Delay: time.Duration(100+(i/20)%3*100) * time.Millisecond}
	}
	return Kind{Profile: profileOf(i)}
}

// Host is site i's host name. Every tenth site is a subdomain of the site
// before it (www.s000009.test after s000009.test), so the two share a
// registrable domain: the survey must not scan them at the same time.
func Host(i int) string {
	if i%10 == 0 && i > 1 {
		return fmt.Sprintf("www.s%06d.test", i-1)
	}
	return fmt.Sprintf("s%06d.test", i)
}

// Number reads a site's number back from its host (0 when it is not one).
func Number(host string) int {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".test")
	www := strings.HasPrefix(h, "www.")
	h = strings.TrimPrefix(h, "www.")
	if !strings.HasPrefix(h, "s") {
		return 0
	}
	n, err := strconv.Atoi(h[1:])
	if err != nil || n < 1 {
		return 0
	}
	if www {
		n++
	}
	if Host(n) != strings.TrimSuffix(strings.ToLower(hostOnly(host)), ".") {
		return 0
	}
	return n
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// Web is a running synthetic web.
type Web struct {
	Addr     netip.AddrPort // where every name leads
	profiles map[string]*fixture.Site
	srv      *http.Server
	ln       net.Listener
	stop     chan struct{}
	requests atomic.Int64
}

// Start serves the synthetic web on a loopback port; testdata is the
// repository's testdata directory.
func Start(testdata string) (*Web, error) {
	w := &Web{profiles: map[string]*fixture.Site{}, stop: make(chan struct{})}
	for _, p := range Profiles {
		s, err := fixture.Start(filepath.Join(testdata, p.Dir), fixture.WithRequestOrigin())
		if err != nil {
			w.Close()
			return nil, err
		}
		w.profiles[p.Name] = s
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.Close()
		return nil, err
	}
	w.ln = ln
	w.Addr = netip.MustParseAddrPort(ln.Addr().String())
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	return w, nil
}

// Close stops the web, releasing hung handlers first.
func (w *Web) Close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	if w.srv != nil {
		w.srv.Close()
	}
	for _, s := range w.profiles {
		s.Close()
	}
}

// Requests is how many requests the web has answered (or held).
func (w *Web) Requests() int64 { return w.requests.Load() }

// URL is site i's homepage as a list names it: plain http on the web's port.
func (w *Web) URL(i int) string {
	return fmt.Sprintf("http://%s:%d/", Host(i), w.Addr.Port())
}

// Origin is site i's origin ("http://host:port").
func (w *Web) Origin(i int) string { return strings.TrimSuffix(w.URL(i), "/") }

// LookupNetIP is Resolver{w.Addr.Addr()}'s.
func (w *Web) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return Resolver{Addr: w.Addr.Addr()}.LookupNetIP(ctx, network, host)
}

// Resolver is the scanner's resolver hook for a synthetic web at Addr
// (another process may run the web): every site's name resolves to Addr,
// except the names of sites that do not resolve.
type Resolver struct{ Addr netip.Addr }

// LookupNetIP resolves host.
func (r Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n := Number(host)
	if n == 0 || KindOf(n).NoSuchHost {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{r.Addr}, nil
}

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	n := Number(r.Host)
	if n == 0 {
		http.Error(rw, "no such site", http.StatusMisdirectedRequest)
		return
	}
	k := KindOf(n)
	switch {
	case k.Hung:
		select {
		case <-r.Context().Done():
		case <-w.stop:
		}
		return
	case k.RedirectTo != 0:
		http.Redirect(rw, r, w.Origin(k.RedirectTo)+r.URL.RequestURI(), http.StatusMovedPermanently)
		return
	case k.Delay > 0:
		t := time.NewTimer(k.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-w.stop:
			return
		}
	}
	site := w.profiles[k.Profile]
	site.Config.Handler.ServeHTTP(rw, r)
	if w.requests.Load()%4096 == 0 {
		// The fixture logs every hit for tests that count them; nobody
		// counts here, and the log would grow with the web.
		for _, s := range w.profiles {
			s.ResetHits()
		}
	}
}

// Verdicts are one kind's pinned statuses: check id → status, signal id →
// status, or the error code (and the fetcher's cause) a scan of it ends
// with.
type Verdicts struct {
	Checks  map[string]string `json:"checks,omitempty"`
	Signals map[string]string `json:"signals,omitempty"`
	Error   string            `json:"error,omitempty"`
	Cause   string            `json:"cause,omitempty"`
}

// Pins are what testdata/survey/synthweb.json says of each kind beyond the
// profiles' _expect.json: the checks of the profiles that have none, the
// signals of every profile, the checks of a profile reached through a
// redirect from another site where they differ, and the error of a site
// that never answers.
type Pins struct {
	Checks     map[string]map[string]string `json:"checks"`     // profile without _expect.json → check id → status
	Signals    map[string]map[string]string `json:"signals"`    // profile → signal id → status
	Redirected map[string]map[string]string `json:"redirected"` // profile → check id → status, where it differs
	Hung       Verdicts                     `json:"hung"`       // error and cause
	NoSuchHost Verdicts                     `json:"noSuchHost"` // error and cause
}

// Expectations are every kind's verdicts, read from the pinned files.
type Expectations struct {
	checks map[string]map[string]string // profile → check id → status
	pins   Pins
}

// LoadExpectations reads each profile's _expect.json (where it has one)
// under testdata, and the pins of testdata/survey/synthweb.json.
func LoadExpectations(testdata string) (*Expectations, error) {
	pinsFile := filepath.Join(testdata, "survey", "synthweb.json")
	b, err := os.ReadFile(pinsFile)
	if err != nil {
		return nil, err
	}
	e := &Expectations{checks: map[string]map[string]string{}}
	if err := json.Unmarshal(b, &e.pins); err != nil {
		return nil, fmt.Errorf("%s: %w", pinsFile, err)
	}
	for _, p := range Profiles {
		m := e.pins.Checks[p.Name]
		if m == nil {
			b, err := os.ReadFile(filepath.Join(testdata, p.Dir, "_expect.json"))
			if err != nil {
				return nil, fmt.Errorf("profile %s has neither %s/_expect.json nor checks in %s", p.Name, p.Dir, pinsFile)
			}
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("%s/_expect.json: %w", p.Dir, err)
			}
		}
		// _expect.json also pins the read suite (R.…) and the detected
		// profile; the synthetic web's pins are the 48 web checks.
		for id := range m {
			if id == "profile" || strings.HasPrefix(id, "R.") {
				delete(m, id)
			}
		}
		if len(m) != 48 {
			return nil, fmt.Errorf("profile %s pins %d checks, want 48", p.Name, len(m))
		}
		if len(e.pins.Signals[p.Name]) == 0 {
			return nil, fmt.Errorf("%s pins no signals for profile %s", pinsFile, p.Name)
		}
		e.checks[p.Name] = m
	}
	return e, nil
}

// Of is what a scan of a site of kind k must report.
func (e *Expectations) Of(k Kind) Verdicts {
	switch {
	case k.Hung:
		return e.pins.Hung
	case k.NoSuchHost:
		return e.pins.NoSuchHost
	}
	v := Verdicts{Checks: map[string]string{}, Signals: e.pins.Signals[k.Profile]}
	for id, st := range e.checks[k.Profile] {
		v.Checks[id] = st
	}
	if k.RedirectTo != 0 {
		for id, st := range e.pins.Redirected[k.Profile] {
			v.Checks[id] = st
		}
	}
	return v
}
