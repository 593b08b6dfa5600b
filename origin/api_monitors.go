package origin

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/origin/store"
)

// monitorRoute routes /api/monitors and everything under it.
func (s *Server) monitorRoute(path string) (route, bool) {
	type hs = map[string]func(*fasthttp.RequestCtx)
	if path == "/api/monitors" {
		return route{"/api/monitors", hs{"GET": s.listMonitors, "POST": s.createMonitor}}, true
	}
	rest, ok := strings.CutPrefix(path, "/api/monitors/")
	if !ok || rest == "" {
		return route{}, false
	}
	parts := strings.Split(rest, "/")
	id := parts[0]
	with := func(h func(*fasthttp.RequestCtx, string, []string)) func(*fasthttp.RequestCtx) {
		return func(ctx *fasthttp.RequestCtx) { h(ctx, id, parts[1:]) }
	}
	switch {
	case len(parts) == 1:
		return route{"/api/monitors/{id}", hs{"GET": with(s.getMonitor), "DELETE": with(s.deleteMonitor)}}, true
	case len(parts) == 2 && parts[1] == "test":
		return route{"/api/monitors/{id}/test", hs{"POST": with(s.testMonitor)}}, true
	case len(parts) == 2 && parts[1] == "deliveries":
		return route{"/api/monitors/{id}/deliveries", hs{"GET": with(s.listDeliveries)}}, true
	case len(parts) == 4 && parts[1] == "deliveries" && parts[3] == "redeliver":
		return route{"/api/monitors/{id}/deliveries/{delivery_id}/redeliver", hs{"POST": with(s.redeliver)}}, true
	case len(parts) == 3 && parts[1] == "reports":
		return route{"/api/monitors/{id}/reports/{report_id}", hs{"GET": with(s.monitorReport)}}, true
	}
	return route{}, false
}

