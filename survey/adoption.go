package survey

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
)

// Counts are how many sites a check or signal passed, was partial, failed
// or did not apply to.
type Counts struct {
	Pass    int `json:"pass"`
	Partial int `json:"partial"`
	Fail    int `json:"fail"`
	NA      int `json:"na"`
}

// Add counts one site whose check or signal had status s (anything but
// pass, partial and fail counts as not applicable).
func (c *Counts) Add(s report.Status) {
	switch s {
	case report.Pass:
		c.Pass++
	case report.Partial:
		c.Partial++
	case report.Fail:
		c.Fail++
	default:
		c.NA++
	}
}

func (c *Counts) merge(o Counts) {
	c.Pass += o.Pass
	c.Partial += o.Partial
	c.Fail += o.Fail
	c.NA += o.NA
}

// Total is the number of sites counted.
func (c Counts) Total() int { return c.Pass + c.Partial + c.Fail + c.NA }

// Tally is check (or signal) id → counts; it is written in report order.
type Tally map[string]*Counts

func (t Tally) add(s Statuses) {
	for _, e := range s {
		c := t[e.ID]
		if c == nil {
			c = &Counts{}
			t[e.ID] = c
		}
		c.Add(e.Status)
	}
}

// IDs are the tally's ids in report order: the catalog's order, then any
// id the catalog does not know (results of another version), sorted.
func (t Tally) IDs() []string {
	ids := make([]string, 0, len(t))
	for id := range t {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		oi, ok1 := catalogOrder[ids[i]]
		oj, ok2 := catalogOrder[ids[j]]
		switch {
		case ok1 && ok2:
			return oi < oj
		case ok1 != ok2:
			return ok1
		}
		return ids[i] < ids[j]
	})
	return ids
}

