// Command fixtureserver serves one fixture site from testdata/sites on
// loopback, for trying the CLI by hand and for benchmarks:
//
//	go run ./bench/fixtureserver -site full [-delay 100ms]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/agentready/agentready/internal/testing/fixture"
)

func main() {
	site := flag.String("site", "full", "site directory under testdata/sites")
	delay := flag.Duration("delay", 0, "latency added to every response")
	flag.Parse()
	s, err := fixture.Start(filepath.Join("testdata", "sites", *site), fixture.WithDelay(*delay))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer s.Close()
	fmt.Println(s.URL)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
}
