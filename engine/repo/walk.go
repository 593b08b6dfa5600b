package repo

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Limits bound a walk.
type Limits struct {
	MaxFileBytes int64 // larger files are skipped (default 1 MiB)
	MaxFiles     int   // files read at most (default 50,000)
	MaxDepth     int   // directory depth (default 32)
}

func (l *Limits) defaults() {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 1 << 20
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = 50000
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 32
	}
}

// Skipped counts what the walk left out, by reason (one of the skip*
// constants; the JSON report keeps them as keys).
type Skipped map[string]int

// Why a path was left out.
const (
	skipUnreadable = "unreadable"
	skipSymlink    = "symlink"
	skipExcluded   = "excluded directory"
	skipTooDeep    = "too deep"
	skipGitignored = "gitignored"
	skipTestFile   = "test file"
	skipGenerated  = "generated"
	skipTooLarge   = "too large"
	skipOverCap    = "over the file cap"
	skipBinary     = "binary or generated"
)

// skipNouns names what each reason counts, singular and plural.
var skipNouns = map[string][2]string{
	skipUnreadable: {"unreadable path", "unreadable paths"},
	skipSymlink:    {"symlink", "symlinks"},
	skipExcluded:   {"excluded directory", "excluded directories"},
	skipTooDeep:    {"directory nested too deep", "directories nested too deep"},
	skipGitignored: {"gitignored path", "gitignored paths"},
	skipTestFile:   {"test file", "test files"},
	skipGenerated:  {"generated, minified or lock file", "generated, minified or lock files"},
	skipTooLarge:   {"file over the size limit", "files over the size limit"},
	skipOverCap:    {"file beyond the file cap", "files beyond the file cap"},
	skipBinary:     {"binary or \"Code generated\" file", "binary or \"Code generated\" files"},
}

// String says what was skipped in words, the largest count first (ties in
// alphabetical order): "136 test files, 12 excluded directories and 1 symlink".
func (s Skipped) String() string {
	type count struct {
		n    int
		noun string
	}
	var counts []count
	for reason, n := range s {
		if n <= 0 {
			continue
		}
		noun, ok := skipNouns[reason]
		if !ok {
			noun = [2]string{reason, reason}
		}
		if n == 1 {
			counts = append(counts, count{n, noun[0]})
		} else {
			counts = append(counts, count{n, noun[1]})
		}
	}
	sort.Slice(counts, func(i, j int) bool {
		if counts[i].n != counts[j].n {
			return counts[i].n > counts[j].n
		}
		return counts[i].noun < counts[j].noun
	})
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = strconv.Itoa(c.n) + " " + c.noun
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "vendor": true, "node_modules": true, "dist": true, "build": true, "out": true,
	"target": true, ".next": true, ".nuxt": true, "coverage": true, "__pycache__": true, ".venv": true, "venv": true,
	".tox": true, "testdata": true, "fixtures": true, "__fixtures__": true, "__tests__": true, "test": true, "tests": true,
	"spec": true, "e2e": true, ".idea": true, ".vscode": true, "bower_components": true,
}

func isTestFile(name string) bool {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, "_test.go"), strings.HasPrefix(n, "test_") && strings.HasSuffix(n, ".py"), strings.HasSuffix(n, "_test.py"),
		strings.HasSuffix(n, "_spec.rb"), strings.HasSuffix(n, "_test.rb"):
		return true
	}
	for _, mid := range []string{".test.", ".spec."} {
		if strings.Contains(n, mid) {
			return true
		}
	}
	return false
}

func isGeneratedName(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".pb.go") || strings.HasSuffix(n, ".min.js") || strings.HasSuffix(n, ".gen.go") ||
		strings.Contains(n, "_generated.") || strings.HasSuffix(n, ".bundle.js") || n == "package-lock.json" || n == "yarn.lock" || n == "go.sum"
}

// generatedHeader reports the Go convention `// Code generated … DO NOT EDIT.`
func generatedHeader(b []byte) bool {
	head := b
	if len(head) > 2048 {
		head = head[:2048]
	}
	return bytes.Contains(head, []byte("Code generated")) && bytes.Contains(head, []byte("DO NOT EDIT"))
}

