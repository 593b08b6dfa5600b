package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/report"
)

// Markdown renders the catalog as docs/checks.md; a test keeps the file equal
// to this output, so the documentation cannot drift from the code.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# The checks\n\n")
	b.WriteString("<!-- Generated from engine/checks by `make docs`; do not edit by hand. -->\n\n")
	b.WriteString("58 checks in 5 levels. The web scan (`agentready scan`, `GET /api/scan`) runs the 48 checks of levels 1–4; ")
	b.WriteString("the 10 level-5 checks run over a local codebase in the command-line tool. Scoring is described in [scoring.md](scoring.md).\n\n")
	b.WriteString("Every result carries `id, name, passed, status, level, category, message, recommendation, details, foundAt`; ")
	b.WriteString("`passed` is exactly `status == \"pass\"`, `recommendation` is empty on pass and na, `details` is compact JSON evidence.\n\n")
	b.WriteString("Rules every check obeys:\n\n")
	for _, r := range []string{
		"Each URL is fetched at most once per scan (the homepage is asked for three representations: HTML, markdown, and a conditional revalidation), concurrently, in at most 5 dependent rounds.",
		"A machine-readable document answered by a 2xx HTML page (by Content-Type or by sniffing) counts as absent: a soft 404. So does a 2xx whose body never finished arriving.",
		"Follow-up URLs taken from a site's own documents (catalog, server card, links) are fetched only on the same registrable domain.",
		"A homepage that cannot be fetched at all ends the scan with `site_unreachable` instead of a report.",
		"Requests that cannot change a verdict are not made: the conditional revalidation (3.6) is sent only when the homepage has Cache-Control, and /api/docs (1.5) is probed only for an API served under /api.",
	} {
		b.WriteString("- " + r + "\n")
	}
	for _, lv := range report.Levels {
		b.WriteString(fmt.Sprintf("\n## Level %d — %s\n\n%s", lv.Number, lv.Name, lv.Description))
		if lv.Number == 5 {
			b.WriteString(" Command-line tool only (`agentready repo`).")
		}
		b.WriteString("\n")
		for _, c := range All() {
			if c.Level != lv.Number {
				continue
			}
			b.WriteString(fmt.Sprintf("\n### %s %s\n\n", c.ID, c.Name))
			b.WriteString("- **Looks at:** " + c.LooksFor + "\n")
			b.WriteString("- **Verdict:** " + c.Rule + "\n")
			b.WriteString("- **Fix:** " + c.Fix + "\n")
		}
	}
	return b.String()
}
