package gather

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/agentready/agentready/engine/fetch"
)

// Key names an artifact of type T. A key is declared once, beside the
// gatherer that produces it; checks and other gatherers name it in their
// Requires and read it with Get, so the type travels with the name.
type Key[T any] struct{ name string }

// NewKey declares an artifact.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name is the artifact's name (also its gatherer's).
func (k Key[T]) Name() string { return k.name }

// AnyKey is a key of any artifact type, for Requires lists.
type AnyKey interface{ Name() string }

// Gatherer produces one artifact, after the artifacts it requires. It is a
// value (after golang.org/x/tools/go/analysis's Analyzer): the plan derives
// the order and the rounds of requests from Requires, so adding a probe is
// one Define in one file.
type Gatherer struct {
	Name     string   // the produced artifact's name
	Doc      string   // what it fetches and why, for contributors
	Requires []AnyKey // artifacts Run reads with Get
	run      func(*Ctx) (any, error)
}

// Define builds the gatherer of k. run's error is fatal to the scan (only the
// homepage gatherer returns one: a site without a homepage has no report).
func Define[T any](k Key[T], doc string, requires []AnyKey, run func(*Ctx) (T, error)) *Gatherer {
	return &Gatherer{Name: k.name, Doc: doc, Requires: requires, run: func(c *Ctx) (any, error) { return run(c) }}
}

// Plan is a validated set of gatherers in dependency order.
type Plan struct {
	gatherers []*Gatherer
	index     map[string]int
}