func isBinary(b []byte) bool {
	head := b
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// file is one source file to inspect.
type file struct {
	rel  string // slash-separated, relative to the root
	abs  string
	size int64
}

// ignore is a .gitignore matcher (the subset of gitignore(5) real repositories
// use: globs, ** , leading / anchors, trailing / for directories, ! negation).
// Written by hand: the Go libraries for it drag in a whole git implementation.
type ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	base     string // directory of the .gitignore, slash-separated, "" for the root
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool
}

func (ig *ignore) load(root, relDir string) {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(relDir), ".gitignore"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(ig.rules) < 5000 {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: relDir}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(strings.TrimSuffix(line, "/**"), "/") {
			r.anchored = true
		}
		r.pattern = strings.TrimPrefix(line, "/")
		ig.rules = append(ig.rules, r)
	}
}

// match reports whether rel (slash-separated) is ignored.
func (ig *ignore) match(rel string, isDir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !isDir {
			continue
		}
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = strings.TrimPrefix(rel, r.base+"/")
		}
		var ok bool
		if r.anchored {
			ok = globPath(r.pattern, p)
		} else {
			ok = globPath(r.pattern, path.Base(p))
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// globPath matches slash-separated paths where ** spans directories.
func globPath(pattern, p string) bool {
	if !strings.Contains(pattern, "**") {
		ok, _ := path.Match(pattern, p)
		return ok
	}
	ps, xs := strings.Split(pattern, "/"), strings.Split(p, "/")
	memo := map[[2]int]bool{} // keeps many ** segments polynomial
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if v, ok := memo[[2]int{i, j}]; ok {
			return v
		}
		v := recStep(ps, xs, i, j, rec)
		memo[[2]int{i, j}] = v
		return v
	}
	return rec(0, 0)
}

func recStep(ps, xs []string, i, j int, rec func(i, j int) bool) bool {
	{
		if i == len(ps) {
			return j == len(xs)
		}
		if ps[i] == "**" {
			for k := j; k <= len(xs); k++ {
				if rec(i+1, k) {
					return true
				}
			}
			return false
		}
		if j == len(xs) {
			return false
		}
		ok, _ := path.Match(ps[i], xs[j])
		return ok && rec(i+1, j+1)
	}
}

// walk lists the files worth reading, once.
func walk(root string, lim Limits) ([]file, Skipped, error) {
	skipped := Skipped{}
	var files []file
	ig := &ignore{}
	ig.load(root, "")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped[skipUnreadable]++
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		name := d.Name()
		if d.Type()&fs.ModeSymlink != 0 {
			skipped[skipSymlink]++
			return nil // never followed: no loops, nothing outside the tree
		}
		if d.IsDir() {
			switch {
			case skipDirs[strings.ToLower(name)]:
				skipped[skipExcluded]++
				return fs.SkipDir
			case strings.Count(rel, "/")+1 > lim.MaxDepth:
				skipped[skipTooDeep]++
				return fs.SkipDir
			case ig.match(rel, true):
				skipped[skipGitignored]++
				return fs.SkipDir
			}
			ig.load(root, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case ig.match(rel, false):
			skipped[skipGitignored]++
			return nil
		case isTestFile(name):
			skipped[skipTestFile]++
			return nil
		case isGeneratedName(name):
			skipped[skipGenerated]++
			return nil
		case !interesting(name):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skipped[skipUnreadable]++
			return nil
		}
		if info.Size() > lim.MaxFileBytes {
			skipped[skipTooLarge]++
			return nil
		}
		if len(files) >= lim.MaxFiles {
			skipped[skipOverCap]++
			return nil
		}
		files = append(files, file{rel: rel, abs: p, size: info.Size()})
		return nil
	})
	return files, skipped, err
}

// interesting reports the files the checks can learn from.
func interesting(name string) bool {
	n := strings.ToLower(name)
	switch strings.ToLower(path.Ext(n)) {
	case ".go", ".js", ".mjs", ".cjs", ".ts", ".mts", ".tsx", ".jsx", ".py", ".rb", ".json", ".yaml", ".yml", ".toml", ".md", ".env":
		return true
	}
	return strings.HasPrefix(n, ".env") || n == ".cursorrules"
}
