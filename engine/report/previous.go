package report

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Previous compares a report with the site's scan before it: that scan's
// score and level, and the checks whose verdict or message changed since.
// Present only when a scan history holds an earlier scan of the site
// (the service's reports; a CLI scan has none).
type Previous struct {
	Timestamp time.Time `json:"timestamp"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
	LevelName string    `json:"levelName"`
	// NewlyPassing: checks that pass now and did not; NewlyFailing: checks
	// that fail now and did not; Changed: every other check whose status or
	// message changed (fail to partial, pass to partial, the same status
	// with another message…). Each in catalog order, empty rather than
	// absent.
	NewlyPassing []Change `json:"newlyPassing"`
	NewlyFailing []Change `json:"newlyFailing"`
	Changed      []Change `json:"changed"`
}

// Change is one check that differs from the previous scan.
type Change struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	From    Status `json:"from"`
	To      Status `json:"to"`
	Message string `json:"message"` // the check's message now
}

// Summary is what a scan history keeps of a scan: enough to tell what a
// later scan changed, without the whole report.
type Summary struct {
	Timestamp time.Time
	Score     int
	Grade     string
	Level     int
	LevelName string
	Checks    Marks
}

// Mark is one check as a Summary keeps it: its status and a hash of its
// message (MessageHash), which is all a comparison needs of the past.
type Mark struct {
	ID      string
	Status  Status
	Message uint32
}

// Marks are the checks of a Summary, in report order.
type Marks []Mark

// MessageHash is the short hash a Mark keeps of a check's message: 32-bit
// FNV-1a, so a changed message goes unnoticed once in four billion.
func MessageHash(message string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(message))
	return h.Sum32()
}

// Summary reduces r to what a scan history keeps (checks only: signals are
// not scored and not compared).
func (r *Result) Summary() Summary {
	s := Summary{Timestamp: r.Timestamp, Score: r.Score.Value, Grade: r.Score.Grade, Level: r.CurrentLevel, LevelName: r.Score.LevelName,
		Checks: make(Marks, len(r.Checks))}
	for i, c := range r.Checks {
		s.Checks[i] = Mark{ID: c.ID, Status: c.Status, Message: MessageHash(c.Message)}
	}
	return s
}

// Compare says how now differs from before, the summary of the site's scan
// before it. A check before does not know (added to the catalog since) is
// not compared; the lists follow now's checks, which a report keeps in
// catalog order. Names and messages are now's: a summary keeps neither.
func Compare(before Summary, now *Result) Previous {
	p := Previous{Timestamp: before.Timestamp, Score: before.Score, Grade: before.Grade, Level: before.Level, LevelName: before.LevelName,
		NewlyPassing: []Change{}, NewlyFailing: []Change{}, Changed: []Change{}}
	was := make(map[string]Mark, len(before.Checks))
	for _, m := range before.Checks {
		was[m.ID] = m
	}
	for _, c := range now.Checks {
		m, ok := was[c.ID]
		if !ok || (m.Status == c.Status && m.Message == MessageHash(c.Message)) {
			continue
		}
		ch := Change{ID: c.ID, Name: c.Name, From: m.Status, To: c.Status, Message: c.Message}
		switch {
		case c.Status == Pass && m.Status != Pass:
			p.NewlyPassing = append(p.NewlyPassing, ch)
		case c.Status == Fail && m.Status != Fail:
			p.NewlyFailing = append(p.NewlyFailing, ch)
		default:
			p.Changed = append(p.Changed, ch)
		}
	}
	return p
}

// The text form of Marks, which stores keep: one item per check, separated
// by commas, each the check's id, one letter for its status and the
// message hash in 8 hex digits ("1.1P0a1b2c3d,1.2F…": about 12 bytes a
// check).
var (
	statusLetter = map[Status]byte{Pass: 'P', Partial: 'H', Fail: 'F', NA: 'N'}
	letterStatus = map[byte]Status{'P': Pass, 'H': Partial, 'F': Fail, 'N': NA}
)

const (
	markTail = 9    // the status letter and 8 hex digits
	maxMarks = 1024 // far above any catalog; bounds what a parse allocates
	maxIDLen = 32
)

// MarshalText writes the text form; an id that is empty, too long or holds
// a comma, or a status outside pass, partial, fail and na, is refused.
func (m Marks) MarshalText() ([]byte, error) {
	if len(m) > maxMarks {
		return nil, fmt.Errorf("report: %d marks, more than %d", len(m), maxMarks)
	}
	b := make([]byte, 0, len(m)*(markTail+5))
	for i, k := range m {
		letter, ok := statusLetter[k.Status]
		if !ok {
			return nil, fmt.Errorf("report: check %q has status %q, not pass, partial, fail or na", k.ID, k.Status)
		}
		if k.ID == "" || len(k.ID) > maxIDLen || strings.ContainsRune(k.ID, ',') {
			return nil, fmt.Errorf("report: check id %q cannot be kept in a summary", k.ID)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k.ID...)
		b = append(b, letter)
		b = fmt.Appendf(b, "%08x", k.Message)
	}
	return b, nil
}

var errMarks = errors.New("report: not the text form of a summary's checks")

// UnmarshalText reads the text form MarshalText writes; anything else is an
// error and leaves m as it was.
func (m *Marks) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*m = Marks{}
		return nil
	}
	n := strings.Count(string(b), ",") + 1
	if n > maxMarks {
		return errMarks
	}
	out := make(Marks, 0, n)
	for item := range strings.SplitSeq(string(b), ",") {
		if len(item) <= markTail || len(item) > maxIDLen+markTail {
			return errMarks
		}
		id, letter, hex := item[:len(item)-markTail], item[len(item)-markTail], item[len(item)-markTail+1:]
		st, ok := letterStatus[letter]
		if !ok {
			return errMarks
		}
		h, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return errMarks
		}
		out = append(out, Mark{ID: id, Status: st, Message: uint32(h)})
	}
	*m = out
	return nil
}
