// Package redisurl reads the one form of REDIS_URL that net/url cannot: a
// Redis Cluster's seed nodes, comma-separated in the authority
// (redis://user:password@host:port,host:port/0). origin/store and the
// Workers build of the edge (edge/workers) both read REDIS_URL through it,
// so both accept the same URLs; it depends on nothing but package strings,
// which keeps the Worker's module small.
package redisurl
