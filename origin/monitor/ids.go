package monitor

import (
	"crypto/rand"
	"fmt"
	"time"
)

// sortedDigits is lowercase base32's alphabet (webhook.NewID's) in byte
// order, so that ids written with it sort as their values do.
const sortedDigits = "234567abcdefghijklmnopqrstuvwxyz"

// timeID returns an id of the form webhook.NewID gives (prefix, "_", 26
// lowercase base32 characters) whose first 10 characters are at, in Unix
// milliseconds, and whose other 16 are random (80 bits). A run's report
// and event ids are made this way so that they sort by creation: the
// embedded store keeps a monitor's deliveries, its index of them and its
// reports in key order, so a run's new ones land beside the newest, and
// the one the run forgets (the oldest) beside the oldest, instead of each
// in a page of its own (the pages a commit rewrites are what it costs on
// disk: docs/benchmarks.md, "Embedded store: bytes written per monitor
// run"). Nothing depends on the order otherwise: ids stay opaque.
func timeID(prefix string, at time.Time) (string, error) {
	var r [10]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("reading random bytes for an id: %w", err)
	}
	b := make([]byte, 0, len(prefix)+1+26)
	b = append(append(b, prefix...), '_')
	ms := uint64(max(at.UnixMilli(), 0))
	for i := 9; i >= 0; i-- {
		b = append(b, sortedDigits[(ms>>(5*uint(i)))&31])
	}
	// 80 random bits, 5 at a time.
	var acc uint64
	bits := 0
	for _, x := range r {
		acc = acc<<8 | uint64(x)
		bits += 8
		for bits >= 5 {
			bits -= 5
			b = append(b, sortedDigits[(acc>>uint(bits))&31])
		}
	}
	return string(b), nil
}
