package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/checktest"
	"github.com/agentready/agentready/internal/testing/fixture"
)

// ScriptPath is AFDocs's CLI, relative to the repository root, once
// `npm ci --prefix bench/afdocs` has installed it.
const ScriptPath = "bench/afdocs/node_modules/afdocs/bin/afdocs.mjs"

// Fact is one AFDocs check and the agentready check that judges the same
// thing (docs/checks.md, "Read suite"); Ours is "" when nothing does.
type Fact struct {
	AFDocs, Ours string
}

// Facts are AFDocs 0.22.2's 28 checks in the order it runs them. The
// llms.txt file itself is check 1.1 of the 48; the per-page facts are the
// read suite's R.1–R.20.
var Facts = []Fact{
	{"llms-txt-exists", "1.1"},
	{"llms-txt-valid", "1.1"},
	{"llms-txt-size", "1.1"},
	{"llms-txt-links-resolve", "R.11"},
	{"llms-txt-links-markdown", "1.1"},
	{"llms-txt-directive-html", "R.13"},
	{"llms-txt-directive-md", "R.15"},
	{"markdown-url-support", "R.5"},
	{"content-negotiation", "R.6"},
	{"rendering-strategy", "R.4"},
	{"page-size-markdown", "R.2"},
	{"page-size-html", "R.1"},
	{"page-size-transfer", "R.1"},
	{"content-start-position", "R.3"},
	{"single-fetch-completeness", "R.4"},
	{"tabbed-content-serialization", "R.18"},
	{"section-header-quality", "R.17"},
	{"markdown-code-fence-validity", "R.14"},
	{"markdown-link-portability", "R.16"},
	{"embedded-data-serialization", "R.19"},
	{"http-status-codes", "R.8"},
	{"redirect-behavior", "R.9"},
	{"llms-txt-coverage", "R.12"},
	{"markdown-content-parity", "R.7"},
	{"cache-header-hygiene", "R.10"},
	{"auth-gate-detection", "R.8"},
	{"auth-alternative-access", "R.20"},
	{"bot-protection-interference", "R.8"},
}

// Mode is one way of running AFDocs: a name for the table and the flags.
type Mode struct {
	Name string
	Args []string
}

// Modes are AFDocs's defaults and the fastest its flags allow: the request
// delay's minimum is 0 and the concurrency's maximum 100 (its
// validateRunnerOptions). Every other option stays at its default; the
// network context is named so that CI=true in the environment does not
// change AFDocs's bot-protection finding between a laptop and CI.
var Modes = []Mode{
	{Name: "AFDocs defaults (200 ms delay, 3 at a time)", Args: nil},
	{Name: "AFDocs fastest (--request-delay 0 --max-concurrency 100)", Args: []string{"--request-delay", "0", "--max-concurrency", "100"}},
}

// Config says how to run the comparison.
type Config struct {
	Node   string        // node binary
	Script string        // AFDocs's bin/afdocs.mjs
	Runs   int           // runs per tool and site (median)
	Delay  time.Duration // latency the fixture server adds to every response
	Modes  []Mode        // the AFDocs runs; its verdicts are the first mode's
	// Timeout bounds one AFDocs run (default 5 min: a site whose pages
	// trickle costs it 4 × its 15 s request timeout per page).
	Timeout time.Duration
}

// AFDocsReport is the part of AFDocs's JSON output the comparison reads.
// Each result's check id is "id" and its verdict "status" (pass, warn,
// fail, skip or error); the run's own request count is
// requestSummary.requests.
type AFDocsReport struct {
	URL     string `json:"url"`
	Results []struct {
		ID       string `json:"id"`
		Category string `json:"category"`
		Status   string `json:"status"`
		Message  string `json:"message"`
	} `json:"results"`
	TestedPages    int `json:"testedPages"`
	RequestSummary struct {
		Requests int `json:"requests"`
	} `json:"requestSummary"`
}

// Status is AFDocs's verdict of check id ("" when it did not report it).
func (r *AFDocsReport) Status(id string) string {
	for _, c := range r.Results {
		if c.ID == id {
			return c.Status
		}
	}
	return ""
}

