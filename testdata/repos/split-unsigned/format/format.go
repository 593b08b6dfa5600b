// Package format encodes events. Its helper has "Sign" in no name and sets no
// signature: calling it does not sign a delivery.
package format

import "encoding/json"

// Body encodes an event.
func Body(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
