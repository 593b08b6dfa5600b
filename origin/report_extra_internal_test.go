package origin

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
)

// What /api/report adds to a cached report, made afresh (the first read of
// a report within the hot cache's seconds: decoding the report, reading
// the series, planning) and kept (every read after it): the part of a
// report page's cost at the origin that is not HTTP. The report is the
// full fixture's golden report (23 KB); its site has a full series.
func BenchmarkReportExtra(b *testing.B) {
	st, err := store.OpenEmbedded(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	golden, err := os.ReadFile("../engine/testdata/golden/full.json")
	if err != nil {
		b.Fatal(err)
	}
	const url = "https://full.example/"
	raw := bytes.TrimSpace(bytes.Replace(golden, []byte("http://{{HOST}}/"), []byte(url), 1))
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) // the golden report's timestamp
	sc := &scanner{cfg: Config{CacheTTL: 10 * time.Minute}, history: st.History()}
	ctx := context.Background()
	marks := (&report.Result{Checks: make([]report.Check, 48)}).Summary().Checks
	for i := range marks {
		marks[i].ID, marks[i].Status = "1."+string(rune('a'+i%26)), report.Pass
	}
	for i := range store.SeriesMax {
		if err := st.History().Record(ctx, store.HistoryEntry{URL: url, Score: 50 + i, Grade: "C", Level: 1, LevelName: "Discoverable", ScannedAt: at.Add(time.Duration(i-store.SeriesMax) * time.Hour), Checks: marks}); err != nil {
			b.Fatal(err)
		}
	}
	served := time.Now() // when the report was scanned, as far as the caches know
	b.Run("made", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++ // another report each time: nothing kept
			if _, err := sc.reportExtra(ctx, url, &scanned{raw: raw, scannedAt: served.Add(time.Duration(i))}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			if _, err := sc.reportExtra(ctx, url, &scanned{raw: raw, scannedAt: served}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