// NewPlan checks that names are unique, every requirement has a gatherer,
// and there is no cycle; it orders gatherers so requirements come first.
func NewPlan(gs ...*Gatherer) (*Plan, error) {
	p := &Plan{index: map[string]int{}}
	byName := map[string]*Gatherer{}
	for _, g := range gs {
		if _, dup := byName[g.Name]; dup {
			return nil, fmt.Errorf("two gatherers produce %q", g.Name)
		}
		byName[g.Name] = g
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(g *Gatherer, path []string) error
	visit = func(g *Gatherer, path []string) error {
		switch state[g.Name] {
		case 1:
			return fmt.Errorf("gatherers form a cycle: %v", append(path, g.Name))
		case 2:
			return nil
		}
		state[g.Name] = 1
		for _, r := range g.Requires {
			dep, ok := byName[r.Name()]
			if !ok {
				return fmt.Errorf("gatherer %q requires %q, which no gatherer produces", g.Name, r.Name())
			}
			if err := visit(dep, append(path, g.Name)); err != nil {
				return err
			}
		}
		state[g.Name] = 2
		p.index[g.Name] = len(p.gatherers)
		p.gatherers = append(p.gatherers, g)
		return nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := visit(byName[n], nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// MustPlan is NewPlan for package-level plans; a bad graph is a programming error.
func MustPlan(gs ...*Gatherer) *Plan {
	p, err := NewPlan(gs...)
	if err != nil {
		panic(err)
	}
	return p
}

// Gatherers lists the plan's gatherers in dependency order.
func (p *Plan) Gatherers() []*Gatherer { return slices.Clone(p.gatherers) }

// Depth is the longest chain of requirements ending at name (1 for a
// gatherer that requires nothing): an upper bound on the rounds of requests
// its artifact can cost.
func (p *Plan) Depth(name string) int {
	i, ok := p.index[name]
	if !ok {
		return 0
	}
	d := 1
	for _, r := range p.gatherers[i].Requires {
		d = max(d, 1+p.Depth(r.Name()))
	}
	return d
}

// Source is what artifacts can be read from: a finished Set, or the view a
// gatherer or a check gets of it.
type Source interface {
	value(name string) (any, bool)
	site() Site
}

// SiteOf is the site every source knows without a request.
func SiteOf(src Source) Site { return src.site() }

// Get reads artifact k from src. It panics when k was not produced or not
// declared by the reader: reading an undeclared artifact is a bug a test
// must catch, not a value to guess.
func Get[T any](src Source, k Key[T]) T {
	v, ok := src.value(k.name)
	if !ok {
		panic(fmt.Sprintf("artifact %q read without being declared in Requires (or never produced)", k.name))
	}
	if v == nil {
		var zero T
		return zero
	}
	return v.(T)
}

// Has reports whether k was produced (a gatherer whose requirement failed
// never ran and leaves it absent). It takes any key so a driver can test a
// Requires list.
func Has(src Source, k AnyKey) bool {
	_, ok := src.value(k.Name())
	return ok
}

// Set holds the artifacts of one scan.
type Set struct {
	Site  Site
	mu    sync.Mutex
	vals  map[string]any
	round map[string]int // the last request round behind each artifact
}

// NewSet is an empty set for artifacts known without the plan: a scan whose
// evidence comes from elsewhere (the repository walk) fills it with Put and
// judges it like a web scan's.
func NewSet(site Site) *Set {
	return &Set{Site: site, vals: map[string]any{}, round: map[string]int{}}
}

// Put stores artifact k in s.
func Put[T any](s *Set, k Key[T], v T) { s.put(k.name, v, 0) }

func (s *Set) value(name string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vals[name]
	return v, ok
}

func (s *Set) site() Site { return s.Site }

func (s *Set) put(name string, v any, round int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vals[name], s.round[name] = v, round
}

// View is src restricted to the declared keys; anything else reads as
// undeclared. Reads are recorded when seen is not nil (tests use it to prove
// that a check's Requires is exact).
func View(src *Set, declared []AnyKey, seen func(name string)) Source {
	allowed := make(map[string]bool, len(declared))
	for _, k := range declared {
		allowed[k.Name()] = true
	}
	return view{src, allowed, seen}
}

type view struct {
	set     *Set
	allowed map[string]bool
	seen    func(string)
}

func (v view) site() Site { return v.set.Site }

func (v view) value(name string) (any, bool) {
	if v.seen != nil {
		v.seen(name)
	}
	if !v.allowed[name] {
		return nil, false
	}
	return v.set.value(name)
}

// Ctx is what a gatherer's run sees: its declared inputs, the site, and the
// scan's fetch session.
type Ctx struct {
	context.Context
	Site Site
	in   Source
	sess *fetch.Session
	base int // the last round behind the required artifacts
	mu   sync.Mutex
	last int // the last round this gatherer requested
}

func (c *Ctx) value(name string) (any, bool) { return c.in.value(name) }
func (c *Ctx) site() Site                    { return c.Site }

// URL is path on the site's origin.
func (c *Ctx) URL(path string) string { return c.Site.Origin + path }

// Fetch makes one request. Its round defaults to the one after every
// required artifact's requests; a request that needs an earlier response of
// the same gatherer says so with Round: After(resp).
func (c *Ctx) Fetch(req fetch.Request) *fetch.Response {
	if req.Round == 0 {
		req.Round = c.base + 1
	}
	r := c.sess.Do(c.Context, req)
	c.mu.Lock()
	c.last = max(c.last, r.Round)
	c.mu.Unlock()
	return r
}

// FetchAll makes requests concurrently and returns the answers in order.
func (c *Ctx) FetchAll(reqs []fetch.Request) []*fetch.Response {
	c.sess.Reserve(reqs)
	out := make([]*fetch.Response, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.Fetch(r)
		}()
	}
	wg.Wait()
	return out
}

// FirstFound fetches reqs concurrently and returns the first, in list order,
// that ok approves (nil if none), plus every answer.
func (c *Ctx) FirstFound(reqs []fetch.Request, ok func(*fetch.Response) bool) (*fetch.Response, []*fetch.Response) {
	all := c.FetchAll(reqs)
	for _, r := range all {
		if ok(r) {
			return r, all
		}
	}
	return nil, all
}

// After is the round of a request that needs the given responses.
func After(rs ...*fetch.Response) int {
	m := 0
	for _, r := range rs {
		if r != nil && r.Round > m {
			m = r.Round
		}
	}
	return m + 1
}

// ErrSkipped marks an artifact whose gatherer did not run because the scan
// ended first; checks that need it say so instead of judging nothing.
var ErrSkipped = errors.New("not gathered before the scan ended")

// Run executes the plan: every gatherer starts as soon as its requirements
// are produced, so independent work runs concurrently and a URL asked for by
// two gatherers is fetched once (the session deduplicates). A fatal error
// (the homepage) cancels the rest and is returned once they have stopped.
func (p *Plan) Run(ctx context.Context, sess *fetch.Session, site Site) (*Set, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	set := NewSet(site)
	done := make([]chan struct{}, len(p.gatherers))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var (
		fatalOnce sync.Once
		fatal     error
		wg        sync.WaitGroup
	)
	for i, g := range p.gatherers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			base := 0
			for _, r := range g.Requires {
				j := p.index[r.Name()]
				<-done[j]
				set.mu.Lock()
				_, ok := set.vals[r.Name()]
				base = max(base, set.round[r.Name()])
				set.mu.Unlock()
				if !ok {
					return // a requirement failed: this artifact is absent too
				}
			}
			c := &Ctx{Context: ctx, Site: site, in: View(set, g.Requires, nil), sess: sess, base: base}
			v, err := g.run(c)
			if err != nil {
				fatalOnce.Do(func() { fatal = err; cancel() })
				return
			}
			set.put(g.Name, v, max(base, c.last))
		}()
	}
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	return set, nil
}
