package main

import (
	"fmt"
	"io"

	"github.com/agentready/agentready/engine/checks"
)

func checksCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("checks", "checks", stderr)
	asJSON := fs.Bool("json", false, "print definitions as JSON")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	all := checks.All()
	if *asJSON {
		defs := make([]checks.Definition, len(all))
		for i, c := range all {
			defs[i] = c.Definition
		}
		writeJSON(stdout, defs)
		return exitOK
	}
	for _, c := range all {
		where := "web"
		if !c.WebScan {
			where = "repo"
		}
		fmt.Fprintf(stdout, "%-5s %-34s level %d (%s, %s)\n", c.ID, c.Name, c.Level, c.Category, where)
	}
	return exitOK
}
