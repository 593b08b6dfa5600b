package origin

import (
	"context"

	"github.com/valyala/fasthttp"
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
