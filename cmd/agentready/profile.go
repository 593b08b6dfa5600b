package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/parse/declaration"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

// scanProfile reads --profile and --waivers: the profile to judge the
// report as ("" for the declared or detected one) and the waivers of the
// file, as config waivers. The file's profile counts unless --profile is
// given. msg says what is wrong with the file ("" when nothing is): a CI
// config with a mistake must not pass as if it had none.
func scanProfile(flagProfile, file string) (as string, waivers []report.Waiver, msg string) {
	as = flagProfile
	if file == "" {
		return as, nil, ""
	}
	f, err := os.Open(file)
	if err != nil {
		return "", nil, "--waivers: " + err.Error()
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, declaration.MaxBytes+1))
	if err != nil {
		return "", nil, "--waivers: " + err.Error()
	}
	d, err := declaration.Parse(body, profile.Known, profile.KnownCheck)
	if err != nil {
		return "", nil, fmt.Sprintf("--waivers %s: %v", file, err)
	}
	if len(d.Problems) > 0 {
		return "", nil, fmt.Sprintf("--waivers %s: %s (profiles: %s; checks: 1.1–4.12 and R.1–%s)", file, strings.Join(d.Problems, "; "), strings.Join(report.Profiles, ", "), checks.Read()[len(checks.Read())-1].ID)
	}
	if as == "" {
		as = d.Profile
	}
	for _, w := range d.Waivers {
		waivers = append(waivers, report.Waiver{Check: w.Check, Reason: w.Reason, From: "config"})
	}
	return as, waivers, ""
}

// renderProfile is the text output's profile line: the kind the report is
// judged as, where that came from, its score as that kind, what does not
// apply and the score as each other kind.
func renderProfile(w io.Writer, p *report.Profile, paint func(code, s string) string) {
	how := map[string]string{"detected": "detected", "declared": "declared by the site", "requested": "requested"}[p.Source]
	fmt.Fprintf(w, "\n%s\n", paint("1", "Profile"))
	fmt.Fprintf(w, "  Judged as %s (%s", p.ID, how)
	if p.Source != "detected" && p.Detected != "" {
		fmt.Fprintf(w, "; detected: %s", p.Detected)
	}
	fmt.Fprintf(w, "). As %s: %d/100 (grade %s)\n", p.ID, p.Score.Value, p.Grade)
	if len(p.Evidence) > 0 {
		fmt.Fprintf(w, "  Evidence: %s\n", strings.Join(p.Evidence, "; "))
	}
	if len(p.DeclarationProblems) > 0 {
		fmt.Fprintf(w, "  Skipped in the site's /.well-known/agentready.json: %s\n", strings.Join(p.DeclarationProblems, "; "))
	}
	if len(p.NotApplicable) > 0 {
		fmt.Fprintf(w, "  Do not apply:\n")
		for _, n := range p.NotApplicable {
			fmt.Fprintf(w, "    %-5s %s (%s: %s)\n", n.ID, n.Name, n.By, n.Reason)
		}
	}
	if len(p.Others) > 0 {
		var o []string
		for _, x := range p.Others {
			o = append(o, fmt.Sprintf("%s %d (%s)", x.ID, x.Value, x.Grade))
		}
		fmt.Fprintf(w, "  As another kind: %s\n", strings.Join(o, ", "))
	}
}

// renderInteractions lists the findings that only show across checks.
func renderInteractions(w io.Writer, list []report.Interaction, paint func(code, s string) string) {
	fmt.Fprintf(w, "\n%s\n", paint("1", "Across checks"))
	for _, in := range list {
		fmt.Fprintf(w, "  %s %s (%s)\n", paint("33", "!"), in.Title, strings.Join(in.Checks, ", "))
		fmt.Fprintf(w, "          %s\n", in.Message)
		fmt.Fprintf(w, "          %s %s\n", paint("36", "→"), in.Fix)
	}
}

// renderRead is the read suite's summary: its score, each check, and the
// pages that failed something.
func renderRead(w io.Writer, r *report.Read, paint func(code, s string) string, sym map[report.Status]string) {
	if len(r.Pages) == 0 && r.Score.NA == r.Score.Total {
		why := "no page was sampled"
		if len(r.Checks) > 0 {
			why = r.Checks[0].Message
		}
		fmt.Fprintf(w, "\n%s\n  %s %s\n", paint("1", "Read suite (not in the score above)"), sym[report.NA], why)
		return
	}
	fmt.Fprintf(w, "\n%s\n", paint("1", fmt.Sprintf("Read suite — %d/100 (grade %s), %s read (not in the score above)", r.Score.Value, score.Grade(r.Score.Value), count(len(r.Pages), "page", "pages"))))
	if r.Source != "" {
		fmt.Fprintf(w, "  Pages from %s, %s, %s\n", r.Source, count(r.Candidates, "candidate", "candidates"), count(r.Requests, "request", "requests"))
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %s %-5s %-28s %s\n", sym[c.Status], c.ID, c.Name, c.Message)
	}
	for _, p := range r.Pages {
		if len(p.Failed) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s %s (%d) fails %s\n", paint("90", "·"), p.URL, p.Status, strings.Join(p.Failed, ", "))
	}
}

// count is "1 page", "3 pages".
func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}
