// Command agentready scans a website (or a codebase) for AI-agent readiness,
// and serves the API. `agentready help` prints every command and flag;
// `agentready help COMMAND`, or --help after a command, prints that
// command's (topics below). exitCodes lists the exit codes, for the help
// and for the README (a test keeps them alike).
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
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/version"
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

// exitCodes is the one list of exit codes: the help ends with it, and the
// README and docs/ci.md show it (exitCodesMarkdown; make docs rewrites them).
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "done"},
	{exitBelowTarget, "the answer is no: --min-level or --min-score not reached (scan, repo), the delivery is not valid (webhook verify), no 200 (healthcheck); or serve could not start"},
	{exitUsage, "usage error: an unknown command or flag, a missing or bad argument or setting"},
	{exitUnreachable, "the site is unreachable, or not a public address and not allowed (scan)"},
	{exitScanFailed, "the scan failed, a bug: please report it (scan); the survey could not go on, run it again to continue (survey)"},
	{exitCanceled, "interrupted (Ctrl-C or SIGTERM); an interrupted survey continues when run again"},
}

// helpIntro heads the full help.
const helpIntro = "agentready — how ready is a website for AI agents?\n"

// topic is one command's help: its lines of the command list (a form and
// what it does) and its flags and notes, titled, or "" when it has none.
type topic struct {
	name  string
	forms [][2]string
	flags string
}

