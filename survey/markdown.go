package survey

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentready/agentready/engine/report"
)

// WriteMarkdown renders the adoption report as markdown tables, with a bar
// of block characters beside each pass rate for a quick read.
func WriteMarkdown(w io.Writer, ad *Adoption) {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	m := ad.Methods
	p("# Agent readiness of %s sites\n\n", num(ad.Listed))
	p("The sites of `%s`%s, scanned with agentready %s: %s answered and were judged on the 48 checks and 5 signals, %s could not be reached.\n\n",
		mdCell(m.List.Name), mdCell(shardNote(m.Settings)), mdCell(versionOf(m)), num(ad.Sites), num(ad.Unreachable))
	if hint := ad.RefusalHint(); hint != "" {
		p("> **Refused by the address policy:** %s.\n\n", hint)
	}

	p("## Sites\n\n| sites | count |\n|---|---:|\n")
	p("| distinct sites listed | %s |\n| scanned and judged | %s |\n| unreachable | %s |\n", num(ad.Listed), num(ad.Sites), num(ad.Unreachable))
	for _, k := range ad.ErrorKeys() {
		p("| · %s | %s |\n", mdCell(k), num(ad.Errors[k]))
	}
	p("| duplicate lines (skipped) | %s |\n| invalid lines (skipped) | %s |\n\n", num(ad.Skipped.Duplicates), num(ad.Skipped.Invalid))

	p("## Levels reached\n\n| level | sites | share | |\n|---|---:|---:|---|\n")
	for i, n := range ad.Levels {
		p("| %d %s | %s | %s | %s |\n", i, report.LevelName(i), num(n), pct(n, ad.Sites), bar(n, ad.Sites))
	}
	p("\n## Scores\n\n| score | sites | share | |\n|---|---:|---:|---|\n")
	for i, n := range ad.Scores {
		hi := i*10 + 9
		if i == len(ad.Scores)-1 {
			hi = 100
		}
		p("| %d–%d | %s | %s | %s |\n", i*10, hi, num(n), pct(n, ad.Sites), bar(n, ad.Sites))
	}

	p("\n## Checks\n\nAmong the %s judged sites.\n", num(ad.Sites))
	byLevel, other := checksByLevel(ad.Checks)
	for lv := 1; lv <= 4; lv++ {
		if len(byLevel[lv]) > 0 {
			p("\n### Level %d · %s\n\n", lv, report.LevelName(lv))
			mdStatusTable(&b, ad.Checks, byLevel[lv], ad.Sites)
		}
	}
	if len(other) > 0 {
		p("\n### Checks this version does not know\n\n")
		mdStatusTable(&b, ad.Checks, other, ad.Sites)
	}
	p("\n## Identity and commerce signals (not scored)\n\nA site that publishes nothing is not applicable, never a failure.\n\n")
	mdStatusTable(&b, ad.Signals, ad.Signals.IDs(), ad.Sites)

	p("\n## Kinds of site\n\nThe profile each scan detected.\n\n")
	if len(ad.Profiles) == 0 {
		p("No scan of this survey detected a profile.\n")
	} else {
		p("| profile | sites | share |\n|---|---:|---:|\n")
		for _, id := range profileIDs(ad.Profiles) {
			p("| %s | %s | %s |\n", mdCell(id), num(ad.Profiles[id]), pct(ad.Profiles[id], ad.Sites))
		}
	}
	p("\n## Read suite (not scored)\n\n")
	if rn := readSites(ad.Read); rn == 0 {
		p("No scan of this survey ran the read suite.\n")
	} else {
		p("Each site's sample of pages, read one by one as an agent would: %s sites.\n\n", num(rn))
		mdStatusTable(&b, ad.Read, ad.Read.IDs(), rn)
	}

	p("\n## By rank\n\n")
	buckets := distinctBuckets(ad)
	switch {
	case len(ad.Buckets) == 0:
		p("The list ranks no site, so there are no rank buckets.\n")
	case len(buckets) == 0:
		p("Every site of the list is among the %s: that bucket would repeat the figures above, so there is no table by rank.\n", ad.Buckets[len(ad.Buckets)-1].Name)
	default:
		p("Pass rate of each check among the most popular sites (buckets include the ones before them).\n\n| check | all (%s) |", num(ad.Sites))
		for _, bk := range buckets {
			p(" %s (%s) |", bk.Name, num(bk.Sites))
		}
		p("\n|---|---:|%s\n", strings.Repeat("---:|", len(buckets)))
		for _, id := range append(ad.Checks.IDs(), ad.Signals.IDs()...) {
			t := ad.Checks
			if _, ok := t[id]; !ok {
				t = ad.Signals
			}
			p("| %s | %s |", mdCell(label(id)), pct(t[id].Pass, ad.Sites))
			for _, bk := range buckets {
				p(" %s |", pct(bk.passes(id), bk.Sites))
			}
			p("\n")
		}
		if ad.Unranked > 0 {
			p("\n%s sites of the list carry no rank and are counted in “all” only.\n", num(ad.Unranked))
		}
	}

	p("\n## Methods\n\n")
	p("- Report made: %s\n", m.Date)
	p("- Surveyed: %s%s\n", m.Started.Format("2006-01-02 15:04 MST"), finishedNote(m))
	p("- agentready: %s\n", mdCell(versionOf(m)))
	p("- List: `%s`, %s lines, format %s, SHA-256 `%s`\n", mdCell(m.List.Name), num(m.List.Lines), m.List.Format, m.List.SHA256)
	if m.Settings.Queue != "" {
		p("- Queue: %s\n", mdCell(queueNote(m)))
	} else {
		p("- Shard: %s\n", mdCell(m.Settings.Shard))
	}
	p("- Concurrency: %d sites at once, one per registrable domain; %d requests at once per host\n", m.Settings.Concurrency, m.Settings.PerHost)
	p("- Timeouts: %s per site, %s per request\n", m.Settings.Timeout, m.Settings.RequestTimeout)
	p("- User-Agent: `%s`\n", mdCell(m.Settings.UserAgent))
	addr := "public addresses on ports 80 and 443 only"
	if m.Settings.AllowPrivate {
		addr = "private and loopback addresses and any port allowed"
	}
	if m.Settings.Allow != "" {
		addr += "; also admitted: " + m.Settings.Allow
	}
	p("- Addresses: %s\n", addr)
	p("- Runs: %d (a survey resumes where it stopped; each site is counted once)\n", m.Runs)
	if len(m.Shards) > 0 && m.Settings.Queue == "" {
		p("- Shards merged: %d, each surveyed on its own and added up\n", len(m.Shards))
	}
	io.WriteString(w, b.String())
}

func mdStatusTable(b *strings.Builder, t Tally, ids []string, sites int) {
	b.WriteString("| check | pass | partial | fail | n/a | pass rate | |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, id := range ids {
		c := t[id]
		if c == nil {
			c = &Counts{}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(label(id)), num(c.Pass), num(c.Partial), num(c.Fail), num(c.NA), pct(c.Pass, sites), bar(c.Pass, sites))
	}
}

// bar is n/of as up to 20 block characters.
func bar(n, of int) string {
	if of == 0 {
		return ""
	}
	return strings.Repeat("█", (20*n+of/2)/of)
}

// mdCell keeps a value from breaking a table row or adding markup.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace(s)
}
