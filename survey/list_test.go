package survey

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/weburl"
)

// readAll describes every line of a list that is not ignored, and the skips
// and items the source draws from it.
func readAll(t testing.TB, r io.Reader) (lines []string, format Format) {
	t.Helper()
	lr := NewListReader(r)
	for {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return lines, lr.Format()
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ln.Ignored:
		case ln.Invalid != "":
			lines = append(lines, fmt.Sprintf("%d invalid %q: %s", ln.Number, ln.Text, ln.Invalid))
		default:
			lines = append(lines, fmt.Sprintf("%d #%d %s (%s)", ln.Number, ln.Entry.Rank, ln.Entry.URL, ln.Entry.Site))
		}
	}
}

func TestListFormats(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format Format
		want   []string
		skips  []string
	}{
		{"plain.txt", Plain, []string{
			"3 #1 https://example.com/ (example.com)",
			"4 #2 https://www.example.org/ (example.org)",
			"5 #3 https://example.com/ (example.com)",
			"6 #4 http://example.net:8080/ (example.net)",
			`7 invalid "not a domain": a plain list has one domain or URL per line (a ranked list is "rank,domain" from its first line on)`,
			`8 invalid "ftp://example.com/": url scheme "ftp" is not supported: only http and https can be scanned`,
			"9 #7 https://example.com/ (example.com)",
			"10 #8 https://shop.example.co.uk/ (example.co.uk)",
			`11 invalid "1,example.com": a plain list has one domain or URL per line (a ranked list is "rank,domain" from its first line on)`,
			"12 #10 https://localhost/ (localhost)",
		}, []string{"5 duplicate", "7 invalid", "8 invalid", "9 duplicate", "11 invalid"}},
		{"ranked.csv", RankedCSV, []string{
			"2 #1 https://example.com/ (example.com)",
			"3 #2 https://www.example.org/ (example.org)",
			"6 #3 https://example.net/ (example.net)",
			`7 invalid "x,example.info": the rank is not a positive whole number`,
			`8 invalid "4,": url is empty: give a domain such as example.com or a full http(s) URL`,
			"9 #5 https://example.com/ (example.com)",
			`10 invalid "6": a ranked list has "rank,domain" on every line`,
			`11 invalid "0,example.edu": the rank is not a positive whole number`,
			"12 #7 https://blog.example.co.uk/ (example.co.uk)",
		}, []string{"7 invalid", "8 invalid", "9 duplicate", "10 invalid", "11 invalid"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("../testdata/survey/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, format := readAll(t, bytes.NewReader(b))
			if format != tc.format {
				t.Errorf("format %q, want %q", format, tc.format)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// The whole list is one shard: every skip is reported once, in order.
			src := newSource(bytes.NewReader(b), Shard{})
			var skips []string
			for {
				_, sk, err := src.next()
				if err == io.EOF {
					break
				}
				if sk != nil {
					skips = append(skips, fmt.Sprintf("%d %s", sk.Line, sk.Reason))
				}
			}
			if strings.Join(skips, ",") != strings.Join(tc.skips, ",") {
				t.Errorf("skips %v, want %v", skips, tc.skips)
			}
		})
	}
}

// A line longer than MaxLineBytes is one invalid line, however long, and
// the lines after it are read as usual; so is a list without a final
// newline, with CRLF ends or a byte-order mark.
func TestListEdges(t *testing.T) {
	long := strings.Repeat("a", 3*MaxLineBytes) + ".com"
	got, _ := readAll(t, strings.NewReader("\xef\xbb\xbfexample.com\r\n"+long+"\r\nexample.org"))
	want := []string{"1 #1 https://example.com/ (example.com)", "", "3 #3 https://example.org/ (example.org)"}
	if len(got) != 3 || got[0] != want[0] || got[2] != want[2] || !strings.Contains(got[1], "longer than 4096 bytes") {
		t.Errorf("got %q", got)
	}
	if len(got) == 3 && len(got[1]) > 400 {
		t.Errorf("the long line is echoed at %d bytes, want it clipped", len(got[1]))
	}
	// A ranked list with no header.
	if got, f := readAll(t, strings.NewReader("1,a.example\n2,b.example\n")); f != RankedCSV || len(got) != 2 {
		t.Errorf("headerless CSV: %s %q", f, got)
	}
	if got, _ := readAll(t, strings.NewReader("\n\n# only comments\n")); len(got) != 0 {
		t.Errorf("comments only: %q", got)
	}
}

// FuzzParseList: any bytes give lines in order, entries the scanner reads
// back as they are, ranks ≥ 1, and invalid lines echoed short and valid.
func FuzzParseList(f *testing.F) {
	for _, name := range []string{"plain.txt", "ranked.csv"} {
		if b, err := os.ReadFile("../testdata/survey/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("1,\"a.example\"\r\n2,b.example # c\n\xff\xfe,x\n"))
	f.Add([]byte("example.com\n" + strings.Repeat("x", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := NewListReader(bytes.NewReader(data))
		last := 0
		for n := 0; ; n++ {
			ln, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ln.Number != last+1 {
				t.Fatalf("line %d after %d", ln.Number, last)
			}
			last = ln.Number
			if ln.Invalid != "" {
				if len(ln.Text) > 210 || !utf8.ValidString(ln.Text) {
					t.Fatalf("invalid line echoed as %q", ln.Text)
				}
				continue
			}
			if ln.Ignored {
				continue
			}
			if ln.Entry.Rank < 1 {
				t.Fatalf("rank %d", ln.Entry.Rank)
			}
			u, err := weburl.Normalize(ln.Entry.URL)
			if err != nil || u.String() != ln.Entry.URL {
				t.Fatalf("entry %q does not read back (%v)", ln.Entry.URL, err)
			}
			if ln.Entry.Site == "" || !strings.Contains(u.Hostname(), strings.Trim(ln.Entry.Site, "[]")) {
				t.Fatalf("site %q of %q", ln.Entry.Site, ln.Entry.URL)
			}
		}
	})
}
