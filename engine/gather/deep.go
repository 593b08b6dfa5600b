package gather

import "sync"

// The deep scan's gatherers: each deep_*.go file adds its own with
// deepGatherer, so a new probe is written in one file. They run after (and
// beside) the web scan's gatherers in one plan, on the same session: the
// same address guard, caps and URL cache.
var (
	deepMu        sync.Mutex
	deepGatherers []*Gatherer
	deepPlan      *Plan
)

func deepGatherer(g *Gatherer) *Gatherer {
	deepMu.Lock()
	defer deepMu.Unlock()
	deepGatherers = append(deepGatherers, g)
	return g
}

// DeepPlan is the web scan's plan plus every deep gatherer.
func DeepPlan() *Plan {
	deepMu.Lock()
	defer deepMu.Unlock()
	if deepPlan == nil {
		deepPlan = MustPlan(append(WebPlan.Gatherers(), deepGatherers...)...)
	}
	return deepPlan
}