// topics are the commands in the order the help lists them; `commands`
// runs them (a test keeps the two alike).
var topics = []topic{
	{name: "scan", forms: [][2]string{{"agentready scan <url> [flags]", "scan a site (48 checks, levels 1–4)"}}, flags: `Scan flags:
  --json             print the report as the API's JSON (ScanResult)
  --timeout D        whole-scan deadline (default 20s)
  --min-level N      exit 1 unless the site reaches level N (0–3)
  --min-score N      exit 1 unless the score is at least N (0–100); with --profile
                     or --waivers, the score without the checks they take out
  --allow-private    allow loopback and private-network targets and any port
                     (the default for the CLI, so you can scan your dev server)
  --no-private       refuse loopback/private addresses and ports other than 80/443,
                     as the hosted service does
  --allow LIST       with --no-private: admit exactly these addresses, comma-separated:
                     an IP, a CIDR, or IP:port (env AGENTREADY_ALLOW)
  --repo PATH        also run the 10 level-5 checks over the codebase at PATH
                     (levels[] then includes level 5)
  --recommend        end with the next steps: every fail and partial check in the order
                     that raises the level soonest, with its effort and a starter to
                     publish; with --json, print that plan (as the MCP tool
                     get_recommendations returns it) instead of the report
  --pages N          how many pages the read suite samples from llms.txt and the sitemap
                     and reads one by one (the read checks R.1…; default 10, at most 50);
                     0 turns the read suite off
  --profile NAME     judge the site as this kind: content, docs, api, commerce or
                     application (default: the kind it declares in
                     /.well-known/agentready.json, else the kind detected); the
                     profile block, the --recommend order and the --min-score gate
                     change, never the checks or the score
  --waivers FILE     waive checks that do not apply to this site: a JSON file in the
                     format of /.well-known/agentready.json, {"profile": "docs",
                     "waivers": [{"check": "1.14", "reason": "…"}]}; its profile counts
                     as --profile unless that is given (docs/ci.md)
  --render           also load the homepage in headless Chromium (CHROME_PATH or the
                     PATH) and end with what agents that do not run JavaScript miss:
                     words, headings, links and JSON-LD present only after rendering,
                     console errors and the WebMCP tools the page registers at run time
  Cloud-metadata, link-local and multicast addresses are always refused.
  A bare host (example.com) is scanned over https; an explicit http:// is kept.
`},
	{name: "repo", forms: [][2]string{{"agentready repo <path> [flags]", "the 10 level-5 checks over a local codebase"}}, flags: `Repo flags:
  --format F         text (default), json, sarif (SARIF 2.1.0 for code scanning) or junit
  --json             same as --format json
  --min-level 5      exit 1 unless level 5 is reached (half of the applicable checks pass)
`},
	{name: "checks", forms: [][2]string{{"agentready checks [--json]", "list the check catalog"}}},
	{name: "tools", forms: [][2]string{{"agentready tools [--format F]", "the MCP tool definitions (F: mcp, openai, anthropic)"}}},
	{name: "keygen", forms: [][2]string{{"agentready keygen NAME", "a new API key and its AGENTREADY_API_KEYS entry"}}, flags: "Keygen:\n" + indent(wrap("NAME names the integration, such as acme-ci: "+edge.APIKeyNameRule+
		" (AGENTREADY_API_KEYS accepts no other name). Prints the key, for the integration, and its entry,"+
		" name:sha256hex, for AGENTREADY_API_KEYS (comma-separated).", 84), "  ")},
	{name: "serve", forms: [][2]string{{"agentready serve [flags]", "run the API service (edge + origin)"}}, flags: `Serve flags:
  --addr HOST:PORT   listen address (default 127.0.0.1:8080; env AGENTREADY_ADDR)
  --data DIR         directory of the embedded state (default ./data; env AGENTREADY_DATA)
  --allow-private    let the service scan loopback and private addresses; local testing
                     only (env AGENTREADY_ALLOW_PRIVATE=1)
  --allow LIST       let the service reach exactly these non-public addresses instead,
                     comma-separated: an IP, a CIDR, or IP:port (env AGENTREADY_ALLOW)
  --cache-ttl D      how long a scan result is served from the cache (default 10m;
                     env AGENTREADY_CACHE_TTL)
  --report-keep D    how long each scan's report stays readable at /report and
                     /api/report, as the site's latest and by its permanent link
                     (default 720h, 30 days; env AGENTREADY_REPORT_KEEP)
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
`},
	{name: "healthcheck", forms: [][2]string{{"agentready healthcheck [flags]", "exit 0 when a running serve answers GET /healthz with 200"}}, flags: `Healthcheck flags:
  --url U            what to ask (default /healthz on AGENTREADY_ADDR, a wildcard host
                     asked on loopback)
  --timeout D        one request (default 3s)
  --wait D           keep asking until a 200 or D has passed (default: ask once)
`},
	{name: "webhook", forms: [][2]string{{"agentready webhook verify", "check a captured monitor delivery's signatures"}}, flags: `Webhook verify flags (docs/webhooks.md):
  --secret S         the monitor's whsec_ secret (better: env AGENTREADY_WEBHOOK_SECRET,
                     which stays out of shell history)
  --header 'N: V'    a header of the delivery (repeatable)
  --headers FILE     the delivery's headers as "Name: value" lines (a request dump or
                     curl -D output; the request or status line is skipped)
  --body FILE        the raw body (default: standard input)
  --now T            check as of T (RFC 3339 or Unix seconds), for a capture older
                     than the 5-minute window
  Prints "valid: <type> <id> for <url> (score N, level L)" when every signature it
  carries verifies, else the reason.
`},
	{name: "survey", forms: [][2]string{
		{"agentready survey --in LIST --out DIR", "scan a whole list of sites into an adoption report"},
		{"agentready survey merge DIR... --out DIR", "add up a survey's shards or workers (docs/survey.md)"},
	}, flags: `Survey flags (docs/survey.md):
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
`},
	{name: "version", forms: [][2]string{{"agentready version", "this build's version (so does --version)"}}},
	{name: "help", forms: [][2]string{{"agentready help [command]", "this help, or one command's (so does --help after a command)"}}},
}

// usage is the full help: every command and flag, then the exit codes.
var usage = fullHelp()

func fullHelp() string {
	var b strings.Builder
	b.WriteString(helpIntro + "\nUsage:\n")
	for _, t := range topics {
		b.WriteString(t.formLines())
	}
	for _, t := range topics {
		if t.flags != "" {
			b.WriteString("\n" + t.flags)
		}
	}
	b.WriteString("\n" + exitCodesText())
	return b.String()
}

