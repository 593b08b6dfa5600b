// Command agentready scans a website (or a codebase) for AI-agent readiness,
// and serves the API. `agentready help`, or --help after any command, prints
// every command and flag (the usage constant below).
//
// Exit codes: 0 done, 1 --min-level or --min-score not reached, 2 usage error,
// 3 site unreachable.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/browser"
)

const (
	exitOK          = 0
	exitBelowTarget = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitScanFailed  = 4   // a bug in the scanner, not the caller's input
	exitCanceled    = 130 // interrupted (SIGINT), as shells report it
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is the help of every command; `agentready help` and --help after any
// command print it. A test keeps it naming every flag of serve.
const usage = `agentready — how ready is a website for AI agents?

Usage:
  agentready scan <url> [flags]    scan a site (48 checks, levels 1–4)
  agentready repo <path> [flags]   the 10 level-5 checks over a local codebase
  agentready checks [--json]       list the check catalog
  agentready tools [--format F]    the MCP tool definitions (F: mcp, openai, anthropic)
  agentready keygen NAME           a new API key and its AGENTREADY_API_KEYS entry
  agentready serve [flags]         run the API service (edge + origin)
  agentready healthcheck [flags]   exit 0 when a running serve answers GET /healthz with 200
  agentready webhook verify        check a captured monitor delivery's signatures
  agentready survey --in LIST --out DIR   scan a whole list of sites into an adoption report
  agentready survey merge DIR... --out DIR  add up a survey's shards or workers (docs/survey.md)
  agentready help                  show this help (so does --help after any command)

Scan flags:
  --json             print the report as the API's JSON (ScanResult)
  --timeout D        whole-scan deadline (default 20s)
  --min-level N      exit 1 unless the site reaches level N (0–3)
  --min-score N      exit 1 unless the score is at least N (0–100)
  --allow-private    allow loopback and private-network targets and any port
                     (the default for the CLI, so you can scan your dev server)
  --no-private       refuse loopback/private addresses and ports other than 80/443,
                     as the hosted service does
  --repo PATH        also run the 10 level-5 checks over the codebase at PATH
                     (levels[] then includes level 5)
  --recommend        end with the next steps: every fail and partial check in the order
                     that raises the level soonest, with its effort and a starter to
                     publish; with --json, print that plan (as the MCP tool
                     get_recommendations returns it) instead of the report
  --render           also load the homepage in headless Chromium (CHROME_PATH or the
                     PATH) and end with what agents that do not run JavaScript miss:
                     words, headings, links and JSON-LD present only after rendering,
                     console errors and the WebMCP tools the page registers at run time
  Cloud-metadata, link-local and multicast addresses are always refused.
  A bare host (example.com) is scanned over https; an explicit http:// is kept.

Repo flags:
  --format F         text (default), json, sarif (SARIF 2.1.0 for code scanning) or junit
  --json             same as --format json
  --min-level 5      exit 1 unless level 5 is reached (half of the applicable checks pass)

Serve flags:
  --addr HOST:PORT   listen address (default 127.0.0.1:8080; env AGENTREADY_ADDR)
  --data DIR         directory of the embedded state (default ./data; env AGENTREADY_DATA)
  --allow-private    let the service scan loopback and private addresses; local testing
                     only (env AGENTREADY_ALLOW_PRIVATE=1)
  --allow LIST       let the service reach exactly these non-public addresses instead,
                     comma-separated: an IP, a CIDR, or IP:port (env AGENTREADY_ALLOW)
  --cache-ttl D      how long a scan result is served from the cache (default 10m;
                     env AGENTREADY_CACHE_TTL)
  --drain D          on SIGTERM, how long in-flight requests may finish (default 20s;
                     env AGENTREADY_DRAIN)
  --edge-wasm FILE   the edge compiled to WebAssembly (make wasm), hosted with wazero in
                     front of the origin (default bin/edge.wasm; env AGENTREADY_EDGE_WASM);
                     --edge-wasm '' runs the edge natively
  --role R           all (default: edge and origin in one process), origin (the origin
                     alone on --addr) or edge (the edge alone, in front of --origins);
                     split roles need AGENTREADY_TOKEN_KEYS and AGENTREADY_EDGE_SECRET set
                     alike everywhere (env AGENTREADY_ROLE; docs/deploy.md)
  --origins URLS     role edge: the origins' base URLs, comma-separated; requests are
                     spread over those that answer their /healthz (env AGENTREADY_ORIGINS)
  --metrics-addr A   serve the origin's Prometheus metrics (GET /metrics) on this address
                     of its own, such as 127.0.0.1:9090; never on the public address
                     (default: not served; env AGENTREADY_METRICS_ADDR)
  REDIS_URL selects the shared Redis state; docs/edge.md lists the other settings.

Healthcheck flags:
  --url U            what to ask (default /healthz on AGENTREADY_ADDR, a wildcard host
                     asked on loopback)
  --timeout D        one request (default 3s)
  --wait D           keep asking until a 200 or D has passed (default: ask once)

Survey flags (docs/survey.md):
  --in LIST          one domain or URL per line, or a ranked CSV (rank,domain); blank
                     lines and # comments ignored, duplicates and invalid lines listed
                     in DIR/skipped.ndjson
  --out DIR          results.ndjson, adoption.json, report.html, report.md; run the
                     same command again to continue a survey that was stopped
  --concurrency N    sites scanned at once (default 32 per CPU), one per registrable
                     domain at a time
  --timeout D        deadline of each site's scan (default 20s)
  --shard I/N        survey only the sites whose registrable domain hashes to I of N
                     (0 ≤ I < N); merge the shards' directories afterwards
  --queue URL        be one of any number of workers pulling the sites from a survey
                     kept in Redis (REDIS_URL's syntax; env AGENTREADY_SURVEY_QUEUE),
                     each with its own --out; a worker given --in loads the list once;
                     merge the workers' directories afterwards
  --survey NAME      with --queue: the survey's name in Redis (default: the list's SHA-256)
  --worker NAME      with --queue: this worker's name (default: hostname-pid-random, kept in DIR)
  --contact URL      where site operators can reach you (https:// or mailto:), named
                     in the User-Agent
  --allow-private    allow loopback and private addresses and any port (a survey
                     refuses them by default, as the hosted service does)
  --allow LIST       admit exactly these addresses: IP, CIDR or IP:port, comma-separated
                     (env AGENTREADY_ALLOW)
  Exits 130 when interrupted (the same command continues), 4 when writing failed.

Webhook verify flags (docs/webhooks.md):
  --secret S         the monitor's whsec_ secret (better: env AGENTREADY_WEBHOOK_SECRET,
                     which stays out of shell history)
  --header 'N: V'    a header of the delivery (repeatable)
  --headers FILE     the delivery's headers as "Name: value" lines (a request dump or
                     curl -D output; the request or status line is skipped)
  --body FILE        the raw body (default: standard input)
  --now T            check as of T (RFC 3339 or Unix seconds), for a capture older
                     than the 5-minute window
  Exits 0 and prints "valid: <type> <id> for <url> (score N, level L)" when every
  signature it carries verifies; 1 with the reason otherwise.

Exit codes: 0 done, 1 --min-level/--min-score not reached (webhook verify: not valid),
2 usage error, 3 site unreachable.
`

// commands are the subcommands; each parses its own flags.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"scan":        scanCmd,
	"repo":        repoCmd,
	"checks":      checksCmd,
	"tools":       toolsCmd,
	"keygen":      keygenCmd,
	"serve":       serveCmd,
	"healthcheck": healthcheckCmd,
	"webhook":     webhookCmd,
	"survey":      surveyCmd,
	"help":        func(_ []string, stdout, _ io.Writer) int { fmt.Fprint(stdout, usage); return exitOK },
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" {
		name = "help"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "agentready: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	return cmd(args[1:], stdout, stderr)
}

