package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/survey"
)

// The CLI allows private addresses by default (and with --allow-private),
// yet a cloud metadata address, written as the host in any spelling, is
// refused by the guard: exit 3 and a message that says why, not the
// "unreachable" a failed connection would give.
func TestScanRefusesMetadata(t *testing.T) {
	for _, host := range []string{"169.254.169.254", "[fd00:ec2::254]", "[fd20:ce::254]", "[fd00:c1::a9fe:a9fe]", "[fd00:42::42]",
		"192.0.0.192", "100.100.100.200", "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "[fe80::a9fe:a9fe]", "169.254.1.1"} {
		for _, flags := range [][]string{nil, {"--allow-private"}} {
			args := append([]string{"scan", "--timeout", "5s"}, flags...)
			code, out, errb := runCLI(append(args, "http://"+host+"/latest/meta-data/")...)
			if code != exitUnreachable {
				t.Errorf("%s %v: exit %d, want %d (stderr %q)", host, flags, code, exitUnreachable, errb)
				continue
			}
			want := "cloud metadata address"
			if host == "169.254.1.1" {
				want = "link-local address"
			}
			if !strings.Contains(errb, want) || !strings.Contains(errb, "never scanned") {
				t.Errorf("%s %v: stderr %q, want it to say %q and that it is never scanned", host, flags, errb, want)
			}
			if out != "" {
				t.Errorf("%s %v: printed a report: %q", host, flags, out)
			}
		}
	}
}

// A survey with --allow-private and an allow-list of everything still
// refuses every metadata address it is given, before any connection, and
// an allow-list entry naming one stops the survey before it starts.
func TestSurveyRefusesMetadata(t *testing.T) {
	dir := t.TempDir()
	hosts := []string{"169.254.169.254", "[fd00:ec2::254]", "[fd20:ce::254]", "[fd00:c1::a9fe:a9fe]", "[fd00:42::42]", "192.0.0.192", "100.100.100.200"}
	var list strings.Builder
	for _, h := range hosts {
		list.WriteString("http://" + h + "/\n")
	}
	listPath := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(listPath, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, errb := runCLI("survey", "--in", listPath, "--out", out, "--allow-private", "--allow", "0.0.0.0/0,::/0", "--timeout", "5s", "--contact", "mailto:survey@example.org")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	b, err := os.ReadFile(filepath.Join(out, survey.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(hosts) {
		t.Fatalf("%d results for %d sites", len(lines), len(hosts))
	}
	for _, l := range lines {
		var r survey.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Cause != "blocked" || !strings.Contains(r.Message, "never scanned") {
			t.Errorf("%s: cause %q, message %q; want it refused as never scanned", r.URL, r.Cause, r.Message)
		}
	}

	for _, entry := range []string{"169.254.169.254", "[fd20:ce::254]:80", "169.254.0.0/16"} {
		code, _, errb := runCLI("survey", "--in", listPath, "--out", filepath.Join(dir, "refused"), "--allow", entry)
		if code != exitUsage || !strings.Contains(errb, "never scanned") {
			t.Errorf("--allow %s: exit %d, stderr %q; want %d and a message that these addresses are never scanned", entry, code, errb, exitUsage)
		}
	}
}
