package store

import (
	"os"
	"syscall"
)

// Linux's page cache may hold a file in folios larger than a page, made by
// a large read (readahead) or a large write, and dirtying one page of such
// a folio writes the whole folio back. bbolt creates a new file with one
// 16 KB write (its two meta pages, the freelist, the root), and every
// commit rewrites a meta page: each commit then wrote 16 KB for that 4 KB
// page (measured with /proc/self/io write_bytes; folios and what they cost:
// docs/benchmarks.md, "Embedded store: bytes written per monitor run"). So
// the file's clean cached pages are dropped before bbolt opens it, and its
// reads are marked random (no readahead): the pages come back one page per
// folio.

const (
	fadvRandom   = 1 // POSIX_FADV_RANDOM
	fadvDontNeed = 4 // POSIX_FADV_DONTNEED
)

func fadvise(f *os.File, advice int) {
	_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, uintptr(advice), 0, 0)
}

// dropCache evicts path's clean cached pages (none of them mapped: call it
// with the file closed).
func dropCache(path string) {
	if f, err := os.Open(path); err == nil {
		fadvise(f, fadvDontNeed)
		f.Close()
	}
}

// openRandom is bbolt's OpenFile: reads of the file get no readahead.
func openRandom(path string, flag int, mode os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, mode)
	if err == nil {
		fadvise(f, fadvRandom)
	}
	return f, err
}
