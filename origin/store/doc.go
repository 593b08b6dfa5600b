// Package store holds the origin's state behind one interface per concern —
// scan cache, idempotency keys, screenshots, monitors and their schedule —
// with two backends: an embedded bbolt file under the data directory (single
// node, the default) and Redis, one server or a Redis Cluster (any number of
// origins sharing it). Both pass the same conformance suite (store_test.go),
// on one Redis and on a Cluster alike.
package store
