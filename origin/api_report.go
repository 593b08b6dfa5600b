package origin

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/origin/store"
)

// getReport answers the cached report of a site, or 404: it never scans, so
// the edge can render a shareable result page (and its markdown twin) from
// it without spending anyone's allowance.
func (s *Server) getReport(ctx *fasthttp.RequestCtx) {
	url, aerr := s.scans.validateURL(string(ctx.QueryArgs().Peek("url")))
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	res, ok, err := s.scans.cached(c, url)
	switch {
	case err != nil:
		writeError(ctx, stateUnavailable(err))
		return
	case !ok:
		writeError(ctx, apiErr(404, CodeNotFound, "No recent report of this site is cached; scan it with GET /api/scan?url=… (this endpoint never scans)."))
		return
	}
	writeScanned(ctx, res)
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.SetBody(res.raw)
}

// showcaseMax is the most sites one showcase answer lists.
const showcaseMax = 50

// getShowcase answers the best-scoring sites of the scan history (the MCP
// tool get_showcase's data), for the scan page's showcase.
func (s *Server) getShowcase(ctx *fasthttp.RequestCtx) {
	limit := 20
	if v := ctx.QueryArgs().Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > showcaseMax {
			writeError(ctx, apiErr(400, CodeBadRequest, "limit must be a whole number from 1 to 50."))
			return
		}
		limit = n
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	top, total, err := s.store.History().Top(c, 0, limit)
	if err != nil {
		writeError(ctx, stateUnavailable(err))
		return
	}
	if top == nil {
		top = []store.HistoryEntry{}
	}
	b, _ := json.Marshal(map[string]any{"sites": top, "total": total, "curated": append([]string{}, s.cfg.Curated...)})
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "public, max-age=60")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.SetBody(b)
}
