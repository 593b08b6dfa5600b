package monitor

import (
	"sort"
	"testing"
	"time"
)

// A run's report and event ids have webhook.NewID's form, and sort as
// their times do (what keeps a run's new records beside the newest in the
// embedded store).
func TestTimeIDsSortByTime(t *testing.T) {
	base := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	var ids []string
	seen := map[string]bool{}
	for i := range 200 {
		at := base.Add(time.Duration(i*37) * time.Millisecond)
		if i%7 == 0 {
			at = at.Add(400 * 24 * time.Hour) // a later year: every character of the time may change
		}
		id, err := timeID("evt", at)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != len("evt_")+26 || !plausibleID(id, "evt_") {
			t.Fatalf("%q: want evt_ and 26 lowercase letters and digits", id)
		}
		if seen[id] {
			t.Fatalf("%q made twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	byTime := append([]string(nil), ids...)
	sort.SliceStable(byTime, func(i, j int) bool { return idTime(byTime[i]) < idTime(byTime[j]) })
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	for i := range sorted {
		if idTime(sorted[i]) != idTime(byTime[i]) {
			t.Fatalf("ids in byte order are not in time order at %d: %s", i, sorted[i])
		}
	}
	if a, _ := timeID("rep", base); idTime(a) != base.UnixMilli() {
		t.Errorf("%q holds %d ms, want %d", a, idTime(a), base.UnixMilli())
	}
}

// idTime reads back the milliseconds timeID wrote.
func idTime(id string) int64 {
	var ms int64
	for _, c := range id[4:14] {
		d := int64(0)
		for i := range sortedDigits {
			if rune(sortedDigits[i]) == c {
				d = int64(i)
			}
		}
		ms = ms<<5 | d
	}
	return ms
}
