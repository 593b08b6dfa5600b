// Command shotbench measures serving a stored screenshot from the origin
// (GET /api/screenshot, budget ≥ 5k req/s: docs/benchmarks.md, "Serving a
// stored screenshot"): a 1280×800 PNG of a real capture's size, fasthttp
// load generator in the same process, 64 connections. With REDIS_URL set it
// measures the Redis state too.
//
//	go run ./bench/shotbench
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

var duration = flag.Duration("d", 5*time.Second, "load duration per measurement")

// capture is a stand-in for a homepage screenshot: flat background and rows
// of noisy "text", which PNG compresses to a real capture's size.
func capture() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < 800; y++ {
		for x := 0; x < 1280; x++ {
			c := color.RGBA{240, 240, 245, 255}
			if y%40 < 12 && x%300 < 220 {
				v := uint8(30 + 60*rng.IntN(4))
				c = color.RGBA{v, v, v, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	benchkit.Must(0, png.Encode(&buf, img))
	return buf.Bytes()
}

func main() {
	flag.Parse()
	benchkit.Header("; load generator in the same process")
	shot := capture()
	backends := []struct {
		name string
		st   store.Backend
	}{{"embedded", benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "shotbench"))))}}
	if u := os.Getenv("REDIS_URL"); u != "" {
		r := benchkit.Must(store.OpenRedis(context.Background(), u))
		backends = append(backends, struct {
			name string
			st   store.Backend
		}{"redis", r.WithPrefix(fmt.Sprintf("shotbench:%d:", time.Now().UnixNano()))})
	}
	for _, b := range backends {
		benchkit.Must(0, b.st.Screenshots().Put(context.Background(), "https://example.com/", shot, time.Now(), time.Hour))
		sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{}}})
		srv := origin.New(origin.Config{}, b.st, sc)
		ln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
		go srv.Serve(ln)
		target := "http://" + ln.Addr().String() + "/api/screenshot?url=example.com"
		rps, errs := benchkit.Load(target, 64, *duration)
		fmt.Printf("| cached screenshot (%d KB PNG), %s state, 64 connections, %s | ≥ 5k req/s | %.0f req/s, %d errors |\n", len(shot)>>10, b.name, *duration, rps, errs)
		srv.Shutdown(context.Background())
		b.st.Close()
	}
}
