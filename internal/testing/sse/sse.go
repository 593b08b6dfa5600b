// Package sse reads Server-Sent Events streams as the WHATWG HTML standard's
// event-stream parsing algorithm does (fields, comments, multi-line data,
// CRLF/CR/LF line ends, id and retry). Tests and benchmarks use it as the
// client side of GET /api/scan.
package sse

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Event is one dispatched event.
type Event struct {
	ID    string
	Name  string // "message" when the stream names none
	Data  string
	Retry int // the last retry value seen, in ms
}

// Reader yields events from a stream.
type Reader struct {
	r      *bufio.Reader
	lastID string
	retry  int
}

// NewReader wraps a stream.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// readLine returns one line without its terminator (CRLF, LF or CR).
func (r *Reader) readLine() (string, error) {
	var b strings.Builder
	for {
		c, err := r.r.ReadByte()
		if err != nil {
			if b.Len() > 0 && err == io.EOF {
				return b.String(), nil
			}
			return "", err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if n, err := r.r.Peek(1); err == nil && n[0] == '\n' {
				r.r.ReadByte()
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

// Next returns the next event, or io.EOF at the end of the stream.
func (r *Reader) Next() (Event, error) {
	var data strings.Builder
	name, hasData := "", false
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if line == "" {
			if !hasData {
				name = ""
				continue
			}
			d := strings.TrimSuffix(data.String(), "\n")
			if name == "" {
				name = "message"
			}
			return Event{ID: r.lastID, Name: name, Data: d, Retry: r.retry}, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				r.lastID = value
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil {
				r.retry = n
			}
		}
	}
}
