package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// envDuration is the duration in the environment setting key, or def when
// it is unset: every serve flag has an AGENTREADY_* form, so a container
// needs no flags (deploy/).
func envDuration(key string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive Go duration such as 8s or 10m", key, v)
	}
	return d, nil
}

// splitList reads a comma-separated setting, blanks dropped.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func serveCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", "serve", stderr)
	addr := fs.String("addr", envOr("AGENTREADY_ADDR", "127.0.0.1:8080"), "listen address (env AGENTREADY_ADDR)")
	data := fs.String("data", envOr("AGENTREADY_DATA", "./data"), "data directory for the embedded state (env AGENTREADY_DATA)")
	allowPrivate := fs.Bool("allow-private", os.Getenv("AGENTREADY_ALLOW_PRIVATE") == "1", "let the service scan loopback and private addresses (local testing only; env AGENTREADY_ALLOW_PRIVATE=1)")
	allowList := fs.String("allow", os.Getenv("AGENTREADY_ALLOW"), "let the service reach exactly these non-public addresses, comma-separated: an IP, a CIDR, or IP:port / [IPv6]:port (tests and local runs; env AGENTREADY_ALLOW)")
	ttlDefault, err := envDuration("AGENTREADY_CACHE_TTL", 10*time.Minute)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return exitUsage
	}
	keepDefault, err := envDuration("AGENTREADY_REPORT_KEEP", 30*24*time.Hour)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return exitUsage
	}
	drainDefault, err := envDuration("AGENTREADY_DRAIN", 20*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return exitUsage
	}
	cacheTTL := fs.Duration("cache-ttl", ttlDefault, "how long a scan result is served from the cache (env AGENTREADY_CACHE_TTL)")
	reportKeep := fs.Duration("report-keep", keepDefault, "how long each scan's report stays readable at /report and /api/report, by its permanent link and as the site's latest after the cache forgot it (env AGENTREADY_REPORT_KEEP)")
	drain := fs.Duration("drain", drainDefault, "on SIGTERM, how long in-flight requests may finish (env AGENTREADY_DRAIN)")
	edgeWasm := fs.String("edge-wasm", envOr("AGENTREADY_EDGE_WASM", "bin/edge.wasm"), "the edge compiled to WebAssembly (make wasm); hosted with wazero in front of the origin. Empty: run the edge natively")
	roleName := fs.String("role", envOr("AGENTREADY_ROLE", "all"), "all (edge and origin in one process), edge or origin (env AGENTREADY_ROLE)")
	originList := fs.String("origins", os.Getenv("AGENTREADY_ORIGINS"), "role edge: the origins' base URLs, comma-separated (env AGENTREADY_ORIGINS)")
	metricsAddr := fs.String("metrics-addr", os.Getenv("AGENTREADY_METRICS_ADDR"), "serve the origin's Prometheus metrics (GET /metrics) on this address of its own, e.g. 127.0.0.1:9090; empty: not served (env AGENTREADY_METRICS_ADDR)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentready serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	role, err := stack.ParseRole(*roleName)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return exitUsage
	}
	allow, err := fetch.ParseAllowList(*allowList)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: --allow (AGENTREADY_ALLOW): %v\n", err)
		return exitUsage
	}
	ctx := context.Background()
	redisURL := os.Getenv("REDIS_URL")
	// An edge keeps no state of its own: it opens Redis for the allowances
	// when there is one, and no embedded file.
	var st store.Backend
	if role != stack.RoleEdge || redisURL != "" {
		if st, err = store.Open(ctx, *data, redisURL); err != nil {
			fmt.Fprintf(stderr, "agentready serve: %v\n", err)
			return 1
		}
		defer st.Close()
	}
	var module []byte
	if *edgeWasm != "" && role != stack.RoleOrigin {
		if module, err = os.ReadFile(*edgeWasm); err != nil {
			fmt.Fprintf(stderr, "agentready serve: the edge module %s is missing (run `make wasm`, or pass --edge-wasm '' to run the edge natively): %v\n", *edgeWasm, err)
			return 1
		}
	}
	audit := slog.New(slog.NewJSONHandler(stderr, nil)) // one JSON line per scan-costing action
	// Chromium is looked up via CHROME_PATH or the PATH and started on the first capture;
	// paid deep scans get a second Chromium of their own (origin.Config.PaidBrowser).
	svc, err := stack.Start(stack.Options{Addr: *addr, AllowPrivate: *allowPrivate, Allow: allow, Store: st, Env: os.Getenv, EdgeModule: module,
		Origin: origin.Config{CacheTTL: *cacheTTL, ReportKeep: *reportKeep, Audit: audit}, Browser: &browser.Config{},
		Role: role, Origins: splitList(*originList), MetricsAddr: *metricsAddr})
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return 1
	}
	where := "embedded state in " + *data
	if redisURL != "" {
		where = "state in Redis (REDIS_URL)"
	}
	edgeKind := "native edge"
	if svc.Wasm {
		edgeKind = "WebAssembly edge (" + *edgeWasm + ", wazero)"
	}
	switch role {
	case stack.RoleOrigin:
		fmt.Fprintf(stdout, "agentready origin serving on %s (%s) for edges that sign with AGENTREADY_EDGE_SECRET\n", svc.URL, where)
	case stack.RoleEdge:
		where = "allowances in Redis (REDIS_URL)"
		if redisURL == "" {
			where = "allowances counted in this process only: set REDIS_URL so that every edge counts alike"
		}
		fmt.Fprintf(stdout, "agentready edge serving on %s (%s, %s) in front of %s\n", svc.URL, edgeKind, where, strings.Join(splitList(*originList), ", "))
	default:
		fmt.Fprintf(stdout, "agentready serving on %s (%s, %s)\n", svc.URL, edgeKind, where)
	}
	if role != stack.RoleOrigin {
		fmt.Fprintf(stdout, "  curl '%s/api/scan?url=example.com&format=json'\n  curl -N '%s/api/scan?url=example.com'\n  MCP: %s/api/mcp\n", svc.URL, svc.URL, svc.URL)
	}
	if *allowPrivate {
		fmt.Fprintln(stdout, "  --allow-private: loopback and private targets may be scanned (local testing only)")
	}
	if len(allow) > 0 {
		fmt.Fprintf(stdout, "  --allow: %s may be reached although not public (tests and local runs only)\n", allow)
	}
	fmt.Fprintln(stdout, "  "+svc.PaymentMode())
	switch {
	case svc.MetricsURL != "":
		fmt.Fprintf(stdout, "  metrics: %s (not on the public address)\n", svc.MetricsURL)
	case *metricsAddr != "":
		fmt.Fprintln(stdout, "  metrics: none in role edge (each origin serves its own on its AGENTREADY_METRICS_ADDR)")
	}
	if svc.EphemeralKeys() {
		fmt.Fprintln(stdout, "  token keys generated for this run (set AGENTREADY_TOKEN_KEYS to keep tokens valid across restarts)")
	}
	for _, w := range startupWarnings(ctx, *addr, os.Getenv, redisOpenHosts) {
		fmt.Fprintf(stderr, "agentready serve: warning: %s\n", w)
	}
	if w := baseURLWarning(role, *addr, os.Getenv); w != "" {
		fmt.Fprintf(stderr, "agentready serve: warning: %s\n", w)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	s := <-sig
	fmt.Fprintf(stdout, "%s: draining in-flight requests (up to %s)…\n", s, *drain)
	dctx, cancel := context.WithTimeout(ctx, *drain)
	defer cancel()
	if err := svc.Shutdown(dctx); err != nil {
		fmt.Fprintf(stderr, "agentready serve: shutdown: %v\n", err)
	}
	fmt.Fprintln(stdout, "stopped")
	return exitOK
}

// keygenCmd prints a new random API key and the AGENTREADY_API_KEYS entry
// (name:sha256hex) that admits it; only the hash is ever configured.
// The name passes the rule serve applies to AGENTREADY_API_KEYS
// (edge.CheckAPIKeyName), so every entry it prints is one serve accepts.
func keygenCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintf(stderr, "agentready keygen: give exactly one NAME (got %d)\n%s", len(args), shortUsage("keygen"))
		return exitUsage
	}
	if err := edge.CheckAPIKeyName(args[0]); err != nil {
		fmt.Fprintf(stderr, "agentready keygen: %v; AGENTREADY_API_KEYS accepts no other name\n", err)
		return exitUsage
	}
	b := make([]byte, 24)
	rand.Read(b)
	key := "ar_" + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(key))
	fmt.Fprintf(stdout, "key:   %s\nentry: %s:%s\n", key, args[0], hex.EncodeToString(sum[:]))
	fmt.Fprintln(stdout, "Give the key to the integration; add the entry to AGENTREADY_API_KEYS (comma-separated).")
	return exitOK
}