// wantsHelp: -h, -help or --help anywhere before a "--" asks for the help,
// which is an answer (stdout, exit 0), not a usage error.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

type scanFlags struct {
	json         bool
	timeout      time.Duration
	minLevel     int
	minScore     int
	allowPrivate bool
	noPrivate    bool
	repo         string
	recommend    bool
	render       bool
}

// parseInterspersed lets flags come before or after the URL.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	return pos, nil
}

func scanCmd(args []string, stdout, stderr io.Writer) int {
	var f scanFlags
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.BoolVar(&f.json, "json", false, "")
	fs.DurationVar(&f.timeout, "timeout", 20*time.Second, "")
	fs.IntVar(&f.minLevel, "min-level", -1, "")
	fs.IntVar(&f.minScore, "min-score", -1, "")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "")
	fs.BoolVar(&f.noPrivate, "no-private", false, "")
	fs.StringVar(&f.repo, "repo", "", "")
	fs.BoolVar(&f.recommend, "recommend", false, "")
	fs.BoolVar(&f.render, "render", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintf(stderr, "agentready scan: give exactly one URL (got %d)\n", len(pos))
		return exitUsage
	case f.allowPrivate && f.noPrivate:
		fmt.Fprintln(stderr, "agentready scan: --allow-private and --no-private contradict each other")
		return exitUsage
	case f.minLevel > 3:
		fmt.Fprintln(stderr, "agentready scan: --min-level must be 0–3 (level 4 is reported as the indexable score)")
		return exitUsage
	case f.minScore > 100:
		fmt.Fprintln(stderr, "agentready scan: --min-score must be 0–100")
		return exitUsage
	case f.timeout <= 0:
		fmt.Fprintln(stderr, "agentready scan: --timeout must be positive")
		return exitUsage
	}
	private := !f.noPrivate
	policy := fetch.AddressPolicy{AllowPrivate: private, AllowAnyPort: private}
	opts := engine.Options{Deadline: f.timeout, Fetch: fetch.Config{Policy: policy}}
	if f.render {
		// The browser's requests pass the same address policy as the scanner's.
		pool := browser.New(browser.Config{Tabs: 1, Policy: policy})
		defer pool.Close()
		if h := pool.Health(); h.State == "unavailable" {
			fmt.Fprintf(stderr, "agentready scan --render: %s\n", h.Message)
			return exitUsage
		}
		opts.Renderer = pool.Renderer()
	}
	sc := engine.New(opts)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	prog := newProgress(stderr, !f.json)
	res, stats, err := sc.ScanWithStats(ctx, pos[0], prog.event)
	prog.done()
	if err != nil {
		var se *apierr.Error
		if !errors.As(err, &se) {
			se = &apierr.Error{Code: apierr.Internal, Message: "the scan failed unexpectedly (a bug in the scanner); report the URL if it keeps failing"}
		}
		if f.json {
			writeJSON(stdout, apierr.New(se.Code, se.Message))
		} else {
			fmt.Fprintf(stderr, "agentready: %s\n", se.Message)
		}
		switch se.Code {
		case apierr.InvalidURL:
			return exitUsage
		case apierr.SiteUnreachable:
			return exitUnreachable
		case apierr.ScanCanceled:
			return exitCanceled
		}
		return exitScanFailed
	}
	if f.repo != "" {
		if err := withRepo(ctx, res, f.repo); err != nil {
			fmt.Fprintf(stderr, "agentready: --repo: %v\n", err)
			return exitUsage
		}
	}
	var next *advice.Plan
	if f.recommend {
		p := advice.For(res)
		next = &p
	}
	switch {
	case f.json && next != nil:
		writeJSON(stdout, next)
	case f.json:
		writeJSON(stdout, res)
	default:
		render(stdout, res, stats, next, colorOK(stdout))
	}
	if (f.minLevel >= 0 && res.CurrentLevel < f.minLevel) || (f.minScore >= 0 && res.Score.Value < f.minScore) {
		if !f.json {
			fmt.Fprintf(stderr, "agentready: target not reached (level %d, score %d; wanted level ≥ %d, score ≥ %d)\n", res.CurrentLevel, res.Score.Value, max(f.minLevel, 0), max(f.minScore, 0))
		}
		return exitBelowTarget
	}
	return exitOK
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func colorOK(w io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return isTTY(w) && os.Getenv("TERM") != "dumb"
}

