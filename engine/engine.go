package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
	"github.com/agentready/agentready/engine/weburl"
)

// Options configure a Scanner. The zero value is the hosted default: private
// addresses refused, ports 80 and 443 only, the limits of CHECKS.md.
type Options struct {
	Fetch    fetch.Config  // per-request limits and address policy
	Deadline time.Duration // whole-scan deadline; default 20 s
	// DeepDeadline bounds a paid deep scan, which fetches more and
	// connects to what the site declares; default 60 s.
	DeepDeadline time.Duration
	Now          func() time.Time
	// Renderer, when set, renders the homepage in a browser beside the
	// scan and adds the report's rendered block (what agents that do not
	// run JavaScript miss). The checks still judge the server's HTML.
	Renderer Renderer
	// ReadPages is how many pages the read suite samples: 10 when 0, at
	// most MaxReadPages; -1 turns the read suite off.
	ReadPages int
}

// MaxReadPages bounds Options.ReadPages.
const MaxReadPages = 50

// Scanner runs scans; it is safe for concurrent use and shares one connection pool.
type Scanner struct {
	opts   Options
	client *fetch.Client
}

// New builds a Scanner.
func New(opts Options) *Scanner {
	if opts.Deadline <= 0 {
		opts.Deadline = 20 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DeepDeadline <= 0 {
		opts.DeepDeadline = 60 * time.Second
	}
	c := fetch.NewClient(opts.Fetch)
	opts.Fetch = c.Config()
	return &Scanner{opts: opts, client: c}
}

// Options returns the effective options.
func (s *Scanner) Options() Options { return s.opts }

// EventKind names a progress event.
type EventKind string

const (
	EventStarted       EventKind = "started"        // the target was normalised; gathering begins
	EventGathered      EventKind = "gathered"       // every fetch is done
	EventCheckStarted  EventKind = "check_started"  // Check holds id, name and level only
	EventCheckFinished EventKind = "check_finished" // Check holds the full result
	EventProbeFinished EventKind = "probe_finished" // a deep scan's probe: Probe holds it
	// EventSignalFinished follows the checks, once per identity or commerce
	// signal, in report order: Signal holds it.
	EventSignalFinished EventKind = "signal_finished"
	// EventReadCheckFinished follows the 48 checks, once per read check
	// (R.1…), in order: Check holds it.
	EventReadCheckFinished EventKind = "read_check_finished"
)

// Event is one progress notification. Handlers are called from one goroutine at a time.
type Event struct {
	Kind     EventKind
	URL      string
	Check    report.Check
	Probe    report.DeepProbe // EventProbeFinished
	Signal   report.Signal    // EventSignalFinished
	Requests int              // requests made so far (EventGathered)
}

// ErrUnreachable is wrapped by errors from scans whose homepage could not be fetched.
var ErrUnreachable = errors.New("site_unreachable")

// A failed scan is an *apierr.Error whose Code is apierr.InvalidURL,
// SiteUnreachable, ScanCanceled or Internal: every transport answers it as
// it answers any other refusal.

// unreachable is the failed scan of a site that did not answer. A refusal
// to visit a non-public address points at the README's paragraph on
// scanning your own machine, which says how to allow it.
func unreachable(msg string, err error) *apierr.Error {
	e := &apierr.Error{Code: apierr.SiteUnreachable, Message: msg, Err: fmt.Errorf("%w: %w", ErrUnreachable, err)}
	var fe *fetch.Error
	if errors.As(err, &fe) && (fe.Kind == fetch.KindBlocked || fe.Kind == fetch.KindNotPublic) {
		e.Docs = apierr.LocalScansDocs
	}
	return e
}

// Stats describe the network cost of a scan.
type Stats struct {
	Requests int
	Rounds   int
	Records  []fetch.Record
	Duration time.Duration
	// FinalURL is where the homepage was answered after redirects, which
	// may be another site ("" when it was not fetched).
	FinalURL string
	// ReadRequests is how many of Requests the read suite's page sample
	// made; the 48 checks made the rest.
	ReadRequests int
}

func (s *Stats) count() {
	s.Requests, s.ReadRequests = len(s.Records), 0
	for _, r := range s.Records {
		if r.ReadSuite {
			s.ReadRequests++
		}
	}
}

// Scan scans the site at rawURL. onEvent may be nil.
func (s *Scanner) Scan(ctx context.Context, rawURL string, onEvent func(Event)) (*report.Result, error) {
	r, _, err := s.ScanWithStats(ctx, rawURL, onEvent)
	return r, err
}

// ScanWithStats is Scan plus the request account (for tests and benchmarks).
func (s *Scanner) ScanWithStats(ctx context.Context, rawURL string, onEvent func(Event)) (*report.Result, *Stats, error) {
	return s.run(ctx, rawURL, onEvent, gather.WebPlan, s.opts.Deadline, nil)
}

// DeepScan is the paid deep scan: the web scan's report plus its deep
// block, under DeepDeadline. The deep gatherers use the same session as
// the web scan's (one address guard, one URL cache, the same caps).
func (s *Scanner) DeepScan(ctx context.Context, rawURL string, onEvent func(Event)) (*report.Result, *Stats, error) {
	return s.run(ctx, rawURL, onEvent, gather.DeepPlan(), s.opts.DeepDeadline, func(set *gather.Set, res *report.Result, emit func(Event)) {
		res.Deep = &report.Deep{Deadline: s.opts.DeepDeadline.String(), Probes: []report.DeepProbe{}}
		for _, p := range checks.Deep() {
			r := p.Judge(set)
			res.Deep.Probes = append(res.Deep.Probes, r)
			emit(Event{Kind: EventProbeFinished, URL: res.URL, Probe: r})
		}
	})
}

// Admits checks, without sending the site a request, that a scan of
// rawURL could begin: the URL is valid, its host resolves to addresses the
// scanner's address policy lets it visit, and one of them accepts a TCP
// connection (closed at once, before any byte is sent). The paid deep
// scan asks before it takes a payment, so a payment is not spent on a
// site that is not there. A refusal is the *apierr.Error a scan would fail
// with (InvalidURL, SiteUnreachable).
func (s *Scanner) Admits(ctx context.Context, rawURL string) error {
	target, err := weburl.Normalize(rawURL)
	if err != nil {
		return &apierr.Error{Code: apierr.InvalidURL, Message: err.Error(), Err: err}
	}
	port := "443"
	if target.Scheme == "http" {
		port = "80"
	}
	if p := target.Port(); p != "" {
		port = p
	}
	host := target.Hostname()
	// The scan's own limit for one request (5 s by default): a site that
	// drops packets does not hold the purchase for the whole deadline.
	timeout := s.opts.Fetch.RequestTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	policy := s.opts.Fetch.Policy
	dial := fetch.GuardedDial(policy.CheckAddrPort, s.opts.Fetch.Resolver, timeout)
	conn, err := dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		e := unreachable(fmt.Sprintf("%s could not be reached: %s", target, policy.Explain(err, host)), err)
		if errors.Is(err, fetch.ErrBlockedAddress) {
			e.Docs = apierr.LocalScansDocs
		}
		return e
	}
	conn.Close()
	return nil
}

