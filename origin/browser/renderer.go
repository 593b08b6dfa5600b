package browser

import (
	"context"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
)

// Renderer is the pool as the engine's renderer: a scan given it reports
// what agents that do not run JavaScript miss on the homepage.
func (p *Pool) Renderer() engine.Renderer { return engineRenderer{p} }

type engineRenderer struct{ p *Pool }

// Render's errors are the pool's sentinels (with their safe detail), which
// the report shows as they are.
func (r engineRenderer) Render(ctx context.Context, url string) (*engine.RenderedPage, error) {
	rp, err := r.p.Render(ctx, url)
	if err != nil {
		return nil, err
	}
	out := &engine.RenderedPage{FinalURL: rp.FinalURL, HTML: rp.HTML, ConsoleErrors: make([]string, 0, len(rp.ConsoleErrors)), Tools: make([]report.WebMCPTool, 0, len(rp.Tools))}
	for _, m := range rp.ConsoleErrors {
		out.ConsoleErrors = append(out.ConsoleErrors, m.Kind+": "+m.Text)
	}
	for _, t := range rp.Tools {
		out.Tools = append(out.Tools, report.WebMCPTool{Name: t.Name, Description: t.Description, API: t.API})
	}
	return out, nil
}
