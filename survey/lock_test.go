package survey_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/survey"
)

// A second run into a directory a survey is writing to is refused before
// it writes anything, with a message naming the run that holds it; so is
// a merge into it. The first run's results stay whole and exact, and once
// it ends the directory is free again.
func TestSecondRunIntoTheSameDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 40)
	list, want := writeList(t, w, sites)
	otherList, _ := writeList(t, w, span(41, 45))
	out := filepath.Join(t.TempDir(), "out")
	finished := filepath.Join(t.TempDir(), "finished") // a survey a merge could read
	if _, err := survey.Run(context.Background(), config(w.Addr, otherList, finished)); err != nil {
		t.Fatal(err)
	}

	cfg := config(w.Addr, list, out)
	tried := false
	var refusals []error
	var changed []string
	cfg.Progress = func(p survey.Progress) {
		// Called by the first run while it holds the directory, between
		// its writes.
		if tried || p.Done < 5 || p.Final {
			return
		}
		tried = true
		before := snapshot(t, out)
		for _, second := range []survey.Config{config(w.Addr, list, out), config(w.Addr, otherList, out)} {
			_, err := survey.Run(context.Background(), second)
			refusals = append(refusals, err)
		}
		_, err := survey.Merge([]string{finished}, out)
		refusals = append(refusals, err)
		for name, b := range snapshot(t, out) {
			if before[name] != b {
				changed = append(changed, name)
			}
		}
	}
	sum, err := survey.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !tried {
		t.Fatal("the first run never reported progress: the second run was not tried")
	}
	for i, err := range refusals {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !errors.Is(err, survey.ErrBusy) || !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, "another --out") {
			t.Errorf("attempt %d while the first ran: %v; want ErrBusy naming the first run's pid and what to do", i+1, err)
		}
	}
	if len(changed) > 0 {
		t.Errorf("the refused runs changed %v", changed)
	}
	if sum.Done != len(sites) {
		t.Fatalf("the first run wrote %d results, want %d", sum.Done, len(sites))
	}
	results := readResults(t, out)
	if len(results) != len(sites) {
		t.Fatalf("%d result lines, want %d", len(results), len(sites))
	}
	for i, r := range results {
		if r.URL != w.URL(i+1) {
			t.Fatalf("result %d is %s, want %s", i+1, r.URL, w.URL(i+1))
		}
	}
	if err := want.Compare(readAdoption(t, out), maxOf(sites)); err != nil {
		t.Error(err)
	}
	// Released: the same command runs again (nothing left to scan).
	if sum, err := survey.Run(context.Background(), config(w.Addr, list, out)); err != nil || sum.Resumed != len(sites) {
		t.Errorf("after the first run ended: %+v, %v", sum, err)
	}
}

// snapshot is every file of dir, by name, but the lock.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Name() == survey.LockFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
