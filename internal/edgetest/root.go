package edgetest

import (
	"os"
	"path/filepath"
)

// repoRoot finds the module root from the test's working directory.
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}
