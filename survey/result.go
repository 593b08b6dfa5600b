package survey

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentready/agentready/engine/report"
)

// Result is one line of DIR/results.ndjson: a site's scan, compact.
type Result struct {
	Line int    `json:"line"` // the list line that named the site
	URL  string `json:"url"`  // the target, as the scanner normalised it
	// FinalURL is where the homepage was answered, when a redirect led
	// elsewhere (another site, or https): the scanner followed it.
	FinalURL  string    `json:"finalUrl,omitempty"`
	Rank      int       `json:"rank,omitempty"`
	Timestamp time.Time `json:"timestamp"`
	Score     *int      `json:"score,omitempty"`
	Level     *int      `json:"level,omitempty"`
	Checks    Statuses  `json:"checks,omitempty"`
	Signals   Statuses  `json:"signals,omitempty"`
	// Read are the read suite's checks (R.1…) and Profile the kind of
	// site the scan detected (content, docs, api, commerce, application);
	// both absent in results of a version without them, or with the read
	// suite off.
	Read     Statuses `json:"read,omitempty"`
	Profile  string   `json:"profile,omitempty"`
	Requests int      `json:"requests"`
	Duration int64    `json:"durationMs"`
	// Error is the code of a scan that produced no report
	// (site_unreachable, internal_error); Cause is the fetcher's kind of
	// failure (dns, timeout, refused, tls_cert…) and Message the scanner's
	// words for it.
	Error   string `json:"error,omitempty"`
	Cause   string `json:"cause,omitempty"`
	Message string `json:"message,omitempty"`
}

// Statuses are check or signal ids with their status, in report order.
type Statuses []IDStatus

// IDStatus is one entry of Statuses.
type IDStatus struct {
	ID     string
	Status report.Status
}

// MarshalJSON writes an object in the entries' order.
func (s Statuses) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.ID)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.Status)
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

// UnmarshalJSON reads an object, keeping its order.
func (s *Statuses) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("statuses are not an object")
	}
	out := (*s)[:0]
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, IDStatus{ID: k.(string), Status: report.Status(v)})
	}
	*s = out
	_, err = dec.Token()
	return err
}

// Filenames in a survey's output directory.
const (
	ResultsFile  = "results.ndjson"
	SkippedFile  = "skipped.ndjson"
	ManifestFile = "survey.json"
	AdoptionFile = "adoption.json"
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
	// LockFile is held (flock) by the run writing to the directory, and
	// names its process.
	LockFile = "survey.lock"
)

// maxResultLine bounds a line of results.ndjson when it is read back; the
// survey writes about 1.5 KB per site.
const maxResultLine = 1 << 20

// resume opens results.ndjson for appending after its last complete line:
// a torn last line (no newline, or not a whole JSON object: the process
// died while writing it) is cut off, so that the site is scanned again.
// It returns how many results the file holds and the last one's list
// line. A damaged line anywhere else is an error: something other than
// the survey wrote to the file.
func resume(path string) (f *os.File, done int, lastLine int, err error) {
	_, statErr := os.Stat(path)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, 0, err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// A new file: its directory entry is made durable before any result
		// is (a queue's worker acknowledges a site once its line is synced,
		// which a lost entry would undo).
		if err = syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, 0, 0, err
		}
	}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	r := bufio.NewReaderSize(f, 256<<10)
	var good int64 // offset after the last complete line
	for {
		line, rerr := readResultLine(r)
		if rerr == io.EOF && len(line) == 0 {
			break
		}
		if errors.Is(rerr, errLineTooLong) {
			return nil, 0, 0, fmt.Errorf("%s: line %d is longer than any survey result: the file was changed by something other than the survey; move it away (or use a new --out) to start again", path, done+1)
		}
		if rerr != nil && rerr != io.EOF {
			return nil, 0, 0, rerr
		}
		complete := rerr == nil
		var head struct {
			Line int    `json:"line"`
			URL  string `json:"url"`
		}
		valid := complete && json.Unmarshal(line, &head) == nil && head.URL != "" && head.Line > 0
		if !valid {
			// Only the end may be torn: is there anything after it?
			if rerr == nil {
				if _, perr := r.Peek(1); perr == nil {
					return nil, 0, 0, fmt.Errorf("%s: line %d is not a survey result, and more lines follow it: the file was changed by something other than the survey; move it away (or use a new --out) to start again", path, done+1)
				}
			}
			break
		}
		good += int64(len(line)) + 1
		done++
		lastLine = head.Line
	}
	if err := f.Truncate(good); err != nil {
		return nil, 0, 0, err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return nil, 0, 0, err
	}
	return f, done, lastLine, nil
}

var errLineTooLong = errors.New("line too long")

// readResultLine returns the next line without its newline; io.EOF with a
// non-empty line means the file ends without one (torn).
func readResultLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		frag, err := r.ReadSlice('\n')
		buf = append(buf, frag...)
		if len(buf) > maxResultLine {
			return buf, errLineTooLong
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

// eachResult streams the results of path to fn, one decoded line at a time.
func eachResult(path string, fn func(*Result) error) error {
	return eachResultOf(path, false, fn)
}

// eachResultOf is eachResult; with tornTail, an incomplete last line (a
// worker killed while writing it) ends the stream rather than failing it.
func eachResultOf(path string, tornTail bool, fn func(*Result) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	for n := 1; ; n++ {
		line, err := readResultLine(r)
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil {
			if err == io.EOF && tornTail {
				return nil
			}
			if err == io.EOF {
				return fmt.Errorf("%s: line %d is incomplete: the survey did not finish writing it; run the survey again to complete it", path, n)
			}
			return fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		var res Result
		if err := json.Unmarshal(line, &res); err != nil {
			return fmt.Errorf("%s: line %d is not a survey result", path, n)
		}
		if err := fn(&res); err != nil {
			return err
		}
	}
}

// syncDir fsyncs a directory, so the entries made in it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