func (s *Scanner) run(ctx context.Context, rawURL string, onEvent func(Event), plan *gather.Plan, deadline time.Duration,
	deep func(*gather.Set, *report.Result, func(Event))) (*report.Result, *Stats, error) {
	start := time.Now()
	target, err := weburl.Normalize(rawURL)
	if err != nil {
		return nil, nil, &apierr.Error{Code: apierr.InvalidURL, Message: err.Error(), Err: err}
	}
	var mu sync.Mutex
	emit := func(e Event) {
		if onEvent != nil {
			mu.Lock()
			defer mu.Unlock()
			onEvent(e)
		}
	}
	emit(Event{Kind: EventStarted, URL: target.String()})
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	sess := s.client.NewSession()
	// The bodies stay in memory until the checks have run; then they no
	// longer count against the budget the scans share.
	defer sess.Close()
	site := gather.Site{Target: target, Origin: target.Scheme + "://" + target.Host, ScannerOrigin: sess.Origin(), ReadPages: min(s.opts.ReadPages, MaxReadPages)}
	var rendered func(*gather.Set) *report.Rendered
	if s.opts.Renderer != nil {
		rendered = s.renderHome(ctx, target.String())
	}
	set, err := plan.Run(ctx, sess, site)
	stats := &Stats{Records: sess.Records(), Rounds: sess.Rounds()}
	stats.count()
	if err != nil {
		stats.Duration = time.Since(start)
		var ue *gather.UnreachableError
		switch {
		case errors.As(err, &ue) && ctx.Err() == context.DeadlineExceeded:
			return nil, stats, unreachable(fmt.Sprintf("%s did not answer within the %s scan deadline", target, deadline), err)
		case errors.As(err, &ue) && errors.Is(ctx.Err(), context.Canceled):
			return nil, stats, &apierr.Error{Code: apierr.ScanCanceled, Message: "the scan was canceled", Err: ctx.Err()}
		case errors.As(err, &ue):
			return nil, stats, unreachable(fmt.Sprintf("%s could not be reached: %s", target, ue.Reason), err)
		}
		return nil, stats, &apierr.Error{Code: apierr.Internal, Message: err.Error(), Err: err}
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, stats, &apierr.Error{Code: apierr.ScanCanceled, Message: "the scan was canceled", Err: ctx.Err()}
	}
	if home := gather.Get(set, gather.Home); home != nil && home.Resp != nil {
		stats.FinalURL = home.Resp.FinalURL
	}
	emit(Event{Kind: EventGathered, URL: target.String(), Requests: stats.Requests})
	res := Judge(set, s.opts.Now(), emit)
	if res.Read != nil {
		res.Read.Requests = stats.ReadRequests
	}
	if rendered != nil {
		res.Rendered = rendered(set)
	}
	if deep != nil {
		deep(set, res, emit)
		stats.Records, stats.Rounds = sess.Records(), sess.Rounds()
		stats.count()
		res.Deep.Requests, res.Deep.DurationMS = stats.Requests, time.Since(start).Milliseconds()
	}
	stats.Duration = time.Since(start)
	return res, stats, nil
}

