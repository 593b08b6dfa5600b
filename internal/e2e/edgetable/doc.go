// Package edgetable runs the edge's behavioural table (internal/testing/edgetest)
// against each build of the edge, with the whole service behind it: natively
// and hosted by wazero here; the Workers build in workerd (edge/workers,
// which starts workerd itself). The suites that need the whole service live
// here, so the test binaries of edge/native and wasm link only what they test.
package edgetable
