package store

import (
	"context"
	"errors"
	"time"

	"github.com/agentready/agentready/engine/report"
)

// ErrNotFound is returned for a missing or expired key.
var ErrNotFound = errors.New("not found")

// ErrUnavailable is what every call returns (wrapped in an *UnavailableError)
// while the state store does not answer: a timeout, a refused connection, or
// the circuit breaker failing fast after several of those.
var ErrUnavailable = errors.New("state store unavailable")

// UnavailableError says how long the store is expected to stay unavailable,
// so callers can answer 503 with an honest Retry-After.
type UnavailableError struct {
	RetryAfter time.Duration // until the breaker lets a probe through
	Cause      string        // short and fixed ("no answer within 500ms"…): safe to show
	Err        error         // the underlying error, for operators' logs only (may name addresses)
}

func (e *UnavailableError) Error() string        { return "state store unavailable: " + e.Cause }
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }
func (e *UnavailableError) Unwrap() error        { return e.Err }

// ErrLeaseLost is returned by Renew, Complete and Release when the key is no
// longer held by the claim (its lease expired and another request took it).
var ErrLeaseLost = errors.New("idempotency lease lost")

// Backend bundles every concern.
type Backend interface {
	ScanCache() ScanCache
	Idempotency() Idempotency
	Screenshots() Screenshots
	Monitors() Monitors
	History() History
	Replays() Replays
	Ping(ctx context.Context) error
	Name() string // "embedded" or "redis"
	Close() error
}

// ScanCache keeps recent scan reports, keyed by normalised URL.
type ScanCache interface {
	Get(ctx context.Context, url string) (report []byte, scannedAt time.Time, err error)
	Put(ctx context.Context, url string, report []byte, scannedAt time.Time, ttl time.Duration) error
}

// IdemState is the state of an idempotency key.
type IdemState string

const (
	IdemInFlight IdemState = "in_flight"
	IdemDone     IdemState = "done"
)

// IdemRecord is what is stored under an idempotency key.
type IdemRecord struct {
	State       IdemState         `json:"state"`
	Fingerprint string            `json:"fingerprint"` // hash of the request body
	Status      int               `json:"status,omitempty"`
	Header      map[string]string `json:"header,omitempty"`
	Body        []byte            `json:"body,omitempty"`
	Created     time.Time         `json:"created"`
	// While in flight: who holds the key, and until when unless renewed. A
	// caller told to wait gets the remaining lease as Retry-After, so the
	// answer stays honest even when the holder died.
	Owner   string    `json:"owner,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
}

// Claim is an idempotency key held by the request that runs under it.
type Claim struct {
	Scope, Key string
	Owner      string    // random per claim: only its holder may renew, complete or release it
	Expires    time.Time // end of the lease as last set
}

// Idempotency stores keys scoped to a caller.
type Idempotency interface {
	// Begin claims the key for a request with the given fingerprint, for
	// lease. A non-nil claim means this caller now holds the key; otherwise
	// existing is the record another request left (in flight or done).
	Begin(ctx context.Context, scope, key, fingerprint string, lease time.Duration) (claim *Claim, existing *IdemRecord, err error)
	// Renew extends a held key's lease while its request is still running.
	Renew(ctx context.Context, c *Claim, lease time.Duration) error
	// Complete stores the final response for ttl.
	Complete(ctx context.Context, c *Claim, rec IdemRecord, ttl time.Duration) error
	// Release forgets a key whose request failed before producing a response worth replaying.
	Release(ctx context.Context, c *Claim) error
}

// MaxScreenshotBytes caps one stored screenshot. The browser caps its PNGs
// at 8 MiB by default; a viewport capture is far smaller, and the store must
// not hold whatever a misconfigured producer hands it (a Redis value is held
// in memory).
const MaxScreenshotBytes = 8 << 20

// ErrTooLarge is returned by Screenshots.Put for a PNG over MaxScreenshotBytes.
var ErrTooLarge = errors.New("screenshot larger than the store's size cap")

// Screenshot is a stored capture of a site's homepage.
type Screenshot struct {
	PNG        []byte
	CapturedAt time.Time // when the browser took it (UTC, whole seconds as Last-Modified carries no more)
	// ETag is a strong entity tag of the PNG, quoted ("\"sha256-prefix\""),
	// computed once when it is stored so serving it hashes nothing.
	ETag string
}

// Screenshots keeps the latest capture per normalised site URL.
type Screenshots interface {
	// Get returns the capture of url, or ErrNotFound (none, or expired).
	Get(ctx context.Context, url string) (Screenshot, error)
	// Put stores png as url's capture for ttl; ErrTooLarge beyond MaxScreenshotBytes.
	Put(ctx context.Context, url string, png []byte, capturedAt time.Time, ttl time.Duration) error
}

// HistoryEntry is one scan's outcome: the latest of each site ranks the
// showcase (Top), and each site keeps its last SeriesMax (Series).
type HistoryEntry struct {
	URL       string    `json:"url"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
	LevelName string    `json:"levelName"`
	ScannedAt time.Time `json:"scannedAt"`
	// Checks is each check's status and message hash, what a later scan is
	// compared with (report.Compare). Kept in the series only: Top does
	// not return it, nor the showcase show it.
	Checks report.Marks `json:"-"`
}

// SeriesMax is how many outcomes a site's series keeps (the newest).
const SeriesMax = 30

// SeriesIdle is how long a site's series is kept after its last scan: a
// site nobody scanned for 90 days has its series reclaimed (its showcase
// entry stays).
const SeriesIdle = 90 * 24 * time.Hour

// History keeps the outcomes of scans: per site its latest, ranked by
// score for the showcase, and a series of its last SeriesMax.
type History interface {
	// Record stores e as the latest outcome of e.URL and adds it to that
	// site's series (dropping the oldest beyond SeriesMax; the series is
	// kept SeriesIdle from now).
	Record(ctx context.Context, e HistoryEntry) error
	// Top returns sites by score (highest first; newer first on ties) and how many there are.
	Top(ctx context.Context, offset, limit int) ([]HistoryEntry, int, error)
	// Series returns url's outcomes, oldest first, at most SeriesMax (none:
	// empty, no error); with checks, each with its Checks (nil for one
	// recorded without them), else without (cheaper: a history that shows
	// scores needs none).
	Series(ctx context.Context, url string, checks bool) ([]HistoryEntry, error)
}
