package main

import (
	"bytes"
	"flag"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// `serve --help` and `scan --help` once answered exit 2 (a usage error).
// Asking for help is an answer: on stdout, exit 0, for every command and
// every spelling, before a "--" only. And it is the command's own help
// (its forms, its flags and the exit codes), not every command's.
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
		want := commandHelp(name)
		for _, h := range []string{"--help", "-h", "-help"} {
			for _, args := range [][]string{{name, h}, {name, "example.com", h}} {
				var out, errb bytes.Buffer
				code := run(args, &out, &errb)
				if code != exitOK || out.String() != want || errb.Len() != 0 {
					t.Errorf("agentready %s: exit %d, stdout %d bytes (its help is %d), stderr %q", strings.Join(args, " "), code, out.Len(), len(want), errb.String())
				}
			}
		}
		if !strings.Contains(usage, "\n  agentready "+name+" ") {
			t.Errorf("the usage does not list the command %q", name)
		}
		if name == "help" {
			continue
		}
		if !strings.HasPrefix(want, "Usage:\n  agentready "+name+" ") || !strings.HasSuffix(want, exitCodesText()) {
			t.Errorf("agentready %s --help is not its forms, flags and the exit codes:\n%s", name, want)
		}
		for _, other := range topics {
			if other.name != name && strings.Contains(want, "\n  agentready "+other.name+" ") {
				t.Errorf("agentready %s --help shows agentready %s too", name, other.name)
			}
		}
		if code, out, _ := runCLI("help", name); code != exitOK || out != want {
			t.Errorf("agentready help %s: exit %d, not the command's help", name, code)
		}
	}
	for _, h := range []string{"--help", "-h", "help"} {
		if code, out, _ := runCLI(h); code != exitOK || out != usage {
			t.Errorf("agentready %s: exit %d", h, code)
		}
	}
	if code, _, errb := runCLI("help", "frobnicate"); code != exitUsage || !strings.Contains(errb, `no command "frobnicate"`) {
		t.Errorf("agentready help frobnicate: exit %d, %q", code, errb)
	}
	// After "--" it is an argument: keygen takes it as the key's name.
	if code, out, _ := runCLI("keygen", "--", "--help"); code == exitOK && out == commandHelp("keygen") {
		t.Error(`"keygen -- --help" printed the help`)
	}
}

// Every command the CLI runs has a topic in the help, and every topic a
// command.
func TestTopicsAreTheCommands(t *testing.T) {
	seen := map[string]bool{}
	for _, tp := range topics {
		if commands[tp.name] == nil {
			t.Errorf("the help has a topic %q that no command runs", tp.name)
		}
		seen[tp.name] = true
	}
	for name := range commands {
		if !seen[name] {
			t.Errorf("the command %q has no topic in the help", name)
		}
	}
}

