//go:build js && wasm

// Command edgeworker is the edge on Cloudflare Workers (make worker;
// wrangler.toml). The entry module, edge/workers/index.mjs, starts it once
// per isolate and dispatches every request into it.
package main

import (
	"net/http"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/workers"
)

func main() {
	workers.Serve(func(getenv func(string) string) (http.Handler, error) {
		cfg, s, err := workers.ReadSettings(getenv)
		if err != nil {
			return nil, err
		}
		return edge.New(cfg, workers.New(s)), nil
	})
}
