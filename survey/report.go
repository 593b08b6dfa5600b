package survey

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report streams a finished survey's results and skips in dir and writes
// its adoption.json, report.html and report.md there. Whatever the number
// of resumes, the counts are those of the results file: each site once.
func Report(dir string) (*Adoption, error) {
	man, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("%s holds no survey: %w", dir, err)
	}
	if man.Settings.Queue != "" {
		return nil, fmt.Errorf("%s holds the results of worker %s of the queue's survey %s, a part of the survey: merge every worker's directory (agentready survey merge DIR... --out DIR)", dir, man.Settings.Worker, man.Settings.Queue)
	}
	a, err := aggregateDir(dir, man)
	if err != nil {
		return nil, err
	}
	m := Methods{Version: man.Version, List: man.List, Settings: man.Settings, Started: man.Started, Finished: man.Finished, Runs: man.Runs}
	ad := a.adoption(m)
	return ad, writeReports(dir, ad)
}

// aggregateDir adds up one survey directory: every result once, every skip.
func aggregateDir(dir string, man *Manifest) (*aggregator, error) {
	a := newAggregator()
	n := 0
	err := eachResult(filepath.Join(dir, ResultsFile), func(r *Result) error {
		n++
		return a.add(r)
	})
	if err != nil {
		return nil, err
	}
	if n != man.Sites {
		return nil, fmt.Errorf("%s holds %d results of the %d sites its list has: the survey is not finished; run it again with the same --in, --out and --shard to complete it", dir, n, man.Sites)
	}
	if err := eachSkip(filepath.Join(dir, SkippedFile), a.skip); err != nil {
		return nil, err
	}
	return a, nil
}

func eachSkip(path string, fn func(*Skip) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxResultLine)
	for n := 1; sc.Scan(); n++ {
		var s Skip
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return fmt.Errorf("%s: line %d is not a skipped line's record", path, n)
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Merge adds up the shards' directories of one survey (the same list, each
// shard once, all finished) and writes the adoption reports into out. Its
// counts equal those of one run over the whole list; only the methods
// differ, listing each shard's.
//
// The directories of a queue's workers (Manifest.Settings.Queue) are
// merged by mergeWorkers instead.
func Merge(dirs []string, out string) (*Adoption, error) {
	if len(dirs) == 0 {
		return nil, errors.New("give the shards' output directories to merge")
	}
	manifests := make([]*Manifest, len(dirs))
	for i, dir := range dirs {
		man, err := readManifest(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s holds no survey (it has no %s): give the directories a survey --shard I/N (or a queue's worker) wrote with --out, once each run ended", dir, ManifestFile)
		}
		if err != nil {
			return nil, fmt.Errorf("%s holds no survey: %w", dir, err)
		}
		if i > 0 && (man.Settings.Queue != "") != (manifests[0].Settings.Queue != "") {
			return nil, fmt.Errorf("%s and %s hold different kinds of survey (a queue's worker and a shard): merge the directories of one survey", dirs[0], dir)
		}
		manifests[i] = man
	}
	if manifests[0].Settings.Queue != "" {
		return mergeWorkers(dirs, manifests, out)
	}
	total := newAggregator()
	var mans []Manifest
	seen := map[string]string{}
	count := 0
	for i, dir := range dirs {
		man := manifests[i]
		sh, err := ParseShard(man.Settings.Shard)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
		}
		if len(mans) > 0 {
			first := mans[0]
			if man.List.SHA256 != first.List.SHA256 {
				return nil, fmt.Errorf("%s surveyed another list than %s (sha256 %.12s… and %.12s…): merge the shards of one list", dir, dirs[0], man.List.SHA256, first.List.SHA256)
			}
			if sh.Count != count {
				return nil, fmt.Errorf("%s is shard %s, %s is shard %s: merge the shards of one split", dir, man.Settings.Shard, dirs[0], first.Settings.Shard)
			}
		}
		count = sh.Count
		if other, dup := seen[man.Settings.Shard]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %s: give each shard once", other, dir, man.Settings.Shard)
		}
		seen[man.Settings.Shard] = dir
		if man.Finished == nil {
			return nil, fmt.Errorf("%s (shard %s) is not finished: run its survey again to complete it, then merge", dir, man.Settings.Shard)
		}
		a, err := aggregateDir(dir, man)
		if err != nil {
			return nil, err
		}
		total.merge(a)
		mans = append(mans, *man)
	}
	if len(seen) != count {
		var missing []string
		for i := 0; i < count; i++ {
			s := Shard{i, count}.String()
			if _, ok := seen[s]; !ok {
				missing = append(missing, s)
			}
		}
		return nil, fmt.Errorf("shards %v are missing: the list was split in %d, and every shard is needed for its adoption report", missing, count)
	}
	sort.Slice(mans, func(i, j int) bool {
		a, _ := ParseShard(mans[i].Settings.Shard)
		b, _ := ParseShard(mans[j].Settings.Shard)
		return a.Index < b.Index
	})
	m := Methods{Version: mans[0].Version, List: mans[0].List, Settings: mans[0].Settings, Started: mans[0].Started, Shards: mans}
	m.Settings.Shard = fmt.Sprintf("%d shards merged", count)
	for _, s := range mans {
		m.Runs += s.Runs
		if s.Started.Before(m.Started) {
			m.Started = s.Started
		}
		if m.Finished == nil || s.Finished.After(*m.Finished) {
			f := *s.Finished
			m.Finished = &f
		}
	}
	ad := total.adoption(m)
	return ad, writeMerged(out, ad)
}

