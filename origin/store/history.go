package store

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
)

// A site's series is one value on both backends, written whole at each
// record: the s2 block of one line per outcome, oldest first,
//
//	<Unix ns> <score> <level> <grade or -> <level name>\t<checks>\n
//
// where checks is report.Marks' text form (empty when the outcome came
// without them). A line, not JSON, so that reading the scores of a series
// (every /api/report) does not read its checks: a series is about 20 KB
// of text, nearly all of it checks, which repeat from scan to scan and
// which s2 therefore shrinks to a few KB. The embedded file keeps it under
// seriesPrefix + URL, Redis under seriesKey(URL); each expires SeriesIdle
// after the record that wrote it.

// maxSeriesBytes bounds a series value once decompressed (a full one is
// about 20 KB): a larger one is not ours, and is not decompressed.
const maxSeriesBytes = 1 << 20

var errSeries = errors.New("a site's history series is corrupt")

// seriesText reads a series value as its text (lines, each ending with a
// newline), checking each line's form.
func seriesText(b []byte) (string, error) {
	n, err := s2.DecodedLen(b)
	if err != nil || n > maxSeriesBytes {
		return "", errSeries
	}
	raw, err := s2.Decode(make([]byte, n), b)
	text := string(raw)
	if err != nil || len(text) == 0 || text[len(text)-1] != '\n' || strings.Count(text, "\n") > SeriesMax {
		return "", errSeries
	}
	for line := range strings.Lines(text) {
		if _, _, _, _, _, _, ok := splitLine(line); !ok {
			return "", errSeries
		}
	}
	return text, nil
}

// splitLine reads the fields of one line (its newline, if any, aside).
func splitLine(line string) (ns int64, score, level int, grade, name, marks string, ok bool) {
	head, m, ok1 := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
	f0, rest, ok2 := strings.Cut(head, " ")
	f1, rest, ok3 := strings.Cut(rest, " ")
	f2, rest, ok4 := strings.Cut(rest, " ")
	grade, name, ok5 := strings.Cut(rest, " ")
	ns, err0 := strconv.ParseInt(f0, 10, 64)
	score, err1 := strconv.Atoi(f1)
	level, err2 := strconv.Atoi(f2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || err0 != nil || err1 != nil || err2 != nil {
		return 0, 0, 0, "", "", "", false
	}
	if grade == "-" {
		grade = ""
	}
	return ns, score, level, grade, name, m, true
}

// decodeSeries reads a series value for url, oldest first; with checks,
// each outcome's Checks too (nil for one whose checks cannot be read: it
// is kept without them).
func decodeSeries(url string, b []byte, checks bool) ([]HistoryEntry, error) {
	text, err := seriesText(b)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, strings.Count(text, "\n"))
	for line := range strings.Lines(text) {
		ns, score, level, grade, name, marks, _ := splitLine(line)
		e := HistoryEntry{URL: url, Score: score, Level: level, Grade: grade, LevelName: name, ScannedAt: time.Unix(0, ns).UTC()}
		if checks && marks != "" {
			if err := e.Checks.UnmarshalText([]byte(marks)); err != nil {
				e.Checks = nil
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// appendSeries returns the series value cur (nil: none) with e added in
// time order (after every outcome not newer), keeping the newest SeriesMax.
// A corrupt cur is dropped: the series starts afresh rather than refuse
// every record after.
func appendSeries(cur []byte, e HistoryEntry) []byte {
	var text string
	if cur != nil {
		text, _ = seriesText(cur) // "" when corrupt
	}
	// Where e goes: after the last line not newer than it (almost always
	// the end).
	at := len(text)
	for at > 0 {
		start := strings.LastIndexByte(text[:at-1], '\n') + 1
		if ns, _, _, _, _, _, _ := splitLine(text[start:at]); ns <= e.ScannedAt.UnixNano() {
			break
		}
		at = start
	}
	line := lineOf(e)
	out := make([]byte, 0, len(text)+len(line))
	out = append(append(append(out, text[:at]...), line...), text[at:]...)
	for n := bytes.Count(out, []byte{'\n'}); n > SeriesMax; n-- {
		out = out[bytes.IndexByte(out, '\n')+1:]
	}
	return s2.Encode(nil, out)
}

// lineOf writes e as a series line. A grade or level name that would break
// the line (none the score gives) is written blank; checks that would are
// left out.
func lineOf(e HistoryEntry) string {
	grade := e.Grade
	if grade == "" || strings.ContainsAny(grade, " \t\n") {
		grade = "-"
	}
	name := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' {
			return ' '
		}
		return r
	}, e.LevelName)
	var marks []byte
	if e.Checks != nil {
		if b, err := e.Checks.MarshalText(); err == nil && !bytes.ContainsAny(b, "\t\n") {
			marks = b
		}
	}
	return strconv.FormatInt(e.ScannedAt.UnixNano(), 10) + " " + strconv.Itoa(e.Score) + " " + strconv.Itoa(e.Level) + " " + grade + " " + name + "\t" + string(marks) + "\n"
}
