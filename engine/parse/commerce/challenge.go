package commerce

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/clip"
)

// Challenge is one auth challenge of a WWW-Authenticate field (RFC 9110 §11.3).
type Challenge struct {
	Scheme  string
	Token68 string            // set instead of Params for token68 challenges
	Params  map[string]string // names lower-cased, quoted-string values unescaped
	// Problems are syntax faults inside this challenge (a duplicate or
	// valueless parameter, an unterminated quoted string).
	Problems []string
}

// Caps on what a hostile header can make the parser do.
const (
	maxHeaderBytes = 16 << 10
	maxChallenges  = 32
	maxParams      = 64
)

// ParseChallenges reads WWW-Authenticate field values (one per header line)
// into challenges. net/http has no exported parser for this grammar (it only
// parses Basic credentials), and the list syntax is ambiguous without
// lookahead: a comma separates both challenges and a challenge's parameters,
// and `name=` may begin an auth-param or end a token68. So this is a small
// hand-written scanner of RFC 9110 §11.2-11.3:
//
//	challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param = token BWS "=" BWS ( token / quoted-string )
//	token68    = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//
// It never fails as a whole: what cannot be read is a Problem of the
// challenge it occurs in (or of a synthetic challenge with an empty Scheme).
func ParseChallenges(fields []string) []Challenge {
	var out []Challenge
	total := 0
	for _, f := range fields {
		total += len(f)
		if total > maxHeaderBytes {
			out = append(out, Challenge{Problems: []string{fmt.Sprintf("the WWW-Authenticate fields exceed %d KiB; the rest was not read", maxHeaderBytes>>10)}})
			break
		}
		p := &scanner{s: f}
		out = append(out, p.challenges()...)
		if len(out) >= maxChallenges {
			out = out[:maxChallenges]
			break
		}
	}
	return out
}

type scanner struct {
	s string
	i int
}

func (p *scanner) eof() bool { return p.i >= len(p.s) }

func (p *scanner) ows() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

func (p *scanner) token() string {
	start := p.i
	for !p.eof() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string at p.i (which is '"'), unescaping quoted-pairs.
func (p *scanner) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i+1 < len(p.s) {
				b.WriteByte(p.s[p.i+1])
				p.i += 2
				continue
			}
		}
		b.WriteByte(c)
		p.i++
	}
	return b.String(), false
}

// skipElement advances past the current list element, to the next top-level
// comma, stepping over quoted strings.
func (p *scanner) skipElement() {
	for !p.eof() && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
}

func (p *scanner) challenges() []Challenge {
	var out []Challenge
	var cur *Challenge
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for !p.eof() && len(out) < maxChallenges {
		p.ows()
		if p.eof() {
			break
		}
		if p.s[p.i] == ',' { // empty list element
			p.i++
			continue
		}
		start := p.i
		name := p.token()
		if name == "" {
			bad := Challenge{Problems: []string{fmt.Sprintf("unexpected %q at position %d", printable(p.s[p.i]), p.i+1)}}
			if cur != nil {
				cur.Problems = append(cur.Problems, bad.Problems...)
			} else {
				out = append(out, bad)
			}
			p.skipElement()
			continue
		}
		// Is this element an auth-param of the current challenge?
		save := p.i
		p.ows()
		if cur != nil && !p.eof() && p.s[p.i] == '=' {
			if cur.Token68 != "" {
				cur.Problems = append(cur.Problems, fmt.Sprintf("parameter %q follows the token68 %q; a challenge has one or the other", clip.To(name, maxQuoted), clip.To(cur.Token68, maxQuoted)))
			}
			p.i++
			p.ows()
			p.param(cur, name)
			continue
		}
		p.i = save
		// Otherwise it begins a new challenge.
		flush()
		cur = &Challenge{Scheme: name, Params: map[string]string{}}
		if p.eof() || p.s[p.i] == ',' {
			continue
		}
		if p.s[p.i] != ' ' && p.s[p.i] != '\t' {
			cur.Problems = append(cur.Problems, fmt.Sprintf("the scheme %q is followed by %q instead of a space", clip.To(p.s[start:p.i], maxQuoted), printable(p.s[p.i])))
			p.skipElement()
			continue
		}
		p.ows()
		if p.eof() || p.s[p.i] == ',' {
			continue
		}
		// token68 or the first auth-param.
		t := p.i
		for !p.eof() && isToken68(p.s[p.i]) {
			p.i++
		}
		for !p.eof() && p.s[p.i] == '=' {
			p.i++
		}
		save = p.i
		p.ows()
		if save > t && (p.eof() || p.s[p.i] == ',') {
			// token68 characters then only '='s up to the element's end.
			cur.Token68 = p.s[t:save]
			continue
		}
		p.i = t
		pname := p.token()
		p.ows()
		if pname == "" || p.eof() || p.s[p.i] != '=' {
			cur.Problems = append(cur.Problems, fmt.Sprintf("expected a parameter name=value at position %d", t+1))
			p.skipElement()
			continue
		}
		p.i++
		p.ows()
		p.param(cur, pname)
	}
	flush()
	return out
}

// param reads the value of auth-param name at p.i into c.
func (p *scanner) param(c *Challenge, name string) {
	key := strings.ToLower(name)
	var val string
	switch {
	case p.eof() || p.s[p.i] == ',':
		c.Problems = append(c.Problems, fmt.Sprintf("parameter %q has no value", clip.To(name, maxQuoted)))
		return
	case p.s[p.i] == '"':
		v, ok := p.quoted()
		if !ok {
			c.Problems = append(c.Problems, fmt.Sprintf("the quoted value of %q is not closed", clip.To(name, maxQuoted)))
		}
		val = v
	default:
		val = p.token()
		if val == "" {
			c.Problems = append(c.Problems, fmt.Sprintf("parameter %q has %q where a token or quoted string belongs", clip.To(name, maxQuoted), printable(p.s[p.i])))
			p.skipElement()
			return
		}
	}
	p.ows()
	if !p.eof() && p.s[p.i] != ',' {
		c.Problems = append(c.Problems, fmt.Sprintf("unexpected %q after the value of %q", printable(p.s[p.i]), clip.To(name, maxQuoted)))
		p.skipElement()
	}
	if _, dup := c.Params[key]; dup {
		c.Problems = append(c.Problems, fmt.Sprintf("parameter %q appears twice", clip.To(key, maxQuoted)))
		return
	}
	if len(c.Params) >= maxParams {
		c.Problems = append(c.Problems, fmt.Sprintf("more than %d parameters", maxParams))
		return
	}
	c.Params[key] = val
}

func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return string(c)
}
