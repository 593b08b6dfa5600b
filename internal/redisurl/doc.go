// Package redisurl reads the forms of REDIS_URL that name a Redis Cluster's
// seed nodes: comma-separated in the authority, which net/url cannot read
// (redis://user:password@host:port,host:port/0), and go-redis's own form,
// the others in addr parameters
// (redis://user:password@host:port?addr=host:port&addr=host:port).
// Seeds reads both; SplitHosts reads the comma form alone. Ambiguous (and
// its refusal, ErrAmbiguous) catches a password with an unencoded '/', '?'
// or '#', which net/url would read as part host, part path, so that no
// piece of a password becomes a host that errors and logs name.
//
// internal/redisconn, which opens the Redis of origin/store and of a
// survey's queue, reads REDIS_URL through Ambiguous and Seeds, and serve's
// check for a Redis that answers without its password (cmd/agentready)
// through Seeds; the Workers build of the edge (edge/workers) refuses an
// Ambiguous URL and reads the comma form through SplitHosts, ignoring the
// query, so there go-redis's form seeds from its first node alone (which
// follows MOVED to the others). It depends on nothing but packages errors
// and strings, which keeps the Worker's module small.
package redisurl
