package origin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/monitor"
	"github.com/agentready/agentready/webhook"
)

// The served description validates with an OpenAPI library and covers every
// endpoint of the interface spec.
func TestOpenAPIDocument(t *testing.T) {
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(origin.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %s, version %s", doc.OpenAPI, doc.Info.Version)
	}
	if len(doc.Security) != 2 || len(doc.Security[0]) != 0 || doc.Security[1]["apiKey"] == nil {
		t.Errorf("declared security must be: none, or X-API-Key: %v", doc.Security)
	}
	if k := doc.Components.SecuritySchemes["apiKey"].Value; k.In != "header" || k.Name != "X-API-Key" {
		t.Errorf("apiKey scheme %+v", k)
	}
	if path, ok := testenv.OptionalShared(t, "reference/service-spec.md"); ok {
		spec, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		row := regexp.MustCompile("(?m)^\\| (GET|POST|DELETE) \\| (/[^ ]+) \\|")
		n := 0
		for _, m := range row.FindAllStringSubmatch(string(spec), -1) {
			n++
			item := doc.Paths.Value(m[2])
			if item == nil || item.GetOperation(m[1]) == nil {
				t.Errorf("%s %s is in the interface spec but not in /openapi.json", m[1], m[2])
			}
		}
		if n != 16 {
			t.Fatalf("read %d endpoints from the spec, want 16", n)
		}
	}
	scan := doc.Paths.Value("/api/scan").Get
	if scan.Responses.Value("200").Value.Content.Get("text/event-stream") == nil || !strings.Contains(*scan.Responses.Value("200").Value.Description, "scan.completed") {
		t.Error("the SSE events are not described")
	}
	for _, h := range []string{"X-RateLimit-Limit", "RateLimit-Policy"} {
		if scan.Responses.Value("200").Value.Headers[h] == nil {
			t.Errorf("rate-limit header %s not declared", h)
		}
	}
	// Every endpoint is built, so none is marked planned; the refusals of
	// the monitors and the paid gateway are named where a client looks for
	// them.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-status"] != nil {
				t.Errorf("%s %s is built but marked x-status %v", method, path, op.Extensions["x-status"])
			}
		}
	}
	codes := func(path, method, status string, want ...string) {
		t.Helper()
		op := doc.Paths.Value(path).GetOperation(method)
		r := op.Responses.Value(status)
		if r == nil || r.Value.Description == nil {
			t.Errorf("%s %s documents no %s", method, path, status)
			return
		}
		for _, c := range want {
			if !strings.Contains(*r.Value.Description, c) {
				t.Errorf("%s %s %s does not name %s", method, path, status, c)
			}
		}
	}
	codes("/api/monitors", "POST", "400", "invalid_json", "missing_url", "invalid_url", "invalid_callback_url", "invalid_cadence", "cadence_too_short", "invalid_events", "too_many_monitors", "invalid_idempotency_key")
	codes("/api/monitors", "POST", "409", "idempotency_in_flight")
	codes("/api/monitors", "POST", "415", "unsupported_media_type")
	codes("/api/monitors", "POST", "422", "idempotency_key_reused")
	codes("/api/monitors/{id}/deliveries/{delivery_id}/redeliver", "POST", "409", "monitor_disabled", "delivery_in_flight")
	for _, p := range []string{"/api/monitors/{id}", "/api/monitors/{id}/test", "/api/monitors/{id}/deliveries", "/api/monitors/{id}/deliveries/{delivery_id}/redeliver", "/api/monitors/{id}/reports/{report_id}"} {
		for method := range doc.Paths.Value(p).Operations() {
			codes(p, method, "404", "not_found")
			codes(p, method, "503", "state_unavailable")
		}
	}
	gw := "/api/v1/scan-gateway"
	codes(gw, "POST", "400", "invalid_json", "missing_url", "invalid_url")
	codes(gw, "POST", "402", "payment_required", "payment_invalid", "payment_already_used", "invalid_payment_requirements")
	codes(gw, "POST", "409", "idempotency_in_flight")
	codes(gw, "POST", "415", "unsupported_media_type")
	codes(gw, "POST", "422", "site_unreachable", "not settled")
	codes(gw, "POST", "503", "payments_disabled", "facilitator_unavailable", "state_unavailable", "overloaded")
	pay := doc.Paths.Value(gw).Post
	for _, h := range []string{"PAYMENT-SIGNATURE", "X-PAYMENT"} {
		if pay.Parameters.GetByInAndName("header", h) == nil {
			t.Errorf("the gateway does not declare the payment header %s", h)
		}
	}
	paid := pay.Responses.Value("200").Value
	for _, h := range []string{"PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "Idempotent-Replayed"} {
		if paid.Headers[h] == nil {
			t.Errorf("the gateway's 200 does not declare %s", h)
		}
	}
	if pay.Responses.Value("402").Value.Headers["PAYMENT-REQUIRED"] == nil {
		t.Error("the gateway's 402 does not declare PAYMENT-REQUIRED")
	}
	// The paid report is the free one plus the deep block, which only the
	// gateway's 200 requires.
	if p := doc.Components.Schemas["ScanResult"].Value.Properties["deep"]; p == nil || p.Ref != "#/components/schemas/Deep" {
		t.Error("ScanResult does not reference the Deep schema as its optional deep block")
	}
	if slices.Contains(doc.Components.Schemas["ScanResult"].Value.Required, "deep") {
		t.Error("deep is required of every ScanResult; only a paid deep scan has it")
	}
	if idem := doc.Paths.Value("/api/monitors").Post.Parameters.GetByInAndName("header", "Idempotency-Key"); idem == nil {
		t.Error("POST /api/monitors does not declare Idempotency-Key")
	}
	created := doc.Paths.Value("/api/monitors").Post.Responses.Value("201").Value
	if created.Headers["Location"] == nil || created.Content.Get("application/json").Schema.Ref != "#/components/schemas/MonitorCreated" {
		t.Error("201 of POST /api/monitors: Location or the MonitorCreated schema missing")
	}
	if doc.Components.Schemas["Monitor"].Value.Properties["secret"] != nil {
		t.Error("the Monitor schema (GET) lists the secret, which only the 201 shows")
	}
	for _, ev := range []string{"scan.completed", "score.changed"} {
		wh := doc.Webhooks[ev]
		if wh == nil || wh.Post == nil {
			t.Errorf("webhook %s is not described", ev)
			continue
		}
		for _, h := range []string{"X-Scanner-Signature", "X-Scanner-Event", "X-Scanner-Delivery", "webhook-id", "webhook-timestamp", "webhook-signature"} {
			if p := wh.Post.Parameters.GetByInAndName("header", h); p == nil || !p.Required {
				t.Errorf("webhook %s: header %s not declared as sent", ev, h)
			}
		}
	}
}