func (t topic) formLines() string {
	var b strings.Builder
	for _, f := range t.forms {
		fmt.Fprintf(&b, "  %-31s  %s\n", f[0], f[1])
	}
	return b.String()
}

func topicOf(name string) (topic, bool) {
	for _, t := range topics {
		if t.name == name {
			return t, true
		}
	}
	return topic{}, false
}

// commandHelp is what --help after the command prints: its forms, its
// flags, and the exit codes; help's own is the full help.
func commandHelp(name string) string {
	t, ok := topicOf(name)
	if !ok || name == "help" {
		return usage
	}
	s := "Usage:\n" + t.formLines()
	if t.flags != "" {
		s += "\n" + t.flags
	}
	return s + "\n" + exitCodesText()
}

// shortUsage follows a command's usage error: its forms, and where its
// help is, instead of every command's.
func shortUsage(name string) string {
	t, ok := topicOf(name)
	if !ok {
		return "Run 'agentready help' for the commands.\n"
	}
	var b strings.Builder
	for i, f := range t.forms {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		b.WriteString(lead + f[0] + "\n")
	}
	fmt.Fprintf(&b, "Run 'agentready %s --help' for its help.\n", name)
	return b.String()
}

// exitCodesText is the help's list of exit codes.
func exitCodesText() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitCodes {
		lines := wrap(e.meaning, 76)
		fmt.Fprintf(&b, "  %-5d%s\n", e.code, lines[0])
		for _, l := range lines[1:] {
			b.WriteString("       " + l + "\n")
		}
	}
	return b.String()
}

var flagWord = regexp.MustCompile(`--[a-z][a-z-]*`)

// exitCodesMarkdown is the README's and docs/ci.md's list of exit codes.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit code | meaning |\n|---|---|\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "| `%d` | %s |\n", e.code, flagWord.ReplaceAllString(e.meaning, "`$0`"))
	}
	return b.String()
}

// indent prefixes each line with in.
func indent(lines []string, in string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(in + l + "\n")
	}
	return b.String()
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

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
	"version":     versionCmd,
	"help":        helpCmd,
}

// commandNames lists the commands, for an unknown one's error.
func commandNames() string {
	names := make([]string, 0, len(topics))
	for _, t := range topics {
		names = append(names, t.name)
	}
	return strings.Join(names, ", ")
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s\nUsage:\n", helpIntro)
		for _, t := range topics {
			fmt.Fprint(stderr, t.formLines())
		}
		fmt.Fprintln(stderr, "\nRun 'agentready help' for every flag, or 'agentready COMMAND --help' for one command's.")
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "agentready: unknown command %q; the commands are %s (agentready help shows them)\n", args[0], commandNames())
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		fmt.Fprint(stdout, commandHelp(name))
		return exitOK
	}
	return cmd(args[1:], stdout, stderr)
}

// helpCmd prints the full help, or one command's.
func helpCmd(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
	case len(args) > 1:
		fmt.Fprintf(stderr, "agentready help: name one command (got %d)\n%s", len(args), shortUsage("help"))
		return exitUsage
	default:
		if _, ok := topicOf(args[0]); !ok {
			fmt.Fprintf(stderr, "agentready help: there is no command %q; the commands are %s\n", args[0], commandNames())
			return exitUsage
		}
		fmt.Fprint(stdout, commandHelp(args[0]))
	}
	return exitOK
}

// versionCmd prints this build's version (internal/version): the one
// /healthz, the MCP server card and the scanner's User-Agent name.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "agentready version: unexpected argument %q\n%s", args[0], shortUsage("version"))
		return exitUsage
	}
	fmt.Fprintf(stdout, "agentready %s\n", version.String())
	return exitOK
}

// flagSetSeen, when set (by tests), is given a command's flag set whenever
// its usage is printed, every flag defined by then.
var flagSetSeen func(*flag.FlagSet)

