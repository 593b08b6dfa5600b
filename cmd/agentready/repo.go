package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/repo"
	"github.com/agentready/agentready/engine/report"
)

func ruleInfos(level int) []report.RuleInfo {
	var out []report.RuleInfo
	for _, c := range checks.All() {
		if level == 0 || c.Level == level {
			out = append(out, report.RuleInfo{ID: c.ID, Name: c.Name, LooksFor: c.LooksFor, Rule: c.Rule, Fix: c.Fix, Level: c.Level})
		}
	}
	return out
}

func repoCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("repo", "repo", stderr)
	asJSON := fs.Bool("json", false, "")
	format := fs.String("format", "text", "")
	minLevel := fs.Int("min-level", -1, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if *asJSON {
		*format = "json"
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintf(stderr, "agentready repo: give exactly one repository path (got %d)\n", len(pos))
		return exitUsage
	case *format != "text" && *format != "json" && *format != "sarif" && *format != "junit":
		fmt.Fprintf(stderr, "agentready repo: --format must be text, json, sarif or junit (got %q)\n", *format)
		return exitUsage
	case *minLevel != -1 && *minLevel != 0 && *minLevel != 5:
		fmt.Fprintln(stderr, "agentready repo: --min-level is 5 (the agent-native level, reached when at least half of the applicable level-5 checks pass) or 0")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := engine.ScanRepo(ctx, pos[0], repo.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "agentready repo: %v\n", err)
		return exitUsage
	}
	if code := writeRepo(stdout, stderr, res, *format); code != exitOK {
		return code
	}
	if *minLevel == 5 && !res.Reached() {
		if *format == "text" {
			fmt.Fprintln(stderr, "agentready: level 5 not reached (fewer than half of the applicable level-5 checks pass)")
		}
		return exitBelowTarget
	}
	return exitOK
}

func writeRepo(stdout, stderr io.Writer, res *repo.Result, format string) int {
	switch format {
	case "json":
		writeJSON(stdout, res)
	case "sarif":
		b, err := report.SARIF(res.Checks, ruleInfos(5), "1.0.0", res.Path)
		if err != nil {
			fmt.Fprintln(stderr, "agentready repo:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
	case "junit":
		b, err := report.JUnit("agentready repo "+res.Path, res.Checks)
		if err != nil {
			fmt.Fprintln(stderr, "agentready repo:", err)
			return 1
		}
		stdout.Write(b)
	default:
		renderRepo(stdout, res, colorOK(stdout))
	}
	return exitOK
}

func renderRepo(w io.Writer, r *repo.Result, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\033[" + code + "m" + s + "\033[0m"
	}
	sym := map[report.Status]string{report.Pass: paint("32", "✓"), report.Partial: paint("33", "◐"), report.Fail: paint("31", "✗"), report.NA: paint("90", "–")}
	fmt.Fprintf(w, "%s\n", paint("1", "Agent-native readiness of "+r.Path))
	reached := "not reached"
	if r.Reached() {
		reached = "reached"
	}
	for _, lp := range r.Levels {
		fmt.Fprintf(w, "Level 5 · Agent-Native — %d/%d passed, %s\n\n", lp.Passed, lp.Total-lp.NA, reached)
	}
	for _, c := range r.Checks {
		at := ""
		if c.FoundAt != "" {
			at = "  (" + c.FoundAt + ")"
		}
		fmt.Fprintf(w, "  %s %-5s %-33s %s%s\n", sym[c.Status], c.ID, c.Name, c.Message, at)
		if c.Recommendation != "" {
			fmt.Fprintf(w, "          %s %s\n", paint("36", "→"), c.Recommendation)
		}
	}
	fmt.Fprintf(w, "\n%d files read in %s", r.Stats.Files, r.Stats.Elapsed)
	if skipped := r.Stats.Skipped.String(); skipped != "" {
		fmt.Fprintf(w, "; skipped %s", skipped)
	}
	fmt.Fprintln(w)
}

// withRepo adds the level-5 block of a repository scan to a web report.
func withRepo(ctx context.Context, res *report.Result, path string) error {
	rr, err := engine.ScanRepo(ctx, path, repo.Options{Now: func() time.Time { return res.Timestamp }})
	if err != nil {
		return err
	}
	res.Checks = append(res.Checks, rr.Checks...)
	res.Levels = append(res.Levels, rr.Levels...)
	return nil
}
