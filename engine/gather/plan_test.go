package gather

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// The web plan's deepest chain of requirements, minus the Responses
// collector (which makes no request), bounds the scan's dependent rounds:
// the budget is 5.
func TestWebPlanDepth(t *testing.T) {
	if d := WebPlan.Depth(Responses.Name()) - 1; d > 5 || d < 2 {
		t.Errorf("web plan depth %d, want 2..5", d)
	}
	for _, g := range WebPlan.Gatherers() {
		if g.Doc == "" {
			t.Errorf("gatherer %q has no Doc", g.Name)
		}
	}
}

func TestNewPlanRejectsBadGraphs(t *testing.T) {
	a, b := NewKey[int]("a"), NewKey[int]("b")
	noop := func(*Ctx) (int, error) { return 0, nil }
	cases := map[string][]*Gatherer{
		"two gatherers produce":  {Define(a, "x", nil, noop), Define(a, "y", nil, noop)},
		"which no gatherer":      {Define(a, "x", []AnyKey{b}, noop)},
		"gatherers form a cycle": {Define(a, "x", []AnyKey{b}, noop), Define(b, "y", []AnyKey{a}, noop)},
	}
	for want, gs := range cases {
		if _, err := NewPlan(gs...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

// The driver derives rounds from Requires: a gatherer's requests come one
// round after those of the artifacts it needs, independent gatherers share a
// round, and a URL two gatherers ask for is fetched once.
func TestPlanRunDerivesRounds(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(r.URL.Path))
	}))
	defer srv.Close()
	first, second, same, next := NewKey[string]("first"), NewKey[string]("second"), NewKey[string]("same"), NewKey[string]("next")
	get := func(path string) func(*Ctx) (string, error) {
		return func(c *Ctx) (string, error) { return string(c.Fetch(fetch.Request{URL: c.URL(path)}).Body), nil }
	}
	p := MustPlan(
		Define(first, "GET /a", nil, get("/a")),
		Define(same, "GET /a again", nil, get("/a")),
		Define(second, "GET /b", nil, get("/b")),
		Define(next, "GET /c after first", []AnyKey{first}, func(c *Ctx) (string, error) {
			return Get(c, first) + string(c.Fetch(fetch.Request{URL: c.URL("/c")}).Body), nil
		}),
	)
	if d := p.Depth("next"); d != 2 {
		t.Errorf("depth %d, want 2", d)
	}
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy()}).NewSession()
	target, _ := url.Parse(srv.URL + "/")
	set, err := p.Run(context.Background(), sess, Site{Target: target, Origin: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got := Get(set, next); got != "/a/c" {
		t.Errorf("next = %q", got)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (/a once)", n)
	}
	rounds := map[string]int{}
	for _, r := range sess.Records() {
		rounds[strings.TrimPrefix(r.URL, srv.URL)] = r.Round
	}
	if rounds["/a"] != 1 || rounds["/b"] != 1 || rounds["/c"] != 2 || sess.Rounds() != 2 {
		t.Errorf("rounds %v (session %d), want /a and /b in 1, /c in 2", rounds, sess.Rounds())
	}
}

// A fatal gatherer error (the homepage) ends the run: the gatherers that
// need it never run, and Run returns the error, not a half-filled set.
func TestPlanRunFatalError(t *testing.T) {
	home, after := NewKey[int]("home"), NewKey[int]("after")
	boom := errors.New("unreachable")
	var ran atomic.Bool
	p := MustPlan(
		Define(home, "fails", nil, func(*Ctx) (int, error) { return 0, boom }),
		Define(after, "needs home", []AnyKey{home}, func(*Ctx) (int, error) { ran.Store(true); return 1, nil }),
	)
	sess := fetch.NewClient(fetch.Config{}).NewSession()
	target, _ := url.Parse("http://example.invalid/")
	set, err := p.Run(context.Background(), sess, Site{Target: target})
	if !errors.Is(err, boom) || set != nil || ran.Load() {
		t.Errorf("err %v, set %v, dependent ran %v", err, set, ran.Load())
	}
}

// A view lets through only what was declared, and says so when asked for more.
func TestViewRestrictsReads(t *testing.T) {
	a, b := NewKey[string]("a"), NewKey[string]("b")
	set := NewSet(Site{})
	Put(set, a, "x")
	Put(set, b, "y")
	var seen []string
	v := View(set, []AnyKey{a}, func(n string) { seen = append(seen, n) })
	if Get(v, a) != "x" || Has(v, b) {
		t.Error("view leaks or hides")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"b" read without being declared`) {
			t.Errorf("undeclared read: %v", r)
		}
		if strings.Join(seen, ",") != "a,b,b" {
			t.Errorf("seen %v", seen)
		}
	}()
	Get(v, b)
}
