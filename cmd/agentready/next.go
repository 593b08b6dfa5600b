package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/report"
)

// renderNext prints the engine's plan (package advice) as it orders it.
func renderNext(w io.Writer, p *advice.Plan, paint func(code, s string) string, sym map[report.Status]string) {
	var head string
	switch {
	case len(p.Steps) == 0:
		head = "Next steps: nothing left to fix."
	case p.TargetLevel > 0:
		var where []string
		for _, n := range p.Needs {
			where = append(where, fmt.Sprintf("%d of level %d", n.Passes, n.Level))
		}
		head = fmt.Sprintf("Next steps: %d more passing %s reach level %d %s (%s); these come first.",
			p.PassesNeeded, plural(p.PassesNeeded, "check", "checks"), p.TargetLevel, report.LevelName(p.TargetLevel), strings.Join(where, ", "))
	case p.CurrentLevel >= 3:
		head = "Next steps: level 3 is reached; what is left to fix."
	default:
		head = "Next steps: no fix among these checks reaches a level; what is left to fix."
	}
	fmt.Fprintf(w, "\n%s\n", paint("1", head))
	for i, s := range p.Steps {
		if i > 0 && p.Steps[i-1].Blocking && !s.Blocking {
			fmt.Fprintln(w, "  then:")
		}
		fmt.Fprintf(w, "  %2d. %s %-5s %-28s %s effort\n", s.Rank, sym[s.Status], s.ID, s.Name, s.Effort)
		fmt.Fprintf(w, "          %s %s\n", paint("36", "→"), s.Fix)
		if s.Snippet != "" {
			fmt.Fprintln(w, "          starter:")
			for _, l := range strings.Split(strings.TrimRight(s.Snippet, "\n"), "\n") {
				fmt.Fprintln(w, strings.TrimRight("            "+l, " "))
			}
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
