// Package store holds the origin's state behind one interface per concern —
// scan cache, idempotency keys, screenshots, monitors and their schedule —
// with two backends: an embedded bbolt file under the data directory (single
// node, the default) and Redis, one server or a Redis Cluster (any number of
// origins sharing it). Both pass the same conformance suite (store_test.go),
// on one Redis and on a Cluster alike.
//
// The scan history keeps, per site, the latest outcome (ranked for the
// showcase) and a series of the last SeriesMax outcomes, each with its
// checks' statuses and message hashes (history.go): what a later scan's
// report compares with. A series is reclaimed SeriesIdle after the site's
// last scan, by Redis's expiry or the embedded file's sweep.
package store