// progress draws a live line on a terminal's stderr.
type progress struct {
	w       io.Writer
	on      bool
	checked int
	total   int
}

func newProgress(w io.Writer, want bool) *progress {
	return &progress{w: w, on: want && isTTY(w), total: 48}
}

func (p *progress) event(e engine.Event) {
	if !p.on {
		return
	}
	switch e.Kind {
	case engine.EventStarted:
		fmt.Fprintf(p.w, "\r\033[Kscanning %s …", e.URL)
	case engine.EventGathered:
		fmt.Fprintf(p.w, "\r\033[Kfetched %d URLs, checking …", e.Requests)
	case engine.EventCheckFinished:
		p.checked++
		fmt.Fprintf(p.w, "\r\033[K[%2d/%d] %s %s", p.checked, p.total, e.Check.ID, e.Check.Name)
	}
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// signalsHeading titles the identity and commerce signals in text output.
const signalsHeading = "Identity and commerce (not scored)"

func render(w io.Writer, r *report.Result, st *engine.Stats, next *advice.Plan, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\033[" + code + "m" + s + "\033[0m"
	}
	sym := map[report.Status]string{report.Pass: paint("32", "✓"), report.Partial: paint("33", "◐"), report.Fail: paint("31", "✗"), report.NA: paint("90", "–")}
	s := r.Score
	fmt.Fprintf(w, "%s\n", paint("1", "Agent readiness of "+r.URL))
	fmt.Fprintf(w, "Score %d/100 (grade %s) · Level %d %s · Indexable %d/100\n", s.Value, s.Grade, r.CurrentLevel, s.LevelName, s.Indexable.Value)
	fmt.Fprintf(w, "%d passed, %d partial, %d failed, %d not applicable\n", s.Passed, s.Partial, s.Failed, s.NA)
	for _, lp := range r.Levels {
		fmt.Fprintf(w, "\n%s\n", paint("1", fmt.Sprintf("Level %d · %s — %d/%d passed", lp.Level.Number, lp.Level.Name, lp.Passed, lp.Total-lp.NA)))
		for _, c := range r.Checks {
			if c.Level != lp.Level.Number {
				continue
			}
			fmt.Fprintf(w, "  %s %-5s %-28s %s\n", sym[c.Status], c.ID, c.Name, c.Message)
			if c.Recommendation != "" {
				fmt.Fprintf(w, "          %s %s\n", paint("36", "→"), c.Recommendation)
			}
		}
	}
	if len(r.Signals) > 0 {
		// Below the levels and apart from them: signals never move the score.
		fmt.Fprintf(w, "\n%s\n", paint("1", signalsHeading))
		for _, sg := range r.Signals {
			fmt.Fprintf(w, "  %s %-10s %-36s %s\n", sym[sg.Status], sg.ID, sg.Name, sg.Message)
			if sg.Recommendation != "" {
				fmt.Fprintf(w, "          %s %s\n", paint("36", "→"), sg.Recommendation)
			}
		}
	}
	if r.Rendered != nil {
		renderMissed(w, r.Rendered, paint)
	}
	if next != nil {
		renderNext(w, next, paint, sym)
	}
	if st != nil {
		fmt.Fprintf(w, "\n%d requests in %d rounds, %s\n", st.Requests, st.Rounds, st.Duration.Round(time.Millisecond))
	}
}