// newFlagSet is the flag set of the command topic (the name a user types,
// before any verb): a flag error is printed as "agentready NAME: …", then
// the command's forms and where its help is; not every command's help.
func newFlagSet(topic, name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(prefixWriter{w: stderr, prefix: "agentready " + name + ": "})
	fs.Usage = func() {
		if flagSetSeen != nil {
			flagSetSeen(fs)
		}
		fmt.Fprint(stderr, shortUsage(topic))
	}
	return fs
}

// prefixWriter starts every write with prefix: the flag package writes its
// error as one line.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
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
	allow        string
	repo         string
	recommend    bool
	render       bool
	pages        int
	profile      string
	waivers      string
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
	fs := newFlagSet("scan", "scan", stderr)
	fs.BoolVar(&f.json, "json", false, "")
	fs.DurationVar(&f.timeout, "timeout", 20*time.Second, "")
	fs.IntVar(&f.minLevel, "min-level", -1, "")
	fs.IntVar(&f.minScore, "min-score", -1, "")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "")
	fs.BoolVar(&f.noPrivate, "no-private", false, "")
	fs.StringVar(&f.allow, "allow", os.Getenv("AGENTREADY_ALLOW"), "")
	fs.StringVar(&f.repo, "repo", "", "")
	fs.BoolVar(&f.recommend, "recommend", false, "")
	fs.BoolVar(&f.render, "render", false, "")
	fs.IntVar(&f.pages, "pages", gather.DefaultReadPages, "")
	fs.StringVar(&f.profile, "profile", "", "")
	fs.StringVar(&f.waivers, "waivers", "", "")
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
	case f.pages < 0 || f.pages > engine.MaxReadPages:
		fmt.Fprintf(stderr, "agentready scan: --pages must be 0–%d (0 turns the read suite off)\n", engine.MaxReadPages)
		return exitUsage
	case f.profile != "" && !profile.Known(f.profile):
		fmt.Fprintf(stderr, "agentready scan: --%s\n", profile.ErrUnknown{}.Error())
		return exitUsage
	}
	judgeAs, waivers, msg := scanProfile(f.profile, f.waivers)
	if msg != "" {
		fmt.Fprintf(stderr, "agentready scan: %s\n", msg)
		return exitUsage
	}
	allow, err := fetch.ParseAllowList(f.allow)
	if err != nil {
		fmt.Fprintf(stderr, "agentready scan: --allow (AGENTREADY_ALLOW): %v\n", err)
		return exitUsage
	}
	private := !f.noPrivate
	// The allow-list matters with --no-private: otherwise every loopback
	// and private address is admitted anyway.
	policy := fetch.AddressPolicy{AllowPrivate: private, AllowAnyPort: private, Allow: allow}
	opts := engine.Options{Deadline: f.timeout, Fetch: fetch.Config{Policy: policy}, ReadPages: f.pages}
	if f.pages == 0 {
		opts.ReadPages = -1 // the read suite off
	}
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
	// With --profile or --waivers the caller said which checks apply.
	judged := judgeAs != "" || len(waivers) > 0
	if judged {
		// Known profile, checked above: Apply cannot fail.
		_ = profile.Apply(res, judgeAs, waivers)
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
	// Judged, the score the gate reads is the one without the checks that
	// do not apply (profile.score; Apply always sets res.Profile).
	gate, gateName := res.Score.Value, "score"
	if judged {
		gate, gateName = res.Profile.Score.Value, "score as "+res.Profile.ID
	}
	if (f.minLevel >= 0 && res.CurrentLevel < f.minLevel) || (f.minScore >= 0 && gate < f.minScore) {
		if !f.json {
			fmt.Fprintf(stderr, "agentready: target not reached (level %d, %s %d; wanted level ≥ %d, score ≥ %d)\n", res.CurrentLevel, gateName, gate, max(f.minLevel, 0), max(f.minScore, 0))
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
	if r.Profile != nil {
		renderProfile(w, r.Profile, paint)
	}
	if len(r.Interactions) > 0 {
		renderInteractions(w, r.Interactions, paint)
	}
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
	if r.Read != nil {
		renderRead(w, r.Read, paint, sym)
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
