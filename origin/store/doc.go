// Package store holds the origin's state behind one interface per concern —
// scan cache, idempotency keys, screenshots, monitors and their schedule —
// with two backends: an embedded bbolt file under the data directory (single
// node, the default) and Redis (any number of origins sharing one server).
// Both pass the same conformance suite (store_test.go).
package store