// MarshalJSON writes the ids in report order.
func (t Tally) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range t.IDs() {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(id)
		v, err := json.Marshal(t[id])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// catalogOrder ranks every web check, then every signal, then every read
// check, as reports list them.
var catalogOrder = func() map[string]int {
	m := map[string]int{}
	for _, c := range checks.Web() {
		m[c.ID] = len(m)
	}
	for _, s := range checks.Signals() {
		m[s.ID] = len(m)
	}
	for _, c := range checks.Read() {
		m[c.ID] = len(m)
	}
	return m
}()

// Slice is the adoption among one set of sites: all of them, or a rank bucket.
type Slice struct {
	// Sites are the sites scanned whose scan produced a report; the counts
	// below are among them. Unreachable sites are counted apart.
	Sites       int   `json:"sites"`
	Unreachable int   `json:"unreachable"`
	Checks      Tally `json:"checks"`
	Signals     Tally `json:"signals"`
	// Read counts each read check (R.1…) among the sites whose scan ran
	// the read suite; Profiles counts the sites by detected profile.
	Read     Tally          `json:"read"`
	Profiles map[string]int `json:"profiles"`
	// Levels counts sites by current level, index = level (0–3).
	Levels []int `json:"levels"`
	// Scores is the score histogram: ten bins of ten points, index = bin
	// (0–9, …, 90–100; 100 falls in the last).
	Scores []int `json:"scores"`
}

func newSlice() *Slice {
	return &Slice{Checks: Tally{}, Signals: Tally{}, Read: Tally{}, Profiles: map[string]int{}, Levels: make([]int, 4), Scores: make([]int, 10)}
}

func (s *Slice) add(r *Result) {
	if r.Error != "" {
		s.Unreachable++
		return
	}
	s.Sites++
	s.Checks.add(r.Checks)
	s.Signals.add(r.Signals)
	s.Read.add(r.Read)
	if r.Profile != "" {
		s.Profiles[r.Profile]++
	}
	if r.Level != nil && *r.Level >= 0 && *r.Level < len(s.Levels) {
		s.Levels[*r.Level]++
	}
	if r.Score != nil {
		s.Scores[min(max(*r.Score, 0)/10, 9)]++
	}
}

func (s *Slice) merge(o *Slice) {
	s.Sites += o.Sites
	s.Unreachable += o.Unreachable
	for k, n := range o.Profiles {
		s.Profiles[k] += n
	}
	for _, pair := range []struct{ dst, src Tally }{{s.Checks, o.Checks}, {s.Signals, o.Signals}, {s.Read, o.Read}} {
		for id, c := range pair.src {
			d := pair.dst[id]
			if d == nil {
				d = &Counts{}
				pair.dst[id] = d
			}
			d.merge(*c)
		}
	}
	for i := range s.Levels {
		s.Levels[i] += o.Levels[i]
	}
	for i := range s.Scores {
		s.Scores[i] += o.Scores[i]
	}
}

// rankThresholds are the rank buckets: the top 1k, 10k, 100k, 1M and 10M.
var rankThresholds = []int{1_000, 10_000, 100_000, 1_000_000, 10_000_000}

// Bucket is the adoption among the sites ranked Top or better.
type Bucket struct {
	Name string `json:"name"` // "top 1k"
	Top  int    `json:"top"`
	Slice
}

// SkipCounts are the list's lines a survey does not scan, by reason.
type SkipCounts struct {
	Duplicates int `json:"duplicates"`
	Invalid    int `json:"invalid"`
}

// Adoption is DIR/adoption.json: the survey's counts, overall and by rank
// bucket, and how they were made. A merge of shards adds the same counts
// as one run over the whole list.
type Adoption struct {
	Listed  int        `json:"listed"` // distinct sites the list names (this shard's share, in a shard's own report)
	Skipped SkipCounts `json:"skipped"`
	// Errors counts the unreachable sites by "code" or "code/cause"
	// (site_unreachable/timeout).
	Errors map[string]int `json:"errors"`
	Slice
	// Buckets are cumulative (the top 10k includes the top 1k), up to the
	// first that holds every ranked site.
	Buckets  []Bucket `json:"buckets"`
	Unranked int      `json:"unranked"`
	Methods  Methods  `json:"methods"`
	// Rows are the sites of the HTML report's table: every site, up to
	// MaxRows (then the first MaxRows of the list); results.ndjson holds
	// them all. Not in adoption.json.
	Rows []SiteRow `json:"-"`
}

// MaxRows bounds the HTML report's table of sites: a page a person reads,
// not a dump of the results.
const MaxRows = 1000

// SiteRow is one site of the report's table.
type SiteRow struct {
	Line  int    // the list line that named it
	URL   string // as the scanner normalised it
	Rank  int    // 0: unranked
	Score int    // -1: unreachable
	Level int
	// Error is "code/cause" of an unreachable site.
	Error string
}

// Judged reports whether the site answered and was scored.
func (r SiteRow) Judged() bool { return r.Score >= 0 }

// Refused is how many sites the address policy refused (loopback,
// private or other non-public addresses, or a port other than 80 and 443).
func (ad *Adoption) Refused() int {
	n := 0
	for k, c := range ad.Errors {
		if _, cause, ok := strings.Cut(k, "/"); ok && Refused(cause) {
			n += c
		}
	}
	return n
}

// RefusalHint says what to do when every site, or most of them (at least
// 80 % and at least 3), was refused by the address policy: a survey of
// local sites run without --allow-private or --allow. Empty otherwise.
func (ad *Adoption) RefusalHint() string {
	n := ad.Refused()
	if n == 0 || (n < ad.Listed && (n < 3 || n*5 < ad.Listed*4)) {
		return ""
	}
	which := fmt.Sprintf("%s of the %s sites were", num(n), num(ad.Listed))
	switch {
	case n == 1 && ad.Listed == 1:
		which = "the only site was"
	case n == ad.Listed:
		which = fmt.Sprintf("all %s sites were", num(n))
	}
	return which + " refused before any request: their addresses are loopback or private (or the port is not 80 or 443), which a survey does not scan unless told. " +
		"To survey local sites, run again with --allow-private (every loopback and private address, any port) or --allow IP[:PORT],… (exactly these), into a new --out"
}

// aggregator builds an Adoption from streamed results: its state is the
// counters, whatever the number of sites.
type aggregator struct {
	all      *Slice
	buckets  []*Slice // one per rankThresholds
	unranked int
	maxRank  int
	listed   int
	errors   map[string]int
	dups     int
	invalid  int
	rows     rowHeap // the MaxRows sites of the lowest list lines
}

func newAggregator() *aggregator {
	a := &aggregator{all: newSlice(), errors: map[string]int{}}
	for range rankThresholds {
		a.buckets = append(a.buckets, newSlice())
	}
	return a
}

func (a *aggregator) add(r *Result) error {
	a.listed++
	a.rows.keep(rowOf(r))
	a.all.add(r)
	if r.Error != "" {
		a.errors[errorKey(r)]++
	}
	if r.Rank <= 0 {
		a.unranked++
		return nil
	}
	a.maxRank = max(a.maxRank, r.Rank)
	for i, t := range rankThresholds {
		if r.Rank <= t {
			a.buckets[i].add(r)
		}
	}
	return nil
}

func (a *aggregator) skip(s *Skip) error {
	switch s.Reason {
	case SkipDuplicate:
		a.dups++
	default:
		a.invalid++
	}
	return nil
}

func (a *aggregator) merge(o *aggregator) {
	a.all.merge(o.all)
	for i := range a.buckets {
		a.buckets[i].merge(o.buckets[i])
	}
	a.unranked += o.unranked
	a.maxRank = max(a.maxRank, o.maxRank)
	a.listed += o.listed
	for k, n := range o.errors {
		a.errors[k] += n
	}
	a.dups += o.dups
	a.invalid += o.invalid
	for _, r := range o.rows {
		a.rows.keep(r)
	}
}

func (a *aggregator) adoption(m Methods) *Adoption {
	ad := &Adoption{Listed: a.listed, Errors: a.errors, Slice: *a.all, Unranked: a.unranked, Methods: m}
	ad.Skipped.Duplicates, ad.Skipped.Invalid = a.dups, a.invalid
	ad.Rows = append([]SiteRow(nil), a.rows...)
	sort.Slice(ad.Rows, func(i, j int) bool { return ad.Rows[i].Line < ad.Rows[j].Line })
	ad.Buckets = []Bucket{}
	for i, t := range rankThresholds {
		if a.maxRank == 0 {
			break
		}
		ad.Buckets = append(ad.Buckets, Bucket{Name: "top " + shortNumber(t), Top: t, Slice: *a.buckets[i]})
		if t >= a.maxRank {
			break
		}
	}
	return ad
}

func shortNumber(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// ErrorKeys are the error counts' keys, most frequent first.
func (ad *Adoption) ErrorKeys() []string {
	keys := make([]string, 0, len(ad.Errors))
	for k := range ad.Errors {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if ad.Errors[keys[i]] != ad.Errors[keys[j]] {
			return ad.Errors[keys[i]] > ad.Errors[keys[j]]
		}
		return strings.Compare(keys[i], keys[j]) < 0
	})
	return keys
}

// checksByLevel groups the check ids of m by the level of the catalog's
// check, and lists apart the ids this version's catalog does not know (a
// merge of results written by another version).
func checksByLevel(m Tally) (byLevel map[int][]string, unknown []string) {
	byLevel = map[int][]string{}
	for _, id := range m.IDs() {
		if c, ok := checks.ByID(id); ok {
			byLevel[c.Level] = append(byLevel[c.Level], id)
		} else {
			unknown = append(unknown, id)
		}
	}
	return byLevel, unknown
}

func rowOf(r *Result) SiteRow {
	row := SiteRow{Line: r.Line, URL: r.URL, Rank: r.Rank, Score: -1}
	switch {
	case r.Error != "":
		row.Error = errorKey(r)
	case r.Score != nil:
		row.Score = *r.Score
		if r.Level != nil {
			row.Level = *r.Level
		}
	}
	return row
}

// rowHeap keeps the MaxRows rows of the lowest list lines, whatever the
// number of sites: a max-heap on the line, whose top is evicted.
type rowHeap []SiteRow

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[i].Line > h[j].Line }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(SiteRow)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *rowHeap) keep(r SiteRow) {
	switch {
	case len(*h) < MaxRows:
		heap.Push(h, r)
	case r.Line < (*h)[0].Line:
		(*h)[0] = r
		heap.Fix(h, 0)
	}
}
