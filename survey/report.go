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
func Merge(dirs []string, out string) (*Adoption, error) {
	if len(dirs) == 0 {
		return nil, errors.New("give the shards' output directories to merge")
	}
	total := newAggregator()
	var mans []Manifest
	seen := map[string]string{}
	count := 0
	for _, dir := range dirs {
		man, err := readManifest(dir)
		if err != nil {
			return nil, fmt.Errorf("%s holds no survey: %w", dir, err)
		}
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
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("the output directory cannot be created: %w", err)
	}
	ad := total.adoption(m)
	return ad, writeReports(out, ad)
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
