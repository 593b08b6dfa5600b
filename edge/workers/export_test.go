package workers

// What the workerd tests (package workers_test) use of this package's own
// tests against a Redis Cluster.
var (
	KeySlot           = keySlot
	ClusterTarget     = clusterTarget
	KeysOnEveryMaster = keysOnEveryMaster
	MasterOf          = masterOf
	Migrating         = migrating
	KeysIn            = keysIn
)
