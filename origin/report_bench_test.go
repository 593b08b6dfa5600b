package origin_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/origin"
)

// What a cached report page costs the origin: GET /api/report of a site
// scanned once (the full fixture, embedded state), over loopback HTTP. The
// edge asks it for every report page it does not hold.
func BenchmarkReportAnswer(b *testing.B) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	base := serveOrigin(b, origin.Config{AllowPrivate: true}, embedded(b), sc).URL
	s := site(b, "full")
	fetchOK := func(u string) int {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: status %d", u, resp.StatusCode)
		}
		return int(n)
	}
	for range 2 { // two scans: a history of two
		fetchOK(base + "/api/scan?format=json&fresh=1&url=" + url.QueryEscape(s.URL))
	}
	u := base + "/api/report?url=" + url.QueryEscape(s.URL)
	b.SetBytes(int64(fetchOK(u)))
	for b.Loop() {
		fetchOK(u)
	}
}
