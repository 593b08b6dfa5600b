package origin

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/scanreq"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
)

// getReport answers a site's report, or 404: it never scans, so the edge
// can render a shareable result page (and its markdown twin) from it
// without spending anyone's allowance. Without at it is the cached report,
// else the site's latest kept one (keptReports, Config.ReportKeep); with
// at (unix seconds) the kept report of the scan in that second: a
// permanent link. The report comes with the site's history up to it and
// its plan (reportExtra). With profile= it is judged as that kind of site
// (judgedAs), whichever report it is.
func (s *Server) getReport(ctx *fasthttp.RequestCtx) {
	url, ok := s.siteQuery(ctx)
	if !ok {
		return
	}
	at, ok := reportAt(ctx)
	if !ok {
		return
	}
	as, ok := profileQuery(ctx)
	if !ok {
		return
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	var res *scanned
	var err error
	if at.IsZero() {
		res, ok, err = s.scans.cached(c, url)
		if err == nil && !ok {
			res, ok, err = s.scans.kept().get(c, url, time.Time{})
		}
	} else {
		res, ok, err = s.scans.kept().get(c, url, at)
	}
	switch {
	case err != nil:
		writeError(ctx, stateUnavailable(err))
		return
	case !ok && !at.IsZero():
		writeError(ctx, apiErr(404, CodeNotFound, "The report of that scan of this site is no longer kept (reports are kept "+apierr.Duration(s.cfg.ReportKeep)+"), or there was no scan of it in that second; the site's latest report is at /api/report?url=… without at."))
		return
	case !ok:
		writeError(ctx, apiErr(404, CodeNotFound, "No recent report of this site is kept; scan it with GET /api/scan?url=… (this endpoint never scans)."))
		return
	}
	body, judged, err := judgedAs(res, as)
	var extra []byte
	if err == nil {
		extra, err = s.scans.reportExtra(c, url, res, judged)
	}
	if err != nil || len(body) < 2 || body[len(body)-1] != '}' {
		writeError(ctx, apiErr(500, CodeInternal, "The stored report could not be read (a bug in the service); scan the site again with GET /api/scan?url=…&fresh=1."))
		return
	}
	writeScanned(ctx, res)
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.SetBody(body[:len(body)-1]) // the report's closing brace comes with extra
	ctx.Write(extra)
}

// reportAt reads /api/report's optional at: the unix second of one scan,
// digits only (at most 12). The zero time when it is absent; on a bad one
// it answers 400 and ok is false. The message never repeats the value.
func reportAt(ctx *fasthttp.RequestCtx) (at time.Time, ok bool) {
	args := ctx.QueryArgs()
	if !args.Has("at") {
		return time.Time{}, true
	}
	if n, valid := scanreq.ReportAt(string(args.Peek("at"))); valid {
		return time.Unix(n, 0).UTC(), true
	}
	writeError(ctx, apiErr(400, CodeBadRequest, "at must be the time of one scan in whole seconds since 1970 (unix time, 1 to 12 digits), as the report's permanent link gives it; leave it out for the site's latest report."))
	return time.Time{}, false
}

// historyPoint is one scan of a site in /api/report's history.
type historyPoint struct {
	Timestamp time.Time `json:"timestamp"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
}

// reportExtra is what /api/report adds to a cached report, as the members
// that close its JSON object: `,"history":[…],"plan":{…}}` (makeExtra).
// Both follow from the report (the series up to it does not change after
// it), so they are made once per report and kept while it may be served:
// a scan makes them as it ends, and a report read from the cache is
// decoded only by its first reader here.
func (s *scanner) reportExtra(ctx context.Context, url string, sc *scanned, judged *report.Result) ([]byte, error) {
	if !sc.kept && judged == nil {
		if e, ok := s.extras.get(url, time.Now()); ok && e.at.Equal(sc.scannedAt) {
			return e.raw, nil
		}
	}
	// A report judged as a requested profile has that profile's plan (what
	// does not apply comes last), so its extra is made for it, not kept.
	r := judged
	if r == nil {
		var err error
		if r, err = sc.result(); err != nil {
			return nil, err
		}
	}
	series, err := s.history.Series(ctx, r.URL, false)
	extra := makeExtra(series, r)
	// A kept report (of any scan in ReportKeep) is made each time: the
	// extras hold the cached report of each site, which it must not evict.
	if err == nil && !sc.kept && judged == nil { // else history is this report alone: not kept, the next read tries again
		s.keepExtra(url, sc.scannedAt, extra)
	}
	return extra, nil
}

func (s *scanner) keepExtra(url string, scannedAt time.Time, extra []byte) {
	s.extras.put(url, hotEntry{raw: extra, at: scannedAt, expires: scannedAt.Add(s.cfg.CacheTTL)})
}

// makeExtra makes r's history and plan. history is series (r's site's)
// up to r, oldest first, ending with r, at most store.SeriesMax; plan is
// engine/advice's plan for r, exactly what `agentready scan --recommend
// --json` and the MCP tool get_recommendations give for it.
func makeExtra(series []store.HistoryEntry, r *report.Result) []byte {
	points := make([]historyPoint, 0, len(series)+1)
	for _, e := range series {
		if !e.ScannedAt.After(r.Timestamp) { // a later scan another origin recorded is not r's past
			points = append(points, historyPoint{Timestamp: e.ScannedAt, Score: e.Score, Grade: e.Grade, Level: e.Level})
		}
	}
	// The newest of the same second is r (timestamps are whole seconds;
	// the series has r unless its record failed, or is not made yet).
	if n := len(points); n > 0 && points[n-1].Timestamp.Equal(r.Timestamp) {
		points = points[:n-1]
	}
	points = append(points, historyPoint{Timestamp: r.Timestamp, Score: r.Score.Value, Grade: r.Score.Grade, Level: r.CurrentLevel})
	if len(points) > store.SeriesMax {
		points = points[len(points)-store.SeriesMax:]
	}
	hist, _ := json.Marshal(points)        // times, ints and strings: cannot fail
	plan, _ := json.Marshal(advice.For(r)) // likewise
	extra := make([]byte, 0, len(hist)+len(plan)+len(`,"history":,"plan":}`))
	extra = append(append(append(extra, `,"history":`...), hist...), `,"plan":`...)
	return append(append(extra, plan...), '}')
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

// Latest is a site's most recent stored outcome: what GET /api/latest
// answers, and what a badge shows.
type Latest struct {
	URL       string    `json:"url"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
	LevelName string    `json:"levelName"`
	ScannedAt time.Time `json:"scannedAt"`
}

// getLatest is GET /api/latest?url=: the site's most recent outcome from
// its history (kept 30 scans), long after the scan cache forgot the report.
// It never scans and spends nothing: the badge reads it before it would
// scan, so a badge shows a site's score without a free scan.
func (s *Server) getLatest(ctx *fasthttp.RequestCtx) {
	url, ok := s.siteQuery(ctx)
	if !ok {
		return
	}
	c, cancel := context.WithTimeout(s.base, screenshotStoreDeadline)
	defer cancel()
	series, err := s.store.History().Series(c, url, false)
	switch {
	case err != nil:
		writeError(ctx, stateUnavailable(err))
		return
	case len(series) == 0:
		writeError(ctx, apiErr(404, CodeNotFound, "This site has no stored scan; scan it with GET /api/scan?url=… (this endpoint never scans)."))
		return
	}
	e := series[len(series)-1]
	b, _ := json.Marshal(Latest{URL: e.URL, Score: e.Score, Grade: e.Grade, Level: e.Level, LevelName: e.LevelName, ScannedAt: e.ScannedAt.UTC()})
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetBody(b)
}
