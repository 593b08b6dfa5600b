package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentready/agentready/survey"
)

// A survey into a directory another run holds exits 2, naming that run
// and what to do, and writes nothing there.
func TestSurveyRefusesABusyDirectory(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// The other run: its lock, and the line it wrote into the file.
	f, err := os.OpenFile(filepath.Join(out, survey.LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("pid 4242\nhost builder\nsince 2026-12-01T10:00:00Z\n"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"survey", "--in", list, "--out", out},
		{"survey", "--queue", "redis://127.0.0.1:1/0", "--in", list, "--out", out},
	} {
		code, _, errb := runCLI(args...)
		if code != exitUsage || !strings.Contains(errb, "is in use by the survey run with pid 4242 on builder, started 2026-12-01T10:00:00Z") || !strings.Contains(errb, "another --out") {
			t.Errorf("%v: exit %d, stderr %q; want %d and the other run named", args[1:3], code, errb, exitUsage)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the refused runs wrote into the directory: %v", entries)
	}
}
