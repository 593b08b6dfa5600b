package main

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Issue 9, item 14: `serve --help` and `scan --help` answered exit 2 (a
// usage error). Asking for help is an answer: the usage on stdout, exit 0,
// for every command and every spelling, before a "--" only.
func TestHelpExitsZero(t *testing.T) {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 7 {
		t.Fatalf("commands: %v", names)
	}
	for _, name := range names {
		for _, h := range []string{"--help", "-h", "-help"} {
			for _, args := range [][]string{{name, h}, {name, "example.com", h}} {
				var out, errb bytes.Buffer
				code := run(args, &out, &errb)
				if code != exitOK || out.String() != usage || errb.Len() != 0 {
					t.Errorf("agentready %s: exit %d, stdout %d bytes (usage is %d), stderr %q", strings.Join(args, " "), code, out.Len(), len(usage), errb.String())
				}
			}
		}
		if !strings.Contains(usage, "\n  agentready "+name+" ") {
			t.Errorf("the usage does not list the command %q", name)
		}
	}
	for _, h := range []string{"--help", "-h", "help"} {
		if code, out, _ := runCLI(h); code != exitOK || out != usage {
			t.Errorf("agentready %s: exit %d", h, code)
		}
	}
	// After "--" it is an argument: keygen takes it as the key's name.
	if code, out, _ := runCLI("keygen", "--", "--help"); code == exitOK && out == usage {
		t.Error(`"keygen -- --help" printed the help`)
	}
}

// flagNames lists the flags a command's flag set defines, read from the flag
// package's own listing (PrintDefaults: "  -name type"), which it prints to
// stderr when the command itself parses -h.
func flagNames(t *testing.T, cmd func([]string, *bytes.Buffer, *bytes.Buffer) int) []string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd([]string{"-h"}, &out, &errb)
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(errb.String(), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("no flags read from the flag set's listing:\n%s", errb.String())
	}
	return names
}

// The top-level help names every flag of serve (and of checks and tools),
// as parsed from their flag sets, so adding a flag without documenting it
// fails here.
func TestHelpNamesEveryFlag(t *testing.T) {
	for name, cmd := range map[string]func([]string, *bytes.Buffer, *bytes.Buffer) int{
		"serve":  func(a []string, o, e *bytes.Buffer) int { return serveCmd(a, o, e) },
		"checks": func(a []string, o, e *bytes.Buffer) int { return checksCmd(a, o, e) },
		"tools":  func(a []string, o, e *bytes.Buffer) int { return toolsCmd(a, o, e) },
	} {
		flags := flagNames(t, cmd)
		if name == "serve" && len(flags) < 6 {
			t.Errorf("serve defines %d flags: %v", len(flags), flags)
		}
		// serve's flags are looked for in its own section (--allow is a
		// survey flag too); the others' on their usage lines.
		text := usage
		if name == "serve" {
			_, text, _ = strings.Cut(usage, "Serve flags:")
			text, _, _ = strings.Cut(text, "\n\n")
		}
		for _, f := range flags {
			if !regexp.MustCompile(`(^|[\s\[])--` + regexp.QuoteMeta(f) + `([^a-z0-9-]|$)`).MatchString(text) {
				t.Errorf("agentready %s --%s is missing from the help", name, f)
			}
		}
	}
}
