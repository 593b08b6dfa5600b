package apierr

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/api.md's error table and the catalog list the same codes with the
// same statuses, so a code can be neither emitted undocumented nor
// documented unemitted.
func TestCatalogMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\d{3}) \\| `([a-z_]+)` \\|")
	documented := map[Code]int{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		st, _ := strconv.Atoi(m[1])
		documented[Code(m[2])] = st
	}
	for _, c := range All() {
		st, ok := documented[c]
		switch {
		case !ok:
			t.Errorf("%s is in the catalog but not in docs/api.md's error table", c)
		case st != c.Status():
			t.Errorf("%s: docs/api.md says %d, the catalog %d", c, st, c.Status())
		}
	}
	for c := range documented {
		if !c.Known() {
			t.Errorf("docs/api.md documents %s, which no code in the catalog is", c)
		}
	}
}

func TestEnvelope(t *testing.T) {
	b := New(InvalidURL, "url <x> & y").JSON()
	var e map[string]string
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e["error"] != "Invalid url" || e["code"] != "invalid_url" || e["message"] != "url <x> & y" || e["docs"] != DocsURL || len(e) != 4 {
		t.Errorf("envelope %s", b)
	}
	if Code("nope").Status() != 500 || Code("nope").Known() {
		t.Error("an unknown code is a 500 and not known")
	}
}

// Every code of the catalog is emitted somewhere: a non-test source file
// outside this package names it (apierr.Name), so the catalog (and with it
// docs/api.md) lists nothing the service never answers.
func TestEveryCodeIsEmitted(t *testing.T) {
	names := map[string]Code{}
	src, err := os.ReadFile("apierr.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\t(\w+)\s+Code = "([a-z_]+)"`).FindAllStringSubmatch(string(src), -1) {
		names[m[1]] = Code(m[2])
	}
	if len(names) != len(All()) {
		t.Fatalf("read %d constants, the catalog has %d", len(names), len(All()))
	}
	used := map[string]bool{}
	ref := regexp.MustCompile(`\bapierr\.(\w+)`)
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && d.Name() != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join("..", "apierr") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, code := range names {
		if !used[name] {
			t.Errorf("%s (%s) is in the catalog but no code emits it", name, code)
		}
	}
}