// mergeWorkers adds up the directories of a queue's workers. The workers
// took sites as they came, so a site is in one directory or, when a worker
// stopped between writing a result and acknowledging it and another worker
// took the site over, in two: each site (list line) is counted once, from
// its earliest result (then the worker whose name sorts first). A worker
// killed in the middle of a line leaves it torn; that site was not
// acknowledged, so another worker redid it, and the torn line is ignored.
// The merge refuses unless every site of the list has a result.
func mergeWorkers(dirs []string, mans []*Manifest, out string) (*Adoption, error) {
	first := mans[0]
	byWorker := map[string]string{}
	order := make([]int, len(dirs))
	for i, m := range mans {
		order[i] = i
		switch {
		case m.Settings.Queue != first.Settings.Queue || m.List.SHA256 != first.List.SHA256:
			return nil, fmt.Errorf("%s is a worker of the queue's survey %s, %s of %s: merge the workers of one survey", dirs[i], m.Settings.Queue, dirs[0], first.Settings.Queue)
		case m.Sites != first.Sites || m.List.Lines != first.List.Lines || !sameSkips(m.Skipped, first.Skipped):
			return nil, fmt.Errorf("%s and %s disagree on the survey's list (%d and %d sites): was the survey's account in Redis changed?", dirs[i], dirs[0], m.Sites, first.Sites)
		}
		if other, dup := byWorker[m.Settings.Worker]; dup {
			return nil, fmt.Errorf("%s and %s are both worker %s: give each worker's directory once", other, dirs[i], m.Settings.Worker)
		}
		byWorker[m.Settings.Worker] = dirs[i]
	}
	sort.Slice(order, func(a, b int) bool { return mans[order[a]].Settings.Worker < mans[order[b]].Settings.Worker })
	each := func(fn func(*Result) error) error {
		for _, i := range order {
			if err := eachResultOf(filepath.Join(dirs[i], ResultsFile), true, fn); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	}

	// First pass: which sites have a result, and which have several.
	lines := first.List.Lines
	seen := make([]uint64, lines/64+1)
	twice := map[int]*Result{}
	distinct := 0
	err := each(func(r *Result) error {
		if r.Line < 1 || r.Line > lines {
			return fmt.Errorf("a result names line %d of a list of %d lines: the directories hold results of another list", r.Line, lines)
		}
		word, bit := r.Line/64, uint64(1)<<(r.Line%64)
		if seen[word]&bit != 0 {
			twice[r.Line] = nil
			return nil
		}
		seen[word] |= bit
		distinct++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if distinct != first.Sites {
		return nil, fmt.Errorf("these directories hold results for %d of the survey's %d sites%s", distinct, first.Sites, missingWorkers(mans, byWorker))
	}

	// Second pass: every result once; of a site's several, the earliest.
	total := newAggregator()
	err = each(func(r *Result) error {
		kept, several := twice[r.Line]
		switch {
		case !several:
			return total.add(r)
		case kept == nil || r.Timestamp.Before(kept.Timestamp):
			twice[r.Line] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range twice {
		if err := total.add(r); err != nil {
			return nil, err
		}
	}
	if first.Skipped != nil {
		total.dups, total.invalid = first.Skipped.Duplicates, first.Skipped.Invalid
	}

	m := Methods{Version: first.Version, List: first.List, Settings: first.Settings, Started: first.Started, Rescans: len(twice)}
	m.Settings.Worker = ""
	m.Settings.Shard = fmt.Sprintf("%d workers merged", len(mans))
	for _, i := range order {
		s := mans[i]
		m.Shards = append(m.Shards, *s)
		m.Runs += s.Runs
		if s.Started.Before(m.Started) {
			m.Started = s.Started
		}
		if s.Finished != nil && (m.Finished == nil || s.Finished.After(*m.Finished)) {
			f := *s.Finished
			m.Finished = &f
		}
	}
	ad := total.adoption(m)
	return ad, writeMerged(out, ad)
}

// writeMerged writes a merge's reports into out, unless a run is writing
// there.
func writeMerged(out string, ad *Adoption) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("the output directory cannot be created: %w", err)
	}
	lock, err := lockDir(out)
	if err != nil {
		return err
	}
	defer lock.unlock()
	return writeReports(out, ad)
}

func sameSkips(a, b *SkipCounts) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// missingWorkers names the workers that joined the survey (as the
// finished ones saw them) whose directories were not given.
func missingWorkers(mans []*Manifest, given map[string]string) string {
	missing := map[string]bool{}
	for _, m := range mans {
		for _, w := range m.Workers {
			if given[w] == "" {
				missing[w] = true
			}
		}
	}
	if len(missing) == 0 {
		return ": is a worker's directory missing, or is the survey not finished? (a worker run again continues it)"
	}
	names := make([]string, 0, len(missing))
	for w := range missing {
		names = append(names, w)
	}
	sort.Strings(names)
	return fmt.Sprintf(": the directories of workers %s are missing", strings.Join(names, ", "))
}

func writeReports(dir string, ad *Adoption) error {
	ad.Methods.Date = time.Now().UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(ad, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, AdoptionFile), append(b, '\n')); err != nil {
		return err
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, ad); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, HTMLFile), h.Bytes()); err != nil {
		return err
	}
	var md bytes.Buffer
	WriteMarkdown(&md, ad)
	return writeFileAtomic(filepath.Join(dir, MarkdownFile), md.Bytes())
}
