package scanreq

import (
	"strings"
	"testing"
)

func TestValidIdempotencyKey(t *testing.T) {
	for k, want := range map[string]bool{
		"": false, "a": true, "6f1c2e7a-9a1b-4c2d-8e3f-0a1b2c3d4e5f": true, strings.Repeat("k", 255): true,
		strings.Repeat("k", 256): false, "a b": false, "key…": false, "a\tb": false, "~!": true,
	} {
		if got := ValidIdempotencyKey(k); got != want {
			t.Errorf("%q: %v, want %v", k, got, want)
		}
	}
}
