//go:build race

package store

// raceDetector: the test binary runs under the race detector, which makes
// the store's work several times slower (see TestReclamationOverADay).
const raceDetector = true
