// Package declaration reads a site's /.well-known/agentready.json: the kind
// of site it says it is (its profile) and the checks it says do not apply
// to it, each with a reason (docs/profiles.md). The format is ours, so
// there is no library for it; the reader is strict about shape and bounded
// in size, and reports what it skipped rather than failing the whole file.
package declaration

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of one declaration: a file larger than MaxBytes is not read, only
// the first MaxWaivers waivers count, and MaxProblems problems are listed
// (then one line counts the rest: reports carry them).
const (
	MaxBytes     = 64 << 10
	MaxWaivers   = 100
	MaxProblems  = 10
	MaxReason    = 500
	maxCheckID   = 8
	maxProfileID = 32
)

// Waiver says check does not apply to the site, and why.
type Waiver struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// Declaration is what the file says. Problems lists, in words, what was
// skipped (an unknown profile, a waiver without a reason…).
type Declaration struct {
	Profile  string
	Waivers  []Waiver
	Problems []string
	more     int // problems past MaxProblems
}

// Parse reads a declaration. known reports whether a profile name is one
// the scanner knows; validCheck whether a check id exists. Parse fails only
// when the body is not a JSON object.
func Parse(body []byte, known func(string) bool, validCheck func(string) bool) (*Declaration, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("the file is larger than %d KB", MaxBytes>>10)
	}
	var raw struct {
		Profile json.RawMessage   `json:"profile"`
		Waivers []json.RawMessage `json:"waivers"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("the file is not a JSON object with \"profile\" and \"waivers\"")
	}
	d := &Declaration{}
	if len(raw.Profile) > 0 && string(raw.Profile) != "null" {
		var p string
		if json.Unmarshal(raw.Profile, &p) != nil {
			d.problem("\"profile\" is not a string")
		} else if p = strings.ToLower(strings.TrimSpace(p)); len(p) > maxProfileID || !known(p) {
			d.problem("\"profile\" names no known profile")
		} else {
			d.Profile = p
		}
	}
	seen := map[string]bool{}
	for i, w := range raw.Waivers {
		if len(d.Waivers) == MaxWaivers {
			d.problem(fmt.Sprintf("only the first %d waivers count", MaxWaivers))
			break
		}
		var v Waiver
		if json.Unmarshal(w, &v) != nil {
			d.problem(fmt.Sprintf("waiver %d is not an object with \"check\" and \"reason\"", i+1))
			continue
		}
		v.Check, v.Reason = strings.TrimSpace(v.Check), strings.TrimSpace(v.Reason)
		switch {
		case len(v.Check) > maxCheckID || !validCheck(v.Check):
			d.problem(fmt.Sprintf("waiver %d names no known check", i+1))
		case v.Reason == "":
			d.problem(fmt.Sprintf("waiver %d (check %s) gives no reason", i+1, v.Check))
		case seen[v.Check]:
			d.problem(fmt.Sprintf("waiver %d repeats check %s", i+1, v.Check))
		default:
			seen[v.Check] = true
			v.Reason = clip(v.Reason)
			d.Waivers = append(d.Waivers, v)
		}
	}
	if d.more > 0 {
		d.Problems = append(d.Problems, fmt.Sprintf("and %d more problems", d.more))
	}
	return d, nil
}

// problem lists one problem, or counts it past MaxProblems.
func (d *Declaration) problem(s string) {
	if len(d.Problems) < MaxProblems {
		d.Problems = append(d.Problems, s)
	} else {
		d.more++
	}
}

// clip cuts a reason to MaxReason bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= MaxReason {
		return s
	}
	s = s[:MaxReason]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
