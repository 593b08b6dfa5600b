package store

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A site is in Top from the moment its outcome is recorded, whenever the
// write-behind commit lands (before Top reads the file, while it does, or
// after): recorded then ranked, many times, never missing.
func TestEmbeddedTopSeesEveryRecord(t *testing.T) {
	e, err := OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	h := e.History()
	for i := 0; i < 400; i++ {
		url := "https://s" + strconv.Itoa(i) + ".example/"
		if err := h.Record(ctx, HistoryEntry{URL: url, Score: 100, ScannedAt: time.Now().Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
		top, n, err := h.Top(ctx, 0, 1)
		if err != nil || n != i+1 || len(top) != 1 || top[0].URL != url {
			t.Fatalf("after %d records Top counts %d and ranks first %+v (%v), want %s", i+1, n, top, err, url)
		}
	}
}