// An unknown flag printed every command's help (100+
// lines). Now: the error, named by its command, the command's forms and
// where its help is; exit 2.
func TestUsageErrorsAreShort(t *testing.T) {
	for _, c := range []struct {
		args        []string
		topic, name string
	}{
		{[]string{"scan", "--no-such-flag", "example.com"}, "scan", "scan"},
		{[]string{"repo", "--no-such-flag", "."}, "repo", "repo"},
		{[]string{"checks", "--no-such-flag"}, "checks", "checks"},
		{[]string{"tools", "--no-such-flag"}, "tools", "tools"},
		{[]string{"serve", "--no-such-flag"}, "serve", "serve"},
		{[]string{"healthcheck", "--no-such-flag"}, "healthcheck", "healthcheck"},
		{[]string{"webhook", "verify", "--no-such-flag"}, "webhook", "webhook verify"},
	} {
		code, out, errb := runCLI(c.args...)
		lines := strings.Split(strings.TrimSuffix(errb, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) > 4 {
			t.Errorf("agentready %s: exit %d, %d lines on stderr:\n%s", strings.Join(c.args, " "), code, len(lines), errb)
			continue
		}
		for _, want := range []string{"agentready " + c.name + ": flag provided but not defined: -no-such-flag\n", "usage: agentready " + c.name, "'agentready " + c.topic + " --help'"} {
			if !strings.Contains(errb, want) {
				t.Errorf("agentready %s: stderr %q does not say %q", strings.Join(c.args, " "), errb, want)
			}
		}
	}
	// A bad value names the command too.
	if code, _, errb := runCLI("scan", "--timeout", "soon", "example.com"); code != exitUsage || !strings.HasPrefix(errb, `agentready scan: invalid value "soon" for flag -timeout`) {
		t.Errorf("scan --timeout soon: exit %d, %q", code, errb)
	}
	// An unknown command names the commands on one line; none, the list of them.
	if code, _, errb := runCLI("frobnicate"); code != exitUsage || strings.Count(errb, "\n") != 1 || !strings.Contains(errb, "scan, repo, checks") {
		t.Errorf("agentready frobnicate: exit %d, %q", code, errb)
	}
	if code, _, errb := runCLI(); code != exitUsage || strings.Contains(errb, "Serve flags:") || !strings.Contains(errb, "\n  agentready serve ") {
		t.Errorf("agentready: exit %d, %q", code, errb)
	}
}

// One list of exit codes: the help ends with it, each once, and every code
// the commands return is on it.
func TestExitCodesListedOnce(t *testing.T) {
	seen := map[int]bool{}
	for _, e := range exitCodes {
		if seen[e.code] || e.meaning == "" {
			t.Errorf("exit code %d listed twice or without a meaning", e.code)
		}
		seen[e.code] = true
	}
	for _, code := range []int{exitOK, exitBelowTarget, exitUsage, exitUnreachable, exitScanFailed, exitCanceled, exitInvalidDelivery} {
		if !seen[code] {
			t.Errorf("exit code %d is not listed", code)
		}
	}
	if strings.Count(usage, "Exit codes:") != 1 || !strings.HasSuffix(usage, exitCodesText()) {
		t.Error("the help does not end with the one list of exit codes")
	}
}

// flagNames lists the flags a command's flag set defines: the flag set
// itself when the command makes it with newFlagSet (flagSetSeen), else the
// flag package's own listing (PrintDefaults: "  -name type"), which it
// prints to stderr when the command itself parses -h.
func flagNames(t *testing.T, cmd func([]string, *bytes.Buffer, *bytes.Buffer) int) []string {
	t.Helper()
	var names []string
	flagSetSeen = func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	}
	defer func() { flagSetSeen = nil }()
	var out, errb bytes.Buffer
	cmd([]string{"-h"}, &out, &errb)
	if names == nil {
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(errb.String(), -1) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("no flags read from the flag set:\n%s", errb.String())
	}
	return names
}

// The help names every flag of each command (as parsed from its flag set)
// in that command's own help, so adding a flag without documenting it fails
// here.
func TestHelpNamesEveryFlag(t *testing.T) {
	for name, cmd := range map[string]func([]string, *bytes.Buffer, *bytes.Buffer) int{
		"scan":        func(a []string, o, e *bytes.Buffer) int { return scanCmd(a, o, e) },
		"repo":        func(a []string, o, e *bytes.Buffer) int { return repoCmd(a, o, e) },
		"serve":       func(a []string, o, e *bytes.Buffer) int { return serveCmd(a, o, e) },
		"checks":      func(a []string, o, e *bytes.Buffer) int { return checksCmd(a, o, e) },
		"tools":       func(a []string, o, e *bytes.Buffer) int { return toolsCmd(a, o, e) },
		"healthcheck": func(a []string, o, e *bytes.Buffer) int { return healthcheckCmd(a, o, e) },
	} {
		flags := flagNames(t, cmd)
		if name == "serve" && len(flags) < 6 {
			t.Errorf("serve defines %d flags: %v", len(flags), flags)
		}
		text := commandHelp(name)
		for _, f := range flags {
			if !regexp.MustCompile(`(^|[\s\[])--` + regexp.QuoteMeta(f) + `([^a-z0-9-]|$)`).MatchString(text) {
				t.Errorf("agentready %s --%s is missing from its help", name, f)
			}
		}
	}
}
