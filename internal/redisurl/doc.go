// Package redisurl reads the forms of REDIS_URL that name a Redis Cluster's
// seed nodes: comma-separated in the authority, which net/url cannot read
// (redis://user:password@host:port,host:port/0), and go-redis's own form,
// the others in addr parameters
// (redis://user:password@host:port?addr=host:port&addr=host:port).
// origin/store (and with it serve's start-up checks) reads both through
// Seeds; the Workers build of the edge (edge/workers) reads the comma form
// through SplitHosts and ignores the query, so there go-redis's form seeds
// from its first node alone (which follows MOVED to the others). It depends
// on nothing but packages errors and strings, which keeps the Worker's
// module small.
package redisurl
