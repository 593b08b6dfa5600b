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

// A permanent link's at is the edge's and the origin's one rule.
func TestReportAt(t *testing.T) {
	for at, want := range map[string]int64{"1733400000": 1733400000, "0": 0, "999999999999": 999999999999} {
		if got, ok := ReportAt(at); !ok || got != want {
			t.Errorf("ReportAt(%q) = %d, %v; want %d", at, got, ok, want)
		}
	}
	for _, bad := range []string{"", "1234567890123", "-1", "+5", "1e9", "17334 ", "0x10", "١٢"} {
		if _, ok := ReportAt(bad); ok {
			t.Errorf("ReportAt(%q) accepted", bad)
		}
	}
}