// Measure is one tool's cost on one site: the median of the runs.
type Measure struct {
	Wall     time.Duration
	Requests int // requests the fixture server received
	// Own is the tool's own count: AFDocs's requestSummary.requests, which
	// counts a fetch that followed redirects once where the server saw
	// each hop; the engine's Stats.Requests for agentready.
	Own   int
	Pages int // pages the tool sampled (AFDocs's testedPages, the read suite's pages)
}

// SiteResult is what both tools said about one site.
type SiteResult struct {
	Name   string
	AFDocs []*AFDocsReport // per mode, the first run's
	Ours   *report.Result  // the first run's
	Cost   []Measure       // per mode, then agentready last
}

// Compare runs every mode of AFDocs and agentready over each site, Runs
// times each, one after another so that neither tool's runs slow the other's.
// progress, when not nil, hears one line per run.
func Compare(ctx context.Context, cfg Config, dirs []string, progress func(string)) ([]SiteResult, error) {
	if progress == nil {
		progress = func(string) {}
	}
	var out []SiteResult
	for _, dir := range dirs {
		sr := SiteResult{Name: filepath.Base(dir), AFDocs: make([]*AFDocsReport, len(cfg.Modes))}
		for i, m := range cfg.Modes {
			var ms []Measure
			for run := 0; run < cfg.Runs; run++ {
				rep, me, err := measureAFDocs(ctx, cfg, dir, m)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", sr.Name, m.Name, err)
				}
				if run == 0 {
					sr.AFDocs[i] = rep
				}
				progress(fmt.Sprintf("%s: %s: %s, %d requests (own count %d)", sr.Name, m.Name, me.Wall.Round(time.Millisecond), me.Requests, me.Own))
				ms = append(ms, me)
			}
			sr.Cost = append(sr.Cost, median(ms))
		}
		var ms []Measure
		for run := 0; run < cfg.Runs; run++ {
			res, me, err := measureOurs(ctx, cfg, dir)
			if err != nil {
				return nil, fmt.Errorf("%s, agentready: %w", sr.Name, err)
			}
			if run == 0 {
				sr.Ours = res
			}
			progress(fmt.Sprintf("%s: agentready: %s, %d requests (own count %d)", sr.Name, me.Wall.Round(time.Millisecond), me.Requests, me.Own))
			ms = append(ms, me)
		}
		sr.Cost = append(sr.Cost, median(ms))
		out = append(out, sr)
	}
	return out, nil
}

// startSite serves dir afresh, so its request log holds one run's requests.
func startSite(cfg Config, dir string) (*fixture.Site, error) {
	var opts []fixture.Option
	if cfg.Delay > 0 {
		opts = append(opts, fixture.WithDelay(cfg.Delay))
	}
	return fixture.Start(dir, opts...)
}

// measureAFDocs runs AFDocs once in mode m against a fresh server for dir.
func measureAFDocs(ctx context.Context, cfg Config, dir string, m Mode) (*AFDocsReport, Measure, error) {
	site, err := startSite(cfg, dir)
	if err != nil {
		return nil, Measure{}, err
	}
	defer site.Close()
	start := time.Now()
	rep, err := RunAFDocs(ctx, cfg, site.URL, m.Args)
	wall := time.Since(start)
	if err != nil {
		return nil, Measure{}, err
	}
	return rep, Measure{Wall: wall, Requests: len(site.Hits()), Own: rep.RequestSummary.Requests, Pages: rep.TestedPages}, nil
}

// RunAFDocs runs `afdocs check url --format json` plus args and parses what
// it prints. AFDocs exits 1 when any check fails, so the exit status is not
// an error; output that is not its JSON report is.
//
// AFDocs takes http:// and loopback URLs as they are (it only refuses the
// ports on the WHATWG fetch bad-port list, which the ephemeral ports of the
// fixture servers are not on), so no flag is needed for the fixture sites.
// It runs in an empty directory because it reads agent-docs.config.yml from
// the working directory or any parent.
func RunAFDocs(ctx context.Context, cfg Config, url string, args []string) (*AFDocsReport, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wd, err := os.MkdirTemp("", "afdocs-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(wd)
	argv := append([]string{cfg.Script, "check", url, "--format", "json", "--network-context", "developer-machine"}, args...)
	cmd := exec.CommandContext(ctx, cfg.Node, argv...)
	cmd.Dir = wd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exitErr) && exitErr.ExitCode() == 1) {
		return nil, fmt.Errorf("%s %s: %w: %s", cfg.Node, strings.Join(argv, " "), runErr, tail(stderr.String()))
	}
	var rep AFDocsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Results) == 0 {
		return nil, fmt.Errorf("AFDocs printed no JSON report (%v): %s %s", err, tail(stdout.String()), tail(stderr.String()))
	}
	return &rep, nil
}

