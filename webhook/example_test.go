package webhook_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/agentready/agentready/webhook"
)

// A receiver: read the raw body (bounded), Parse it, answer 2xx at once and
// process later, deduplicating on the event's id.
func ExampleParse() {
	secret, _ := webhook.NewSecret() // in a receiver: os.Getenv("AGENTREADY_WEBHOOK_SECRET")
	events := make(chan webhook.Event, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		ev, err := webhook.Parse(secret, r.Header, body, time.Now())
		if err != nil {
			http.Error(w, "invalid delivery", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		events <- ev
	}))
	defer receiver.Close()

	// What the service sends.
	body := []byte(`{"id":"evt_3xq7ltm5ybk2oc4fhr6wn2dpza","type":"scan.completed","monitor_id":"mon_k7c2v4ypn3hq5e6wzbr2fxja4m","data":{"url":"https://example.com/","score":72,"level":2,"previous":null}}`)
	h, _ := webhook.Sign(secret, "evt_3xq7ltm5ybk2oc4fhr6wn2dpza", time.Now(), body)
	req, _ := http.NewRequest(http.MethodPost, receiver.URL, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set(webhook.HeaderEvent, webhook.EventScanCompleted)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	ev := <-events
	fmt.Println(resp.StatusCode, ev.Type, ev.ID, ev.Data.Score, ev.Data.Previous == nil)
	// Output: 204 scan.completed evt_3xq7ltm5ybk2oc4fhr6wn2dpza 72 true
}
