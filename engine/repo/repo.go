package repo

import (
	"context"
	"fmt"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/engine/report"
)

// Result is the report of a repository scan: {path, timestamp, levels, checks}.
type Result struct {
	Path      string                 `json:"path"`
	Timestamp time.Time              `json:"timestamp"`
	Levels    []report.LevelProgress `json:"levels"`
	Checks    []report.Check         `json:"checks"`
	Stats     Stats                  `json:"stats"`
}

// Stats describe the walk.
type Stats struct {
	Files   int     `json:"files"`
	Bytes   int64   `json:"bytes"`
	Skipped Skipped `json:"skipped"`
	Elapsed string  `json:"elapsed"`
}

// Reached reports level 5: at least half of the applicable level-5 checks pass.
func (r *Result) Reached() bool {
	for _, lp := range r.Levels {
		if lp.Level.Number == 5 {
			return lp.Total > lp.NA && 2*lp.Passed >= lp.Total-lp.NA
		}
	}
	return false
}

// Options configure a scan.
type Options struct {
	Limits Limits
	Now    func() time.Time // the result's timestamp; default time.Now
}

// Walk reads the tree at root once and returns what it found, sorted by
// place, and the account of the walk. It judges nothing: the level-5 checks
// (package checks) judge the Findings, and engine.ScanRepo assembles the Result.
func Walk(ctx context.Context, root string, opts Options) (*Findings, Stats, error) {
	start := time.Now()
	opts.Limits.defaults()
	st, err := os.Stat(root)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("cannot read %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, Stats{}, fmt.Errorf("%s is not a directory; give the root of a repository", root)
	}
	files, skipped, err := walk(root, opts.Limits)
	if err != nil {
		return nil, Stats{}, err
	}
	ev := &Findings{}
	work := make(chan file)
	var wg sync.WaitGroup
	var bytesRead int64
	var mu sync.Mutex
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				src, err := os.ReadFile(f.abs)
				if err != nil || int64(len(src)) > opts.Limits.MaxFileBytes {
					mu.Lock()
					skipped[skipUnreadable]++
					mu.Unlock()
					continue
				}
				if isBinary(src) || generatedHeader(src) {
					mu.Lock()
					skipped[skipBinary]++
					mu.Unlock()
					continue
				}
				mu.Lock()
				bytesRead += int64(len(src))
				mu.Unlock()
				inspect(ev, f.rel, src)
			}
		}()
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, Stats{}, err
	}
	ev.resolveDeliveries()
	sortEvidence(ev)
	return ev, Stats{Files: len(files), Bytes: bytesRead, Skipped: skipped, Elapsed: time.Since(start).Round(time.Millisecond).String()}, nil
}

// inspect routes one file to the reader for its kind.
func inspect(e *Findings, rel string, src []byte) {
	base := path.Base(rel)
	switch ext := strings.ToLower(path.Ext(base)); {
	case ext == ".go":
		goFile(e, rel, src)
	case ext == ".js" || ext == ".mjs" || ext == ".cjs" || ext == ".ts" || ext == ".mts" || ext == ".tsx" || ext == ".jsx":
		scriptFile(e, rel, "js", src)
	case ext == ".py":
		scriptFile(e, rel, "py", src)
	case ext == ".rb":
		scriptFile(e, rel, "rb", src)
	case ext == ".json" || ext == ".yaml" || ext == ".yml" || ext == ".toml" || ext == ".env" || strings.HasPrefix(base, ".env"):
		dataFile(e, rel, src)
	case ext == ".md" || base == ".cursorrules":
		switch {
		case rel == "AGENTS.md" || rel == "agents.md":
			e.mu.Lock()
			e.AgentsMD = agentsFile(rel, src)
			e.mu.Unlock()
		case rel == "CLAUDE.md" || rel == ".github/copilot-instructions.md" || rel == "GEMINI.md" || strings.HasPrefix(rel, ".cursor/rules") || base == ".cursorrules":
			e.add(&e.VendorFiles, Hit{File: rel, Line: 1, What: "agent instructions for one vendor"})
		}
	}
	if strings.HasPrefix(rel, ".cursor/rules/") {
		e.add(&e.VendorFiles, Hit{File: rel, Line: 1, What: "Cursor rules"})
	}
}

// sortEvidence makes results independent of the order workers finished in.
func sortEvidence(e *Findings) {
	byPlace := func(h []Hit) {
		sort.Slice(h, func(i, j int) bool { return h[i].File < h[j].File || h[i].File == h[j].File && h[i].Line < h[j].Line })
	}
	for _, l := range []*[]Hit{&e.SessionHeaders, &e.ScopeIssue, &e.ScopeEnforce, &e.AuditLogs, &e.SandboxReads, &e.SandboxConfigs, &e.Consequence, &e.Signed, &e.Timestamped, &e.Unsigned, &e.VendorFiles} {
		byPlace(*l)
	}
	sort.Slice(e.Routes, func(i, j int) bool {
		return e.Routes[i].File < e.Routes[j].File || e.Routes[i].File == e.Routes[j].File && e.Routes[i].Line < e.Routes[j].Line
	})
	sort.Slice(e.Tools, func(i, j int) bool {
		return e.Tools[i].File < e.Tools[j].File || e.Tools[i].File == e.Tools[j].File && e.Tools[i].Line < e.Tools[j].Line
	})
}
