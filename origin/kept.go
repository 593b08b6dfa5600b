package origin

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/agentready/agentready/origin/store"
)

// keptReports keeps each scan's report for Config.ReportKeep (30 days),
// long after the scan cache (Config.CacheTTL) forgot it, so a shared
// /report link still shows the site's latest outcome, and a permanent link
// (/report?url=…&at=<unix seconds>) shows one scan. It lives in the scan
// cache's store under keys of its own: the report under its scan's second,
// and the site's latest as that second alone, so each report is stored once
// and put reads a few bytes, not the last report, to order the writes.
type keptReports struct {
	cache store.ScanCache
	ttl   time.Duration
}

// keptKey is the key of url's report scanned in at's second; the zero time
// is the key of url's latest: not a second copy of the report, the second
// it was scanned in (a few bytes). url is the requested normalised URL, as
// the scan cache keys it.
func keptKey(url string, at time.Time) string {
	if at.IsZero() {
		return "kept|latest|" + url
	}
	return "kept|" + strconv.FormatInt(at.Unix(), 10) + "|" + url
}

// put keeps raw, url's report scanned at at, under its second, and makes
// that second the site's latest unless a later scan (another origin's, or
// one whose write landed first) is the latest already.
func (k keptReports) put(ctx context.Context, url string, raw []byte, at time.Time) error {
	if err := k.cache.Put(ctx, keptKey(url, at), raw, at, k.ttl); err != nil {
		return err
	}
	if _, latest, err := k.cache.Get(ctx, keptKey(url, time.Time{})); err == nil && latest.After(at) {
		return nil
	}
	return k.cache.Put(ctx, keptKey(url, time.Time{}), strconv.AppendInt(nil, at.Unix(), 10), at, k.ttl)
}

// get is url's kept report of the scan in at's second, or its latest when
// at is zero. ok is false when none is kept; err is set only when the
// store does not answer.
func (k keptReports) get(ctx context.Context, url string, at time.Time) (*scanned, bool, error) {
	if at.IsZero() {
		_, latest, err := k.cache.Get(ctx, keptKey(url, time.Time{}))
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		case latest.IsZero():
			return nil, false, nil
		}
		at = latest
	}
	raw, scannedAt, err := k.cache.Get(ctx, keptKey(url, at))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	if err != nil || len(raw) == 0 || raw[0] != '{' || scannedAt.Unix() != at.Unix() {
		return nil, false, nil
	}
	return &scanned{raw: raw, scannedAt: scannedAt, cached: true, kept: true}, true, nil
}

// kept is the scanner's kept reports, in its scan cache's store.
func (s *scanner) kept() keptReports { return keptReports{cache: s.cache, ttl: s.cfg.ReportKeep} }
