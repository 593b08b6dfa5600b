package checks

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// DeepProbe judges one thing the deep scan tried: a pure function over the
// artifacts its gatherers left, like a check, but unscored. Each deep_*.go
// file registers its own with deepProbe.
type DeepProbe struct {
	ID       string
	Name     string
	Doc      string // what it tries, for docs/checks.md
	Requires []gather.AnyKey
	Run      func(gather.Source) report.DeepProbe
}

var (
	deepMu     sync.Mutex
	deepProbes []*DeepProbe
)

func deepProbe(p *DeepProbe) *DeepProbe {
	deepMu.Lock()
	defer deepMu.Unlock()
	deepProbes = append(deepProbes, p)
	return p
}

// Deep returns every deep probe in ID order.
func Deep() []*DeepProbe {
	deepMu.Lock()
	defer deepMu.Unlock()
	out := slices.Clone(deepProbes)
	slices.SortFunc(out, func(a, b *DeepProbe) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Judge runs the probe over a deep scan's artifacts.
func (p *DeepProbe) Judge(set *gather.Set) (res report.DeepProbe) {
	for _, k := range p.Requires {
		if !gather.Has(set, k) {
			return report.DeepProbe{ID: p.ID, Name: p.Name, Status: report.Fail,
				Message: fmt.Sprintf("Not tried: its input %q was not gathered before the deep scan's deadline.", k.Name())}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res = report.DeepProbe{ID: p.ID, Name: p.Name, Status: report.Fail, Message: fmt.Sprintf("The probe failed (internal error: %v); please report it.", r)}
		}
	}()
	res = p.Run(gather.View(set, p.Requires, nil))
	res.ID, res.Name = p.ID, p.Name
	return res
}