// tail is the end of a command's output, enough to say why it failed.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 800 {
		s = "…" + s[len(s)-800:]
	}
	return s
}

// measureOurs scans a fresh server for dir with the engine as the fixture
// tests run it (checktest.Scanner: loopback allowed, 20 s deadline).
func measureOurs(ctx context.Context, cfg Config, dir string) (*report.Result, Measure, error) {
	site, err := startSite(cfg, dir)
	if err != nil {
		return nil, Measure{}, err
	}
	defer site.Close()
	start := time.Now()
	res, st, err := checktest.Scanner(20*time.Second).ScanWithStats(ctx, site.URL, nil)
	wall := time.Since(start)
	if err != nil {
		return nil, Measure{}, err
	}
	me := Measure{Wall: wall, Requests: len(site.Hits()), Own: st.Requests}
	if res.Read != nil {
		me.Pages = len(res.Read.Pages)
	}
	return res, me, nil
}

// median takes each field's median on its own (for the wall time,
// benchkit.Pct's: with an even number of runs, the lower middle one).
func median(ms []Measure) Measure {
	walls := make([]time.Duration, len(ms))
	reqs := make([]int, len(ms))
	own := make([]int, len(ms))
	pages := make([]int, len(ms))
	for i, m := range ms {
		walls[i], reqs[i], own[i], pages[i] = m.Wall, m.Requests, m.Own, m.Pages
	}
	slices.Sort(reqs)
	slices.Sort(own)
	slices.Sort(pages)
	mid := len(ms) / 2
	return Measure{Wall: benchkit.Pct(walls, 0.5), Requests: reqs[mid], Own: own[mid], Pages: pages[mid]}
}

// OurStatus is agentready's verdict of check id: one of the 48, or a read
// check (R.n). It is "" when the report has no such check.
func OurStatus(res *report.Result, id string) string {
	var c report.Check
	var ok bool
	if strings.HasPrefix(id, "R.") {
		c, ok = res.ReadCheck(id)
	} else {
		c, ok = res.Check(id)
	}
	if !ok {
		return ""
	}
	return string(c.Status)
}

// agree says whether two verdicts say the same: AFDocs's warn is our
// partial and its skip our na.
func agree(theirs, ours string) bool {
	switch theirs {
	case "warn":
		return ours == string(report.Partial)
	case "skip":
		return ours == string(report.NA)
	}
	return theirs == ours
}

// cell is one site's verdicts side by side, in bold when they disagree.
// A many-to-one row (several AFDocs checks judged by one of ours) can
// disagree by design; the bold only points at where to look.
func cell(theirs, ours string, covered bool) string {
	t, o := theirs, ours
	if t == "" {
		t = "—"
	}
	if !covered {
		return t + " · n/c"
	}
	if o == "" {
		o = "—"
	}
	s := t + " · " + o
	if theirs != "" && ours != "" && !agree(theirs, ours) {
		s = "**" + s + "**"
	}
	return s
}

