// Package loopback is the fetch policy of tests whose sites are httptest
// servers on 127.0.0.1 with any port, which the scanner's default policy
// refuses. Only tests import it: nothing shipped may scan loopback.
package loopback

import "github.com/agentready/agentready/engine/fetch"

// Policy lets the scanner reach private and loopback addresses on any port.
func Policy() fetch.AddressPolicy {
	return fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
}