// monitorView is a monitor as the API shows it: never its secret.
type monitorView struct {
	ID                  string                `json:"id"`
	URL                 string                `json:"url"`
	CallbackURL         string                `json:"callback_url"`
	Cadence             string                `json:"cadence"`
	IntervalSeconds     int64                 `json:"interval_seconds"`
	Events              []string              `json:"events"`
	Status              string                `json:"status"` // active, disabled
	DisabledReason      string                `json:"disabled_reason,omitempty"`
	DisabledAt          *time.Time            `json:"disabled_at,omitempty"`
	BoundToCaller       bool                  `json:"bound_to_caller"`
	CreatedAt           time.Time             `json:"created_at"`
	NextRun             *time.Time            `json:"next_run"` // null while a run is in progress, and once disabled
	Running             bool                  `json:"running"`
	LastRun             *time.Time            `json:"last_run"`
	Runs                int64                 `json:"runs"`
	LastScore           *int                  `json:"last_score"`
	LastGrade           string                `json:"last_grade,omitempty"`
	LastLevel           *int                  `json:"last_level"`
	LastLevelName       string                `json:"last_level_name,omitempty"`
	LastReportURL       string                `json:"last_report_url,omitempty"`
	LastError           string                `json:"last_error,omitempty"`
	LastDelivery        *store.AttemptSummary `json:"last_delivery"`
	ConsecutiveFailures int                   `json:"consecutive_failures"`
	Secret              string                `json:"secret,omitempty"` // only in the answer to POST /api/monitors
	Links               map[string]string     `json:"links"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func viewMonitor(m store.Monitor) monitorView {
	v := monitorView{ID: m.ID, URL: m.URL, CallbackURL: m.CallbackURL, Cadence: m.Cadence, IntervalSeconds: int64(m.Interval / time.Second),
		Events: m.Events, Status: "active", BoundToCaller: m.Owner != "", CreatedAt: m.Created, NextRun: timePtr(m.NextRun), Running: m.Running,
		LastRun: timePtr(m.Run.LastRun), Runs: m.Run.Runs, LastError: m.Run.Error, LastDelivery: m.Delivery.Last,
		ConsecutiveFailures: m.Delivery.ConsecutiveFailures}
	if m.Delivery.Disabled {
		v.Status, v.DisabledReason, v.DisabledAt = "disabled", m.Delivery.DisabledReason, timePtr(m.Delivery.DisabledAt)
	}
	if m.Run.Baseline {
		score, level := m.Run.Score, m.Run.Level
		v.LastScore, v.LastLevel, v.LastGrade, v.LastLevelName = &score, &level, m.Run.Grade, m.Run.LevelName
		v.LastReportURL = monitor.ReportURL(m, m.Run.ReportID)
	}
	self := m.BaseURL + "/api/monitors/" + m.ID
	v.Links = map[string]string{"self": self, "test": self + "/test", "deliveries": self + "/deliveries"}
	return v
}

// monitorError answers a monitor operation's failure.
func monitorError(ctx *fasthttp.RequestCtx, err error) {
	var me *apierr.Error
	switch {
	case errors.As(err, &me):
		writeError(ctx, me)
	case errors.Is(err, store.ErrNotFound):
		writeError(ctx, apiErr(404, CodeNotFound, "No such monitor (or delivery, or report) for this caller: check the id; a monitor created with an API key or token is visible only with it, and reports are kept until after the last retry of their events (29 hours by default)."))
	case errors.Is(err, store.ErrUnavailable):
		writeError(ctx, stateUnavailable(err))
	default:
		writeError(ctx, apiErr(500, CodeInternal, "The monitor store failed unexpectedly; retry, and report it if it persists."))
	}
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(ctx, apiErr(500, CodeInternal, "The answer could not be encoded; retry."))
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(b)
}

func (s *Server) createMonitor(ctx *fasthttp.RequestCtx) {
	if mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); mt != "application/json" {
		writeError(ctx, apiErr(415, CodeUnsupportedMedia, "Send the body as JSON with Content-Type: application/json, e.g. {\"url\": \"example.com\", \"callback_url\": \"https://hooks.example.com/agentready\", \"cadence\": \"daily\"}."))
		return
	}
	body := ctx.PostBody()
	var req monitor.CreateRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(ctx, apiErr(400, CodeInvalidJSON, "The body is not valid JSON ("+jsonProblem(err)+"); send {\"url\": \"example.com\", \"callback_url\": \"https://hooks.example.com/agentready\", \"cadence\": \"daily\"}."))
		return
	}
	s.idempotent(ctx, body, func() {
		c := s.caller(ctx)
		created, err := s.monitors.Create(s.base, c, s.baseURL(ctx), req)
		s.audit(c, "monitor.create", created.Monitor.URL, outcomeOf(err))
		if err != nil {
			monitorError(ctx, err)
			return
		}
		v := viewMonitor(created.Monitor)
		v.Secret = created.Secret
		ctx.Response.Header.Set("Location", v.Links["self"])
		writeJSON(ctx, 201, v)
	})
}

func outcomeOf(err error) string {
	var me *apierr.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &me):
		return string(me.Code)
	}
	return "error"
}

// listMonitors answers the monitors bound to the caller's token or API
// key, oldest first: a lost id is not a lost monitor.
func (s *Server) listMonitors(ctx *fasthttp.RequestCtx) {
	ms, err := s.monitors.List(s.base, s.caller(ctx))
	if err != nil {
		monitorError(ctx, err)
		return
	}
	views := make([]monitorView, len(ms))
	for i, m := range ms {
		views[i] = viewMonitor(m)
	}
	writeJSON(ctx, 200, struct {
		Monitors []monitorView `json:"monitors"`
	}{views})
}

func (s *Server) getMonitor(ctx *fasthttp.RequestCtx, id string, _ []string) {
	m, err := s.monitors.Get(s.base, s.caller(ctx), id)
	if err != nil {
		monitorError(ctx, err)
		return
	}
	writeJSON(ctx, 200, viewMonitor(m))
}

func (s *Server) deleteMonitor(ctx *fasthttp.RequestCtx, id string, _ []string) {
	c := s.caller(ctx)
	err := s.monitors.Delete(s.base, c, id)
	s.audit(c, "monitor.delete", id, outcomeOf(err))
	if err != nil {
		monitorError(ctx, err)
		return
	}
	ctx.SetStatusCode(204)
}

func (s *Server) testMonitor(ctx *fasthttp.RequestCtx, id string, _ []string) {
	c := s.caller(ctx)
	res, err := s.monitors.Test(s.base, c, id)
	s.audit(c, "monitor.test", id, outcomeOf(err))
	if err != nil {
		monitorError(ctx, err)
		return
	}
	writeJSON(ctx, 200, res)
}

// deliveryView is a delivery as the API lists it.
type deliveryView struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`
	CreatedAt   time.Time       `json:"created_at"`
	LastAttempt *time.Time      `json:"last_attempt_at"`
	LastCode    int             `json:"last_status_code,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	LatencyMS   int64           `json:"latency_ms,omitempty"`
	NextAttempt *time.Time      `json:"next_attempt_at"`
	Payload     json.RawMessage `json:"payload"`
}

func viewDelivery(d store.Delivery) deliveryView {
	v := deliveryView{ID: d.ID, Type: d.Type, Status: d.Status, Attempts: d.Attempts, CreatedAt: d.Created, LastAttempt: timePtr(d.LastAttempt),
		LastCode: d.LastCode, LastError: d.LastError, LatencyMS: d.LatencyMS, Payload: d.Payload}
	if d.Status == store.DeliveryPending {
		v.NextAttempt = timePtr(d.NextAttempt)
	}
	return v
}

// deliveryFields are the members a delivery has, for ?fields=.
var deliveryFields = map[string]bool{"id": true, "type": true, "status": true, "attempts": true, "created_at": true, "last_attempt_at": true,
	"last_status_code": true, "last_error": true, "latency_ms": true, "next_attempt_at": true, "payload": true}

// listDeliveries is GET /api/monitors/{id}/deliveries: newest first, with
// limit and an opaque cursor (next_cursor), filter[status] and filter[type],
// and fields=a,b to return only those members (id is always there).
func (s *Server) listDeliveries(ctx *fasthttp.RequestCtx, id string, _ []string) {
	q := ctx.QueryArgs()
	limit := 20
	if v := q.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > store.KeptDeliveries {
			writeError(ctx, apiErr(400, CodeBadRequest, "limit must be a whole number from 1 to "+strconv.Itoa(store.KeptDeliveries)+"."))
			return
		}
		limit = n
	}
	status, typ := string(q.Peek("filter[status]")), string(q.Peek("filter[type]"))
	switch status {
	case "", store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed, store.DeliveryCanceled:
	default:
		writeError(ctx, apiErr(400, CodeBadRequest, "filter[status] must be pending, delivered, failed or canceled."))
		return
	}
	if typ != "" && typ != "scan.completed" && typ != "score.changed" {
		writeError(ctx, apiErr(400, CodeBadRequest, "filter[type] must be scan.completed or score.changed."))
		return
	}
	var fields []string
	if v := string(q.Peek("fields")); v != "" {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if !deliveryFields[f] {
				writeError(ctx, apiErr(400, CodeBadRequest, "fields lists members of a delivery, comma-separated: id, type, status, attempts, created_at, last_attempt_at, last_status_code, last_error, latency_ms, next_attempt_at, payload."))
				return
			}
			fields = append(fields, f)
		}
	}
	after := ""
	if c := string(q.Peek("cursor")); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || !strings.HasPrefix(string(b), "evt_") {
			writeError(ctx, apiErr(400, CodeBadRequest, "cursor is not one this API returned; pass next_cursor from the previous page unchanged."))
			return
		}
		after = string(b)
	}
	all, err := s.monitors.Deliveries(s.base, s.caller(ctx), id, store.KeptDeliveries)
	if err != nil {
		monitorError(ctx, err)
		return
	}
	page := make([]any, 0, limit)
	pageIDs := make([]string, 0, limit)
	next := ""
	skipping := after != ""
	for _, d := range all {
		if skipping {
			skipping = d.ID != after
			continue
		}
		if (status != "" && d.Status != status) || (typ != "" && d.Type != typ) {
			continue
		}
		if len(page) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(pageIDs[len(pageIDs)-1]))
			break
		}
		page = append(page, project(viewDelivery(d), fields))
		pageIDs = append(pageIDs, d.ID)
	}
	out := map[string]any{"monitor_id": id, "deliveries": page, "next_cursor": nil}
	if skipping {
		// The cursor's delivery is no longer kept (trimmed or expired): an
		// empty last page would read as the end of the list.
		writeError(ctx, apiErr(400, CodeBadRequest, "cursor names a delivery that is no longer kept (only the newest "+strconv.Itoa(store.KeptDeliveries)+" are, for a week); list again without cursor."))
		return
	}
	if next != "" {
		out["next_cursor"] = next
	}
	writeJSON(ctx, 200, out)
}

// project keeps only fields (and id) of a delivery; all of it when fields is empty.
func project(v deliveryView, fields []string) any {
	if len(fields) == 0 {
		return v
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	out := map[string]any{"id": m["id"]}
	for _, f := range fields {
		if x, ok := m[f]; ok {
			out[f] = x
		}
	}
	return out
}

func (s *Server) redeliver(ctx *fasthttp.RequestCtx, id string, rest []string) {
	c := s.caller(ctx)
	d, err := s.monitors.Redeliver(s.base, c, id, rest[1])
	s.audit(c, "monitor.redeliver", id, outcomeOf(err))
	if err != nil {
		monitorError(ctx, err)
		return
	}
	writeJSON(ctx, 202, viewDelivery(d))
}

func (s *Server) monitorReport(ctx *fasthttp.RequestCtx, id string, rest []string) {
	raw, err := s.monitors.Report(s.base, s.caller(ctx), id, rest[1])
	if err != nil {
		monitorError(ctx, err)
		return
	}
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "private, max-age=3600")
	ctx.SetBody(raw)
}
