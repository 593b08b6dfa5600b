//go:build js && wasm

// Command edgeworker is the edge on Cloudflare Workers (make worker; wrangler.toml).
package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"

	"github.com/agentready/agentready/edge"
	workersp "github.com/agentready/agentready/edge/workers"
)

func main() {
	workers.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A Worker starts a fresh Go instance per request: configuration is read each time.
		cfg, err := edge.FromEnv(cloudflare.Getenv)
		if err != nil {
			misconfigured(w, err)
			return
		}
		p, err := workersp.New()
		if err != nil {
			misconfigured(w, err)
			return
		}
		edge.New(cfg, p).ServeHTTP(w, r)
	}))
}

// misconfigured tells the caller which setting is wrong and the operator, in
// the Worker's log (wrangler tail), why.
func misconfigured(w http.ResponseWriter, err error) {
	fmt.Fprintln(os.Stderr, "edge configuration error:", err)
	var ce *edge.ConfigError
	setting := ""
	if errors.As(err, &ce) {
		setting = ce.Setting
	}
	edge.Misconfigured(w, setting)
}
