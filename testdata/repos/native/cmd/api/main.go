package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"
)

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Scope       string `json:"scope"`
}

type config struct {
	SandboxBaseURL string `env:"SANDBOX_BASE_URL"`
}

func requireScope(scope string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("X-Token-Scope"), scope) {
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

func main() {
	base := os.Getenv("SANDBOX_BASE_URL")
	_ = base
	r := chi.NewRouter()
	r.Post("/oauth/token", func(w http.ResponseWriter, req *http.Request) {
		json.NewEncoder(w).Encode(tokenResponse{AccessToken: "t", TokenType: "Bearer", Scope: "invoices:write"})
	})
	r.Get("/invoices", func(w http.ResponseWriter, req *http.Request) {})
	r.Post("/invoices", requireScope("invoices:write", func(w http.ResponseWriter, req *http.Request) {}))
	r.Post("/invoices/{id}/send", requireScope("invoices:write", func(w http.ResponseWriter, req *http.Request) {
		session := req.Header.Get("X-Agent-Session")
		slog.Info("invoice sent", "action", "invoice.send", "agent_id", req.Header.Get("X-Agent-Id"), "session", session)
	}))
	r.Post("/invoices/{id}/cancel", requireScope("invoices:write", func(w http.ResponseWriter, req *http.Request) {}))
	http.ListenAndServe(":8080", r)
}
