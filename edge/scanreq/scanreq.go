// Package scanreq holds the syntax rules of a scan request that both the edge
// (before it charges) and the origin (before it scans) enforce. It depends on
// nothing, so the edge's WebAssembly builds and the origin can share it.
package scanreq

// MaxBody is the largest POST /api/scan body (docs/api.md): {"url": "…"}
// needs a few hundred bytes.
const MaxBody = 64 << 10

// ValidIdempotencyKey reports a key of 1–255 visible ASCII characters.
func ValidIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// ReportAt reads the at of a report's permanent link (/report?url=…&at=…,
// /api/report?url=…&at=…): the unix second of one scan, 1 to 12 ASCII
// digits. ok is false for anything else, the empty string included.
func ReportAt(at string) (seconds int64, ok bool) {
	if at == "" || len(at) > 12 {
		return 0, false
	}
	for i := 0; i < len(at); i++ {
		if at[i] < '0' || at[i] > '9' {
			return 0, false
		}
		seconds = seconds*10 + int64(at[i]-'0')
	}
	return seconds, true
}
