package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

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

func serveCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("AGENTREADY_ADDR", "127.0.0.1:8080"), "listen address (env AGENTREADY_ADDR)")
	data := fs.String("data", envOr("AGENTREADY_DATA", "./data"), "data directory for the embedded state (env AGENTREADY_DATA)")
	allowPrivate := fs.Bool("allow-private", os.Getenv("AGENTREADY_ALLOW_PRIVATE") == "1", "let the service scan loopback and private addresses (local testing only; env AGENTREADY_ALLOW_PRIVATE=1)")
	cacheTTL := fs.Duration("cache-ttl", 10*time.Minute, "how long a scan result is served from the cache")
	drain := fs.Duration("drain", 20*time.Second, "on SIGTERM, how long in-flight requests may finish")
	edgeWasm := fs.String("edge-wasm", envOr("AGENTREADY_EDGE_WASM", "bin/edge.wasm"), "the edge compiled to WebAssembly (make wasm); hosted with wazero in front of the origin. Empty: run the edge natively")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentready serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	ctx := context.Background()
	redisURL := os.Getenv("REDIS_URL")
	st, err := store.Open(ctx, *data, redisURL)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return 1
	}
	defer st.Close()
	var module []byte
	if *edgeWasm != "" {
		if module, err = os.ReadFile(*edgeWasm); err != nil {
			fmt.Fprintf(stderr, "agentready serve: the edge module %s is missing (run `make wasm`, or pass --edge-wasm '' to run the edge natively): %v\n", *edgeWasm, err)
			return 1
		}
	}
	audit := slog.New(slog.NewJSONHandler(stderr, nil)) // one JSON line per scan-costing action
	// Chromium is looked up via CHROME_PATH or the PATH and started on the first capture.
	svc, err := stack.Start(stack.Options{Addr: *addr, AllowPrivate: *allowPrivate, Store: st, Env: os.Getenv, EdgeModule: module,
		Origin: origin.Config{CacheTTL: *cacheTTL, Audit: audit}, Browser: &browser.Config{}})
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
	fmt.Fprintf(stdout, "agentready serving on %s (%s, %s)\n", svc.URL, edgeKind, where)
	fmt.Fprintf(stdout, "  curl '%s/api/scan?url=example.com&format=json'\n  curl -N '%s/api/scan?url=example.com'\n  MCP: %s/api/mcp\n", svc.URL, svc.URL, svc.URL)
	if *allowPrivate {
		fmt.Fprintln(stdout, "  --allow-private: loopback and private targets may be scanned (local testing only)")
	}
	fmt.Fprintln(stdout, "  "+svc.PaymentMode())
	if svc.EphemeralKeys() {
		fmt.Fprintln(stdout, "  token keys generated for this run (set AGENTREADY_TOKEN_KEYS to keep tokens valid across restarts)")
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
func keygenCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" || len(args[0]) > 64 {
		fmt.Fprintln(stderr, "usage: agentready keygen NAME   (NAME identifies the integration, e.g. acme-ci)")
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
