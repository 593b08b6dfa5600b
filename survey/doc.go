// Package survey runs the agent-readiness scan over a whole list of sites
// and reports the adoption of every check and signal: the driver behind
// `agentready survey`.
//
// It reads a list (one domain or URL per line, or a ranked "rank,domain"
// CSV) as a stream, scans its sites through engine.Scanner with a global
// concurrency limit and one scan per registrable domain at a time, and
// appends one compact line per site to DIR/results.ndjson, in list order
// and fsynced in small batches. The number of complete lines is the resume
// point: a survey killed at any moment continues where it stopped, and a
// torn last line is cut and scanned again. Memory stays flat: beyond the
// counters, the only per-site state is a filter of 64-bit hashes that
// finds duplicate lines.
//
// --shard I/N takes the sites whose registrable domain (host:port for an
// IP address or localhost) hashes (FNV-1a) to I modulo N, so machines
// split a list without talking to each other.
// With a QueueConfig, a run is instead one of any number of workers
// pulling the sites from one list kept in a Redis Stream (queue.go: the
// keys, the idempotent loading, the domain leases; worker.go: the Redis
// calls around the loop), each appending its results in the order they
// finish and acknowledging them once fsynced; a dead worker's entries are
// taken over after the per-site timeout. Both run one loop, scheduler.go's:
// the limit, one scan per domain, the syncs, the progress and the stop; a
// driver (localRun in run.go, worker in worker.go) says where the sites
// come from and where the results go. Merge adds shards' or workers' outputs up into the
// report one machine would have written, counting a site two workers
// scanned once. Report and Merge stream results.ndjson into adoption.json and
// render it as report.html (inline SVG, no script, nothing fetched) and
// report.md. docs/survey.md describes the files and the commands.
package survey