// The gateway's x402 headers are base64 JSON, which the contract does not
// look inside (contentSchema is an annotation to a JSON Schema validator),
// so their decoded values are held here to the schemas the document names
// for them, both generations: what a client is asked for, what it sends,
// and the settlement it gets back.
func TestOpenAPIGatewayHeaders(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(origin.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Value(x402.GatewayPath).Post
	decoded := func(where string, schema *openapi3.SchemaRef, value string) {
		t.Helper()
		if schema == nil || schema.Value == nil || schema.Value.ContentSchema == nil || schema.Value.ContentSchema.Value == nil {
			t.Fatalf("%s: /openapi.json names no contentSchema for it", where)
		}
		raw, err := base64.StdEncoding.DecodeString(value)
		var v any
		if err != nil || json.Unmarshal(raw, &v) != nil {
			t.Fatalf("%s is not base64 JSON: %q", where, value)
		}
		if err := schema.Value.ContentSchema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s does not match %s: %v\n%s", where, schema.Value.ContentSchema.Ref, err, raw)
		}
	}
	header := func(status, name string) *openapi3.SchemaRef {
		h := op.Responses.Value(status).Value.Headers[name]
		if h == nil {
			t.Fatalf("the gateway's %s does not declare %s", status, name)
		}
		return h.Value.Schema
	}
	param := func(name string) *openapi3.SchemaRef {
		p := op.Parameters.GetByInAndName("header", name)
		if p == nil {
			t.Fatalf("the gateway does not declare %s", name)
		}
		return p.Schema
	}

	o, _ := gatewayOrigin(t, testPayee)
	s := site(t, "empty")
	resp, _ := gatewayPost(t, o, s.URL)
	decoded("PAYMENT-REQUIRED", header("402", "PAYMENT-REQUIRED"), resp.Header.Get("PAYMENT-REQUIRED"))
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)

	pay := payV2(t, req, facilitator.Token("HeaderPayer", req.Accepts[0].Amount, testPayee, "openapi-v2"))
	decoded("PAYMENT-SIGNATURE", param("PAYMENT-SIGNATURE"), pay)
	resp, b := gatewayPost(t, o, s.URL, "PAYMENT-SIGNATURE", pay)
	if resp.StatusCode != 200 {
		t.Fatalf("paid v2: %d %.300s", resp.StatusCode, b)
	}
	decoded("PAYMENT-RESPONSE", header("200", "PAYMENT-RESPONSE"), resp.Header.Get("PAYMENT-RESPONSE"))

	v1, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana",
		"payload": map[string]string{"transaction": facilitator.Token("HeaderPayer", req.Accepts[0].Amount, testPayee, "openapi-v1")}})
	pay = base64.StdEncoding.EncodeToString(v1)
	decoded("X-PAYMENT", param("X-PAYMENT"), pay)
	resp, b = gatewayPost(t, o, s.URL, "X-PAYMENT", pay)
	if resp.StatusCode != 200 {
		t.Fatalf("paid v1: %d %.300s", resp.StatusCode, b)
	}
	decoded("X-PAYMENT-RESPONSE", header("200", "X-PAYMENT-RESPONSE"), resp.Header.Get("X-PAYMENT-RESPONSE"))
}

