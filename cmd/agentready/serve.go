package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/origin"
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
	drain := fs.Duration("drain", 20*time.Second, "on SIGTERM, how long in-flight scans may finish")
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
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: *allowPrivate, AllowAnyPort: *allowPrivate}}})
	audit := slog.New(slog.NewJSONHandler(stderr, nil)) // one JSON line per scan-costing action
	srv := origin.New(origin.Config{AllowPrivate: *allowPrivate, CacheTTL: *cacheTTL, Audit: audit}, st, sc)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "agentready serve: cannot listen on %s: %v (is another server using the port? try --addr 127.0.0.1:8081)\n", *addr, err)
		return 1
	}
	where := "embedded state in " + *data
	if redisURL != "" {
		where = "state in Redis (REDIS_URL)"
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "agentready serving on %s (%s)\n", base, where)
	fmt.Fprintf(stdout, "  curl '%s/api/scan?url=example.com&format=json'\n  curl -N '%s/api/scan?url=example.com'\n", base, base)
	if *allowPrivate {
		fmt.Fprintln(stdout, "  --allow-private: loopback and private targets may be scanned (local testing only)")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "agentready serve: %v\n", err)
		return 1
	case s := <-sig:
		fmt.Fprintf(stdout, "%s: draining in-flight requests (up to %s)…\n", s, *drain)
	}
	dctx, cancel := context.WithTimeout(ctx, *drain)
	defer cancel()
	if err := srv.Shutdown(dctx); err != nil {
		fmt.Fprintf(stderr, "agentready serve: shutdown: %v\n", err)
	}
	fmt.Fprintln(stdout, "stopped")
	return exitOK
}
