//go:build !linux

package store

import "os"

// See pagecache_linux.go.
func dropCache(path string) {}

func openRandom(path string, flag int, mode os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, mode)
}