// The monitor operations answer what /openapi.json says for the statuses the
// end-to-end monitor tests leave out (422 on a reused key, 400 for a bad
// limit, 202 and both 404s of a redelivery, 409 monitor_disabled, 204), and
// what the service POSTs to a receiver is what the document's webhooks
// describe: every required header, in its declared form, and a body valid
// against WebhookEvent.
func TestOpenAPIMonitorContract(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(origin.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	o := startOrigin(t, origin.Config{Monitors: fastMonitors()}, nil)
	siteURL, _ := togglingSite(t)
	recv := newReceiver(t)
	recv.setAnswer(func(path string, _ webhook.Event, _ int) int {
		if path == "/gone" {
			return 410
		}
		return 204
	})
	body := `{"url":"` + siteURL + `","callback_url":"` + recv.srv.URL + `/w","cadence":"1h"}`
	status, m, _ := createMonitor(t, o, body, "Idempotency-Key", "contract-1")
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["id"].(string)
	resp, b := post(t, nil, o.URL+"/api/monitors", "application/json", strings.Replace(body, "1h", "2h", 1), "Idempotency-Key", "contract-1")
	if resp.StatusCode != 422 || envelope(t, b).Code != "idempotency_key_reused" {
		t.Errorf("a reused key with another body: %d %s", resp.StatusCode, b)
	}

	completed := func(r received) bool { return r.event.Type == webhook.EventScanCompleted && !r.event.Test }
	testenv.Eventually(t, 15*time.Second, "the first delivery", func() bool { return len(recv.find("/w", completed)) == 1 })
	checkWebhook(t, doc, recv.find("/w", completed)[0])
	resp, b = post(t, nil, o.URL+"/api/monitors/"+id+"/test", "", "")
	var tr monitor.TestResult
	if resp.StatusCode != 200 || json.Unmarshal(b, &tr) != nil || !tr.Delivered {
		t.Fatalf("test delivery: %d %s", resp.StatusCode, b)
	}
	checkWebhook(t, doc, recv.find("/w", func(r received) bool { return r.event.ID == tr.DeliveryID })[0])

	deliveries := o.URL + "/api/monitors/" + id + "/deliveries"
	for _, q := range []string{"?limit=0", "?limit=101", "?limit=ten"} {
		if resp, b := get(t, deliveries+q); resp.StatusCode != 400 || envelope(t, b).Code != "bad_request" {
			t.Errorf("deliveries%s: %d %s", q, resp.StatusCode, b)
		}
	}
	var first string
	testenv.Eventually(t, 15*time.Second, "the delivery listed as delivered", func() bool {
		_, b := get(t, deliveries+"?limit=1")
		var l struct{ Deliveries []struct{ ID, Status string } }
		_ = json.Unmarshal(b, &l)
		if len(l.Deliveries) == 1 && l.Deliveries[0].Status == "delivered" {
			first = l.Deliveries[0].ID
		}
		return first != ""
	})
	redeliver := o.URL + "/api/monitors/" + id + "/deliveries/" + first + "/redeliver"
	resp, b = post(t, nil, redeliver, "", "")
	if resp.StatusCode != 202 || !strings.Contains(string(b), `"status":"pending"`) {
		t.Errorf("redeliver: %d %s", resp.StatusCode, b)
	}
	testenv.Eventually(t, 15*time.Second, "the redelivery", func() bool { return len(recv.find("/w", func(r received) bool { return r.event.ID == first })) == 2 })
	if resp, b := post(t, nil, o.URL+"/api/monitors/"+id+"/deliveries/evt_unknown/redeliver", "", ""); resp.StatusCode != 404 || envelope(t, b).Code != "not_found" {
		t.Errorf("redeliver an unknown delivery: %d %s", resp.StatusCode, b)
	}

	// 410 disables a monitor; its deliveries cannot be sent again.
	status, gone, _ := createMonitor(t, o, `{"url":"`+siteURL+`","callback_url":"`+recv.srv.URL+`/gone","cadence":"1h"}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, gone)
	}
	goneID := gone["id"].(string)
	testenv.Eventually(t, 15*time.Second, "410 disables the monitor", func() bool {
		_, b := get(t, o.URL+"/api/monitors/"+goneID)
		return strings.Contains(string(b), `"status":"disabled"`)
	})
	dl := recv.find("/gone", nil)[0].event.ID
	if resp, b := post(t, nil, o.URL+"/api/monitors/"+goneID+"/deliveries/"+dl+"/redeliver", "", ""); resp.StatusCode != 409 || envelope(t, b).Code != "monitor_disabled" {
		t.Errorf("redeliver for a disabled monitor: %d %s", resp.StatusCode, b)
	}
	get(t, o.URL+"/api/monitors/"+goneID+"/deliveries") // a failed delivery, validated

	req, _ := http.NewRequest("DELETE", o.URL+"/api/monitors/"+id, nil)
	resp, err = edgetest.LoadContract(t).Client(t).Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, b := post(t, nil, redeliver, "", ""); resp.StatusCode != 404 || envelope(t, b).Code != "not_found" {
		t.Errorf("redeliver after DELETE: %d %s", resp.StatusCode, b)
	}
}

// checkWebhook holds a delivery to the webhook of its type in /openapi.json.
func checkWebhook(t *testing.T, doc *openapi3.T, r received) {
	t.Helper()
	item := doc.Webhooks[r.event.Type]
	if item == nil || item.Post == nil {
		t.Fatalf("/openapi.json describes no webhook %q", r.event.Type)
	}
	for _, p := range item.Post.Parameters {
		v := r.header.Get(p.Value.Name)
		if v == "" {
			if p.Value.Required {
				t.Errorf("%s delivery without the required header %s", r.event.Type, p.Value.Name)
			}
			continue
		}
		if err := p.Value.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s delivery: header %s: %v", r.event.Type, p.Value.Name, err)
		}
	}
	var body any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%s delivery body: %v", r.event.Type, err)
	}
	media := item.Post.RequestBody.Value.Content.Get(r.header.Get("Content-Type"))
	if media == nil {
		t.Fatalf("%s delivery sent as %q, which the webhook does not describe", r.event.Type, r.header.Get("Content-Type"))
	}
	if err := media.Schema.Value.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s delivery body does not match the webhook's schema: %v\n%s", r.event.Type, err, r.body)
	}
}
