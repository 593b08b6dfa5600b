package mcpserver

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/tools/*.json")

// docs/tools/*.json are generated from the tool definitions; they must not drift.
func TestExportedDefinitionsAreCurrent(t *testing.T) {
	s, err := New(Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"mcp", "openai", "anthropic"} {
		got, err := s.Export(format)
		if err != nil {
			t.Fatal(err)
		}
		var defs []map[string]any
		if json.Unmarshal(got, &defs) != nil || len(defs) != 11 {
			t.Fatalf("%s: %d definitions", format, len(defs))
		}
		path := filepath.Join("..", "..", "docs", "tools", format+".json")
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, got, 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil || string(want) != string(got) {
			t.Errorf("%s is out of date: run `make docs` (%v)", path, err)
		}
	}
	if _, err := s.Export("gemini"); err == nil {
		t.Error("unknown format accepted")
	}
}
