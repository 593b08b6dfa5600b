package fetch

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
)

// readBody reads the decoded body of hresp into r (Body, Truncated, BodyErr,
// Cut): at most limit bytes, within the session's budget. start is when the
// request began, for the time a cut body took.
func (s *Session) readBody(ctx context.Context, hresp *http.Response, limit int64, r *Response, start time.Time) {
	a := s.account()
	src, lent, err := s.decoder(ctx, hresp)
	defer a.giveBack(0, lent)
	if err != nil {
		r.Body, r.BodyErr = []byte{}, err
		r.Cut = s.failReason(ctx, err, hresp, start)
		return
	}
	var chunks []*[]byte
	var total int64
	defer func() {
		for _, c := range chunks {
			chunkPool.Put(c)
		}
	}()
	kind := cutNone
	for err == nil {
		want := min(int64(readChunk), limit-total)
		var got int64
		if want > 0 {
			got, kind = a.take(ctx, want)
		}
		if got == 0 && kind == cutWait {
			err = ErrBodyBudget // the rest is unknown: the request's time is up
			break
		}
		if got == 0 {
			// Out of room: one more byte tells a longer body from one that
			// ended exactly here.
			var one [1]byte
			n, rerr := io.ReadFull(src, one[:])
			switch {
			case n == 1:
				if want == 0 {
					kind = cutNone // the document cap, not the budget
				}
				r.Truncated, r.Cut = true, s.cutReason(kind, limit, time.Since(start))
			case rerr != io.EOF:
				err = rerr
			}
			break
		}
		c := chunkPool.Get().(*[]byte)
		chunks = append(chunks, c)
		buf := (*c)[:got]
		n, rerr := readFull(src, buf)
		total += int64(n)
		a.giveBack(got-int64(n), 0)
		*c = (*c)[:n]
		if rerr == io.EOF {
			break
		}
		err = rerr
	}
	body := make([]byte, 0, total)
	for _, c := range chunks {
		body = append(body, *c...)
		*c = (*c)[:cap(*c)]
	}
	r.Body = body
	if err != nil {
		r.BodyErr = err
		r.Cut = s.failReason(ctx, err, hresp, start)
	}
}

// readFull is io.ReadFull that reports a clean end of the body as io.EOF
// even after some bytes (io.ReadFull would say io.ErrUnexpectedEOF, which
// here means a connection closed before its Content-Length).
func readFull(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// decoder wraps hresp's body in its Content-Encoding's decoder. A brotli
// stream says how large a window it needs (up to 16 MiB, allocated by the
// decoder): that memory is lent from the session's budget for the read.
func (s *Session) decoder(ctx context.Context, hresp *http.Response) (io.Reader, int64, error) {
	switch strings.ToLower(strings.TrimSpace(hresp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(hresp.Body)
		if err == io.EOF { // an empty body (HEAD, 304) carries no gzip header
			return strings.NewReader(""), 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		return zr, 0, nil
	case "deflate":
		return flate.NewReader(hresp.Body), 0, nil
	case "br":
		var first [1]byte
		n, err := io.ReadFull(hresp.Body, first[:])
		if n == 0 {
			if err == io.EOF {
				return strings.NewReader(""), 0, nil
			}
			return nil, 0, err
		}
		window := int64(1) << brotliWindowBits(first[0])
		if k := s.account().lend(ctx, window); k != cutNone {
			return nil, 0, &budgetError{kind: k}
		}
		return brotli.NewReader(io.MultiReader(strings.NewReader(string(first[:])), hresp.Body)), window, nil
	}
	return hresp.Body, 0, nil
}

// brotliWindowBits decodes WBITS from a brotli stream's first byte (RFC 7932
// section 9.1); large-window streams, which the decoder refuses, count as 24.
func brotliWindowBits(b byte) uint {
	if b&1 == 0 {
		return 16
	}
	if n := (b >> 1) & 7; n != 0 {
		return 17 + uint(n)
	}
	switch n := (b >> 4) & 7; {
	case n == 1:
		return 24
	case n != 0:
		return 8 + uint(n)
	}
	return 17
}

// budgetError is a body not read at all for want of budget (a decoder window).
type budgetError struct{ kind cutKind }

func (e *budgetError) Error() string { return ErrBodyBudget.Error() }
func (e *budgetError) Unwrap() error { return ErrBodyBudget }

// failReason says, for a person, why reading a body stopped with err. It never
// carries a library's raw text (a reset names our own address).
func (s *Session) failReason(ctx context.Context, err error, hresp *http.Response, start time.Time) string {
	took := time.Since(start)
	var be *budgetError
	switch {
	case errors.As(err, &be):
		return s.cutReason(be.kind, 0, took)
	case errors.Is(err, ErrBodyBudget):
		return s.cutReason(cutWait, 0, took)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		if took < s.c.cfg.RequestTimeout*9/10 {
			return "the scan ended before it finished arriving"
		}
		return fmt.Sprintf("it was still arriving when the request's time ran out (%s)", s.c.cfg.RequestTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before the body was complete"
	case isDecodeError(err):
		return "its " + strings.ToLower(strings.TrimSpace(hresp.Header.Get("Content-Encoding"))) + " compression is corrupt"
	}
	return "the connection failed while it was arriving"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func isDecodeError(err error) bool {
	var ce flate.CorruptInputError
	return errors.As(err, &ce) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		strings.HasPrefix(err.Error(), "brotli:")
}