// WriteTables prints the verdict table and the cost table.
func WriteTables(w io.Writer, cfg Config, results []SiteResult) {
	fmt.Fprint(w, "| AFDocs check | agentready |")
	for _, r := range results {
		fmt.Fprintf(w, " %s |", r.Name)
	}
	fmt.Fprint(w, "\n|---|---|")
	for range results {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, f := range Facts {
		ours := f.Ours
		if ours == "" {
			ours = "not covered"
		}
		fmt.Fprintf(w, "| `%s` | %s |", f.AFDocs, ours)
		for _, r := range results {
			var theirs string
			if len(r.AFDocs) > 0 && r.AFDocs[0] != nil {
				theirs = r.AFDocs[0].Status(f.AFDocs)
			}
			var o string
			if f.Ours != "" && r.Ours != nil {
				o = OurStatus(r.Ours, f.Ours)
			}
			fmt.Fprintf(w, " %s |", cell(theirs, o, f.Ours != ""))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each cell is AFDocs's verdict · agentready's (pass/warn/fail/skip · pass/partial/fail/na); bold where they differ (warn = partial, skip = na); n/c: no agentready check covers it; —: no verdict.")
	for _, r := range results {
		for i := 1; i < len(r.AFDocs); i++ {
			if d := verdictDiff(r.AFDocs[0], r.AFDocs[i]); d != "" {
				fmt.Fprintf(w, "\n%s: AFDocs's verdicts differ between %q and %q: %s.\n", r.Name, cfg.Modes[0].Name, cfg.Modes[i].Name, d)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "| site |")
	for _, m := range cfg.Modes {
		fmt.Fprintf(w, " %s: wall / requests / pages |", m.Name)
	}
	fmt.Fprintln(w, " agentready (48 checks + read suite): wall / requests / pages |")
	fmt.Fprint(w, "|---|")
	for range len(cfg.Modes) + 1 {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range results {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, c := range r.Cost {
			req := fmt.Sprint(c.Requests)
			if c.Own != c.Requests {
				req += fmt.Sprintf(" (own count %d)", c.Own)
			}
			fmt.Fprintf(w, " %s / %s / %d |", c.Wall.Round(time.Millisecond), req, c.Pages)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Requests are what the fixture server received; where the tool's own count differs it follows in brackets (AFDocs's requestSummary.requests counts a redirected fetch once, the server each hop). Pages: AFDocs's testedPages, the read suite's sampled pages.")
}

// verdictDiff lists the checks whose AFDocs verdicts differ between two
// runs ("" when none do): its page sample is random by default, so a site
// with more pages than it tests can be judged on other pages each run.
func verdictDiff(a, b *AFDocsReport) string {
	if a == nil || b == nil {
		return ""
	}
	var d []string
	for _, f := range Facts {
		if x, y := a.Status(f.AFDocs), b.Status(f.AFDocs); x != y {
			d = append(d, fmt.Sprintf("%s %s → %s", f.AFDocs, x, y))
		}
	}
	return strings.Join(d, ", ")
}

// MeasuredNote is what benchkit.Measured appends to its line (date,
// platform, Go) to say where and with what the numbers were taken: Node and
// AFDocs's version, the load average, and which run each figure comes from.
func MeasuredNote(ctx context.Context, cfg Config) string {
	load := benchkit.LoadAverage(3)
	nodeVersion := "node version unknown"
	if b, err := exec.CommandContext(ctx, cfg.Node, "--version").Output(); err == nil {
		nodeVersion = "Node " + strings.TrimSpace(string(b))
	}
	afdocsVersion := "?"
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(cfg.Script)), "package.json")); err == nil {
		var p struct{ Version string }
		if json.Unmarshal(b, &p) == nil {
			afdocsVersion = p.Version
		}
	}
	startup := "?"
	if d, err := Startup(ctx, cfg); err == nil {
		startup = d.Round(time.Millisecond).String()
	}
	delay := "no added latency"
	if cfg.Delay > 0 {
		delay = fmt.Sprintf("every response delayed %s", cfg.Delay)
	}
	return fmt.Sprintf(", AFDocs %s on %s; load average %s (1, 5, 15 min) at the end of the runs; fixture sites on loopback over HTTP/1.1, %s; %d run(s) per tool and site: the verdicts are the first run's, wall times, requests and pages the median. AFDocs's wall times include starting Node and loading AFDocs (afdocs --version: %s); agentready runs in process",
		afdocsVersion, nodeVersion, load, delay, cfg.Runs, startup)
}

// Startup is how long node takes to start and load AFDocs's CLI, which
// imports every check (afdocs --version), the median of three: the part of
// AFDocs's wall time that is not the scan, which agentready, running in
// process here, does not pay.
func Startup(ctx context.Context, cfg Config) (time.Duration, error) {
	var ds []time.Duration
	for range 3 {
		start := time.Now()
		if err := exec.CommandContext(ctx, cfg.Node, cfg.Script, "--version").Run(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	return benchkit.Pct(ds, 0.5), nil
}
