package browser

import (
	"errors"
	"time"
)

// The errors a job can end with. Each says what happened and what to do; the
// origin maps them to its envelope (ErrUnavailable → 503 browser_unavailable,
// ErrBusy → 503 busy with Retry-After, the rest by kind). Compare with
// errors.Is: the returned errors may wrap them with more detail.
var (
	// ErrUnavailable: no Chromium binary was found.
	ErrUnavailable = errors.New("the headless browser is not available: install Chromium (apt-get install chromium) or set CHROME_PATH to its binary")
	// ErrStart: Chromium was found but did not start.
	ErrStart = errors.New("the headless browser did not start; check that CHROME_PATH points to a working Chromium")
	// ErrBusy: every tab is in use and the queue is full (see BusyError).
	ErrBusy = errors.New("every browser tab is busy and the queue is full; retry later")
	// ErrCrashed: Chromium crashed, stopped answering or went over its
	// memory budget while the job ran. It is restarted; a retry runs on the
	// new instance.
	ErrCrashed = errors.New("the headless browser stopped during this job and is being restarted; retry")
	// ErrTimeout: the page did not load within the job's deadline.
	ErrTimeout = errors.New("the page did not finish loading within the browser's deadline")
	// ErrTooHeavy: the page downloaded more than the page weight cap.
	ErrTooHeavy = errors.New("the page downloads more than the browser's page weight cap")
	// ErrBlocked: the page, or a redirect of it, is on an address the scanner
	// does not visit (private, loopback, link-local or metadata addresses,
	// ports other than 80 and 443 unless allowed).
	ErrBlocked = errors.New("the page is on an address the scanner does not visit (private, loopback, link-local or cloud metadata addresses, or a port other than 80 and 443)")
	// ErrLoad: the page could not be loaded (connection refused, TLS error…).
	ErrLoad = errors.New("the browser could not load the page")
	// ErrTooLarge: the screenshot is larger than its size cap.
	ErrTooLarge = errors.New("the screenshot is larger than its size cap")
	// ErrInvalidURL: only absolute http and https URLs are rendered.
	ErrInvalidURL = errors.New("the browser renders only absolute http:// and https:// URLs")
	// ErrInvalidOptions: a screenshot viewport beyond 4096×4096.
	ErrInvalidOptions = errors.New("the screenshot viewport must be between 1×1 and 4096×4096")
	// ErrClosed: the pool was closed.
	ErrClosed = errors.New("the browser pool is shut down")
)

// BusyError is ErrBusy with a hint for the Retry-After header.
type BusyError struct {
	RetryAfter time.Duration
}

func (e *BusyError) Error() string { return ErrBusy.Error() }
func (e *BusyError) Is(target error) bool {
	return target == ErrBusy
}

// RetryAfter is how long a caller refused with ErrBusy should wait (at least a
// second), or 0 for other errors.
func RetryAfter(err error) time.Duration {
	var b *BusyError
	if errors.As(err, &b) {
		return b.RetryAfter
	}
	return 0
}

// detailError is a sentinel with a sentence of detail that is safe to show
// (never an address, header or library message).
type detailError struct {
	kind   error
	detail string
}

func (e *detailError) Error() string { return e.kind.Error() + ": " + e.detail }
func (e *detailError) Unwrap() error { return e.kind }

func withDetail(kind error, detail string) error { return &detailError{kind: kind, detail: detail} }