// Judge runs the web checks over gathered artifacts and scores them, then
// runs the read suite over the page sample, judges the identity and
// commerce signals, and finds the cross-check interactions and the
// profile: none of which changes the checks or their score.
func Judge(set *gather.Set, now time.Time, emit func(Event)) *report.Result {
	web := checks.Web()
	res := &report.Result{URL: set.Site.Target.String(), Timestamp: now.UTC().Truncate(time.Second), Checks: make([]report.Check, 0, len(web))}
	for _, c := range web {
		if emit != nil {
			emit(Event{Kind: EventCheckStarted, URL: res.URL, Check: report.Check{ID: c.ID, Name: c.Name, Level: c.Level, Category: c.Category}})
		}
		r := c.Judge(set)
		res.Checks = append(res.Checks, r)
		if emit != nil {
			emit(Event{Kind: EventCheckFinished, URL: res.URL, Check: r})
		}
	}
	score.Apply(res)
	res.Read = judgeRead(set, res.URL, emit)
	// Signals are judged after the score so nothing they say can reach it.
	res.Signals = make([]report.Signal, 0, len(checks.Signals()))
	for _, sg := range checks.Signals() {
		r := sg.Judge(set, now)
		res.Signals = append(res.Signals, r)
		if emit != nil {
			emit(Event{Kind: EventSignalFinished, URL: res.URL, Signal: r})
		}
	}
	res.Interactions = checks.Interactions(set, res)
	// The profile reads the signals (a shop's commerce documents), so it
	// comes last; like them it never changes checks or score.
	res.Profile = profile.Detect(set, res)
	_ = profile.Apply(res, "", nil) // fails only for an unknown requested profile; none is requested here
	return res
}

// judgeRead runs the read suite over the page sample (nil when the plan
// gathered none, as a repository scan's does not).
func judgeRead(set *gather.Set, url string, emit func(Event)) *report.Read {
	out := checks.JudgeRead(set, func(r report.Check) {
		if emit != nil {
			emit(Event{Kind: EventReadCheckFinished, URL: url, Check: r})
		}
	})
	if out != nil {
		out.Score = score.Read(out.Checks, out.Counts)
	}
	return out
}

// NormalizeURL exposes the URL rules, for transports that validate input early.
func NormalizeURL(raw string) (*url.URL, error) { return weburl.Normalize(raw) }

// Document is one fetched document.
type Document struct {
	URL         string // where it was found, after redirects
	Status      int
	ContentType string
	Body        []byte
	Cut         string // why Body is not the whole document ("" when it is): do not judge it
}

// FetchDocument fetches one URL with the scanner's safety rules (address
// policy, caps, timeouts), for tools that validate a single document.
func (s *Scanner) FetchDocument(ctx context.Context, rawURL, accept string) (*Document, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &apierr.Error{Code: apierr.InvalidURL, Message: fmt.Sprintf("%q is not an http(s) URL", rawURL)}
	}
	sess := s.client.NewSession()
	defer sess.Close()
	r := sess.Do(ctx, fetch.Request{URL: u.String(), Accept: accept})
	if r.Err != nil {
		return nil, unreachable(fmt.Sprintf("%s could not be fetched: %v", u, r.Err), r.Err)
	}
	return &Document{URL: r.FinalURL, Status: r.Status, ContentType: r.ContentType(), Body: r.Body, Cut: r.Cut}, nil
}
