// Command repobench times `agentready repo` on a generated repository of
// -files files (default 10,000: Go, TypeScript, Python, JSON and markdown in
// nested packages) and reports the peak RSS, to show memory follows the file
// cap and the worker count, not the size of the repository:
//
//	go run ./bench/repobench [-files 10000]     (or: make bench-repo)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/repo"
)

func generate(root string, n int) int64 {
	var total int64
	goSrc := "package p%d\n\nimport (\n\t\"log/slog\"\n\t\"net/http\"\n)\n\n// Handler %d serves a resource.\nfunc Register%d(mux *http.ServeMux) {\n\tmux.HandleFunc(\"GET /items/%d\", func(w http.ResponseWriter, r *http.Request) {\n\t\tslog.Info(\"get\", \"item\", %d)\n\t})\n}\n" + strings.Repeat("\n// padding line to make the file a realistic size\n", 40)
	tsSrc := "import express from 'express';\nconst app = express();\n// route %d\napp.get('/things/%d', (req, res) => res.json({ id: %d }));\n" + strings.Repeat("export const x%d = %d;\n", 1)
	pySrc := "from fastapi import FastAPI\napp = FastAPI()\n\n@app.get(\"/widgets/%d\")\ndef widget_%d():\n    return {\"id\": %d}\n"
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("sub%02d", i%10))
		os.MkdirAll(dir, 0o755)
		var name, body string
		switch i % 5 {
		case 0, 1:
			name, body = fmt.Sprintf("f%d.go", i), fmt.Sprintf(goSrc, i, i, i, i, i)
		case 2:
			name, body = fmt.Sprintf("f%d.ts", i), fmt.Sprintf(tsSrc, i, i, i, i, i)
		case 3:
			name, body = fmt.Sprintf("f%d.py", i), fmt.Sprintf(pySrc, i, i, i)
		default:
			name, body = fmt.Sprintf("f%d.json", i), fmt.Sprintf(`{"name": "thing %d", "values": [1, 2, 3], "nested": {"a": {"b": %d}}}`, i, i)
		}
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
		total += int64(len(body))
	}
	return total
}

func main() {
	files := flag.Int("files", 10000, "files to generate")
	flag.Parse()
	root, _ := os.MkdirTemp("", "repobench")
	defer os.RemoveAll(root)
	bytes := generate(root, *files)
	runtime.GC()
	before := benchkit.PeakRSSMB()
	var best time.Duration
	var res *repo.Result
	for i := 0; i < 3; i++ {
		start := time.Now()
		r, err := engine.ScanRepo(context.Background(), root, repo.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
		res = r
	}
	fmt.Printf("| `agentready repo` on %d generated files (%.1f MB; Go, TypeScript, Python, JSON), best of 3, %d CPUs | ≤ 2 s for 10,000 files | %s, %d files read; peak RSS %.0f MB (%.0f MB before the scans) |\n",
		*files, float64(bytes)/1e6, runtime.NumCPU(), best.Round(time.Millisecond), res.Stats.Files, benchkit.PeakRSSMB(), before)
}
