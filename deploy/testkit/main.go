// Command testkit is the deployment test's other party, run in a container
// on the composition's network (deploy/compose.test.yaml): the fixture site
// the origins scan, the same site slowed down (for a scan that is still
// running when an origin is stopped), and a webhook receiver that keeps every
// delivery, headers and raw body, for `agentready webhook verify`.
//
//	testkit -sites /testkit/sites
//
// :8000 serves sites/full as http://site.agentready.test:8000, :8001 the same
// with a delay on every response as http://slow.agentready.test:8001, and
// :9000 takes POST /hook (answered 204) and lists what it took at GET
// /deliveries (JSON). Those host names are the container's network aliases.
// `testkit -check` is the container's health check.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentready/agentready/internal/testing/fixture"
)

// Delivery is one request the receiver took.
type Delivery struct {
	Header     http.Header `json:"header"`
	Body       string      `json:"body"`
	ReceivedAt time.Time   `json:"received_at"`
}

func main() {
	sites := flag.String("sites", "testdata/sites", "the fixture sites' directory")
	delay := flag.Duration("delay", 700*time.Millisecond, "latency of every response of the slow site")
	check := flag.Bool("check", false, "exit 0 when a testkit answers on :9000 (the container's health check)")
	flag.Parse()
	if *check {
		resp, err := http.Get("http://127.0.0.1:9000/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			os.Exit(1)
		}
		return
	}
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	serveSite(filepath.Join(*sites, "full"), ":8000", "http://site.agentready.test:8000", 0)
	serveSite(filepath.Join(*sites, "full"), ":8001", "http://slow.agentready.test:8001", *delay)

	var mu sync.Mutex
	var got []Delivery
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, Delivery{Header: r.Header.Clone(), Body: string(body), ReceivedAt: time.Now().UTC()})
		mu.Unlock()
		log.Printf("delivery: %s %d bytes", r.Header.Get("Webhook-Id"), len(body))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /deliveries", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(got)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	log.Printf("testkit: sites on :8000 and :8001 (slow), receiver on :9000")
	log.Fatal(http.ListenAndServe(":9000", mux))
}

// serveSite serves a fixture site on addr under the public origin it is
// reached at on the network: the fixture writes its origin into its pages
// ({{ORIGIN}}), which must be the name the scanner used, not the loopback
// server the fixture package starts for itself.
func serveSite(dir, addr, origin string, delay time.Duration) {
	s, err := fixture.Start(dir, fixture.WithDelay(delay))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.URL = origin
	go func() { log.Fatal(http.ListenAndServe(addr, s.Config.Handler)) }()
}
