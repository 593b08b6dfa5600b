package origin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

// What writing history before a scan answers costs the answer: one
// History.Record per scan (not per caller), on each backend, with the 48
// checks' marks its site's series keeps (512 sites, so each series fills
// to its 30). Compare with BenchmarkFreshScanAnswer, the whole answer it
// is part of.
func BenchmarkHistoryRecord(b *testing.B) {
	marks := make(report.Marks, 48)
	for i := range marks {
		marks[i] = report.Mark{ID: fmt.Sprintf("%d.%d", 1+i/18, 1+i%18), Status: report.Pass, Message: report.MessageHash(fmt.Sprint("message ", i))}
	}
	backends := map[string]func(b *testing.B) store.Backend{
		"embedded": func(b *testing.B) store.Backend {
			st, err := store.OpenEmbedded(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		},
	}
	if u := testenv.RedisURL(b); u != "" {
		backends["redis"] = func(b *testing.B) store.Backend {
			r, err := store.OpenRedis(context.Background(), u)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			return r.WithPrefix(fmt.Sprintf("agentready-bench:%d:", time.Now().UnixNano()))
		}
	}
	for _, name := range []string{"embedded", "redis"} {
		open, ok := backends[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			h := open(b).History()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				e := store.HistoryEntry{URL: fmt.Sprintf("https://site-%d.example/", i%512), Score: i % 100, Grade: "B", Level: 2, LevelName: "Readable", ScannedAt: time.Now(), Checks: marks}
				if err := h.Record(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A fresh JSON scan of the full fixture site through the origin (embedded
// state): the answer the history write now precedes.
func BenchmarkFreshScanAnswer(b *testing.B) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	base := serveOrigin(b, origin.Config{AllowPrivate: true}, embedded(b), sc).URL
	s := site(b, "full")
	u := base + "/api/scan?format=json&fresh=1&url=" + url.QueryEscape(s.URL)
	for b.Loop() {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
