package survey

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/weburl"
)

// MaxLineBytes bounds one line of a list: a longer line is reported invalid
// and skipped without being held in memory.
const MaxLineBytes = 4096

// Format is how a list is written; the first line that is neither blank
// nor a comment decides it for the whole file.
type Format string

const (
	// Plain is one domain or URL per line; an entry's rank is its position
	// among the list's entries.
	Plain Format = "plain"
	// RankedCSV is "rank,domain" per line (the public top-site lists),
	// further columns ignored; a first line whose rank is not a number is
	// a header.
	RankedCSV Format = "csv"
)

// Line is one line of a list, read by a ListReader.
type Line struct {
	Number int // 1-based line number in the file
	// Ignored: blank, a comment, or a CSV header; nothing else is set.
	Ignored bool
	// Invalid says why the line is not an entry ("" for an entry); Text is
	// then the line as written, clipped.
	Invalid string
	Text    string
	Entry   Entry
}

// Entry is a site a list names.
type Entry struct {
	Rank int    // from the CSV, or the position among a plain list's entries
	URL  string // the target, normalised as the scanner reads it
	// Site is what politeness and sharding go by (siteOf): the registrable
	// domain of the target's host (eTLD+1), or for an IP address or
	// localhost the host with the URL's port.
	Site string
}

// ListReader reads a list line by line, holding one line at a time.
type ListReader struct {
	r       *bufio.Reader
	format  Format
	line    int
	entries int // data lines so far (the plain list's rank)
	header  bool
}

// NewListReader reads r.
func NewListReader(r io.Reader) *ListReader {
	return &ListReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Format is the list's format, known once its first data line was read
// ("" before).
func (l *ListReader) Format() Format { return l.format }

// Next returns the next line, or io.EOF after the last.
func (l *ListReader) Next() (Line, error) {
	raw, long, err := l.readLine()
	if err != nil {
		return Line{}, err
	}
	l.line++
	ln := Line{Number: l.line}
	if l.line == 1 {
		raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	}
	text := strings.TrimSpace(stripComment(string(raw)))
	if text == "" && !long {
		ln.Ignored = true
		return ln, nil
	}
	if l.format == "" {
		l.format = Plain
		if strings.Contains(text, ",") {
			l.format = RankedCSV
			l.header = true
		}
	}
	first := l.header
	l.header = false
	l.entries++
	ln.Text = clip(text)
	if long {
		ln.Invalid = fmt.Sprintf("the line is longer than %d bytes", MaxLineBytes)
		return ln, nil
	}
	var rank int
	target := text
	if l.format == RankedCSV {
		fields := strings.Split(text, ",")
		if len(fields) < 2 {
			ln.Invalid = "a ranked list has \"rank,domain\" on every line"
			return ln, nil
		}
		r, err := strconv.Atoi(unquote(fields[0]))
		if err != nil && first {
			// A header row ("rank,domain"): not an entry, not an error.
			l.entries--
			return Line{Number: ln.Number, Ignored: true}, nil
		}
		if err != nil || r < 1 {
			ln.Invalid = "the rank is not a positive whole number"
			return ln, nil
		}
		rank, target = r, unquote(fields[1])
	} else {
		if strings.ContainsAny(text, ", \t") {
			ln.Invalid = "a plain list has one domain or URL per line (a ranked list is \"rank,domain\" from its first line on)"
			return ln, nil
		}
		rank = l.entries
	}
	u, err := weburl.Normalize(target)
	if err != nil {
		ln.Invalid = err.Error()
		return ln, nil
	}
	ln.Text = ""
	ln.Entry = Entry{Rank: rank, URL: u.String(), Site: siteOf(u)}
	return ln, nil
}

// siteOf is the site a normalised target belongs to, for politeness (one
// scan at a time) and sharding: the registrable domain of its host, as the
// scanner judges "same site". An IP address or localhost has no registrable
// domain, and the servers on its ports are usually distinct local services
// (a list of fixture sites on 127.0.0.1), so there the site is host:port
// ("127.0.0.1:8001"; the host alone on the scheme's default port). Keyed by
// the host alone, every site of such a list would land in one shard and be
// scanned one at a time.
func siteOf(u *url.URL) string {
	site := weburl.Site(u.Hostname())
	port := u.Port()
	if port == "" {
		return site
	}
	if _, err := netip.ParseAddr(site); err != nil && site != "localhost" {
		return site
	}
	return net.JoinHostPort(site, port)
}

// readLine returns the next line without its end of line; long reports a
// line cut at MaxLineBytes (the rest was read and dropped).
func (l *ListReader) readLine() ([]byte, bool, error) {
	var buf []byte
	long := false
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes+2 {
			long = true
		} else {
			buf = append(buf, frag...)
		}
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(buf) > 0 || long):
			return bytes.TrimRight(buf, "\r\n"), long, nil
		default:
			return nil, false, err
		}
	}
}

// stripComment drops a whole-line comment, and a comment after whitespace
// ("example.com  # main site"); a # inside a URL stays.
func stripComment(s string) string {
	t := strings.TrimLeft(s, " \t")
	if strings.HasPrefix(t, "#") {
		return ""
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i]
		}
	}
	return s
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// clip keeps an invalid line short and valid UTF-8 for the skipped report.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
