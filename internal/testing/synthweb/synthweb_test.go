package synthweb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// Every kind of synthetic site, scanned alone, gets exactly its pinned
// verdicts: the pins the bench and the survey tests count from are true.
func TestEveryKindGetsItsPinnedVerdicts(t *testing.T) {
	w, err := Start("../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	exp, err := LoadExpectations("../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{
		RequestTimeout: time.Second, // a hung site's timeout, not 5 s
		Policy:         loopback.Policy(), Resolver: w}})
	// One site of each kind: every profile served directly, slowly and
	// through a redirect, a hung site and a name that does not resolve.
	seen := map[string]int{}
	for i := 1; i <= 400; i++ {
		k := KindOf(i)
		key := fmt.Sprintf("%s redirect=%v slow=%v hung=%v nxdomain=%v", k.Profile, k.RedirectTo != 0, k.Delay > 0, k.Hung, k.NoSuchHost)
		if _, ok := seen[key]; !ok && (k.Delay == 0 || k.Profile == "full") {
			seen[key] = i
		}
	}
	if len(seen) < 2*len(Profiles)+3 {
		t.Fatalf("only %d kinds among the first 400 sites: %v", len(seen), seen)
	}
	for key, i := range seen {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			want := exp.Of(KindOf(i))
			res, stats, err := sc.ScanWithStats(context.Background(), w.URL(i), nil)
			if want.Error != "" {
				var se *apierr.Error
				var fe *fetch.Error
				if !errors.As(err, &se) || string(se.Code) != want.Error || !errors.As(err, &fe) || string(fe.Kind) != want.Cause {
					t.Fatalf("site %d: %v, want %s/%s", i, err, want.Error, want.Cause)
				}
				return
			}
			if err != nil {
				t.Fatalf("site %d: %v", i, err)
			}
			for _, c := range res.Checks {
				if string(c.Status) != want.Checks[c.ID] {
					t.Errorf("site %d check %s: %s, pinned %s — %s", i, c.ID, c.Status, want.Checks[c.ID], c.Message)
				}
			}
			for _, s := range res.Signals {
				if string(s.Status) != want.Signals[s.ID] {
					t.Errorf("site %d signal %s: %s, pinned %s — %s", i, s.ID, s.Status, want.Signals[s.ID], s.Message)
				}
			}
			if r := KindOf(i).RedirectTo; r != 0 && stats.FinalURL != w.URL(r) {
				t.Errorf("site %d redirects to %s; the homepage was answered at %q", i, w.URL(r), stats.FinalURL)
			}
		})
	}
}

func TestHostsAndNumbers(t *testing.T) {
	for i := 1; i <= 1000; i++ {
		if n := Number(Host(i) + ":8080"); n != i {
			t.Fatalf("Number(Host(%d)) = %d", i, n)
		}
	}
	for _, h := range []string{"s000010.test", "example.com", "s0.test", "www.s000008.test", "sx.test"} {
		if n := Number(h); n != 0 {
			t.Errorf("Number(%q) = %d, want 0", h, n)
		}
	}
}
