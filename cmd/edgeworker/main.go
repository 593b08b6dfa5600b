//go:build js && wasm

// Command edgeworker is the edge on Cloudflare Workers (make worker; wrangler.toml).
package main

import (
	"net/http"

	"github.com/agentready/agentready/edge"
	workersp "github.com/agentready/agentready/edge/workers"
	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
)

func main() {
	workers.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A Worker starts a fresh Go instance per request: configuration is read each time.
		cfg, err := edge.FromEnv(cloudflare.Getenv)
		if err != nil {
			http.Error(w, "edge configuration error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		p, err := workersp.New()
		if err != nil {
			http.Error(w, "edge configuration error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		edge.New(cfg, p).ServeHTTP(w, r)
	}))
}
