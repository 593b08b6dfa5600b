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
		defs := make([]checks.Definition, 0, len(all)+len(checks.Read()))
		for _, c := range all {
			defs = append(defs, c.Definition)
		}
		// The read suite's (level 0, category Readable) follow the 58.
		for _, c := range checks.Read() {
			defs = append(defs, c.Definition)
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
	for _, c := range checks.Read() {
		fmt.Fprintf(stdout, "%-5s %-34s read suite (%s, web)\n", c.ID, c.Name, c.Category)
	}
	return exitOK
}
