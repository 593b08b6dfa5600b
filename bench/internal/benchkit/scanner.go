package benchkit

import (
	"crypto/tls"
	"crypto/x509"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/fixture"
)

// LoopbackScanner is a scanner that may reach fixture sites on loopback (any
// port) and trusts site's certificate when it serves TLS. fc's other
// settings (per-host connections, timeouts) are kept.
func LoopbackScanner(site *fixture.Site, fc fetch.Config) *engine.Scanner {
	fc.Policy = fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
	if cert := site.Certificate(); cert != nil {
		pool := x509.NewCertPool()
		pool.AddCert(cert)
		fc.TLS = &tls.Config{RootCAs: pool}
	}
	return engine.New(engine.Options{Fetch: fc})
}
