package declaration

import (
	"fmt"
	"strings"
	"testing"
)

var profiles = map[string]bool{"content": true, "docs": true, "api": true, "commerce": true, "application": true}

func known(p string) bool { return profiles[p] }
func check(id string) bool {
	return id == "1.14" || id == "2.1" || id == "R.5"
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, body  string
		profile     string
		waivers     int
		problems    int
		wantErr     bool
		firstReason string
	}{
		{"profile and waiver", `{"profile":"Docs","waivers":[{"check":"1.14","reason":"We publish a changelog page instead."}]}`, "docs", 1, 0, false, "We publish a changelog page instead."},
		{"unknown profile", `{"profile":"blog"}`, "", 0, 1, false, ""},
		{"profile not a string", `{"profile":3}`, "", 0, 1, false, ""},
		{"waiver without reason", `{"waivers":[{"check":"1.14"}]}`, "", 0, 1, false, ""},
		{"unknown check", `{"waivers":[{"check":"9.9","reason":"x"}]}`, "", 0, 1, false, ""},
		{"repeated check", `{"waivers":[{"check":"2.1","reason":"a"},{"check":"2.1","reason":"b"}]}`, "", 1, 1, false, "a"},
		{"waiver not an object", `{"waivers":["1.14"]}`, "", 0, 1, false, ""},
		{"read check", `{"waivers":[{"check":"R.5","reason":"No markdown twins by policy."}]}`, "", 1, 0, false, "No markdown twins by policy."},
		{"not an object", `["docs"]`, "", 0, 0, true, ""},
		{"html", `<html>`, "", 0, 0, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse([]byte(c.body), known, check)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if d.Profile != c.profile || len(d.Waivers) != c.waivers || len(d.Problems) != c.problems {
				t.Fatalf("got %+v, want profile %q, %d waivers, %d problems", d, c.profile, c.waivers, c.problems)
			}
			if c.waivers > 0 && d.Waivers[0].Reason != c.firstReason {
				t.Errorf("reason %q, want %q", d.Waivers[0].Reason, c.firstReason)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	if _, err := Parse([]byte(`{"profile":"`+strings.Repeat("x", MaxBytes)+`"}`), known, check); err == nil {
		t.Fatal("a file over MaxBytes was read")
	}
	var b strings.Builder
	b.WriteString(`{"waivers":[`)
	for i := 0; i < MaxWaivers+5; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"check":"1.14","reason":"r"}`)
	}
	b.WriteString("]}")
	d, err := Parse([]byte(b.String()), known, func(string) bool { return true })
	if err != nil || len(d.Waivers) != 1 {
		t.Fatalf("got %v %+v", err, d)
	}
	// A file of nothing but mistakes lists MaxProblems of them and counts the rest.
	junk := `{"waivers":[` + strings.Repeat(`1,`, 5000) + `1]}`
	d, err = Parse([]byte(junk), known, check)
	if err != nil || len(d.Problems) != MaxProblems+1 || d.Problems[MaxProblems] != fmt.Sprintf("and %d more problems", 5001-MaxProblems) {
		t.Fatalf("%v: %d problems, last %q", err, len(d.Problems), d.Problems[len(d.Problems)-1])
	}
	long := strings.Repeat("é", MaxReason)
	d, _ = Parse([]byte(`{"waivers":[{"check":"1.14","reason":"`+long+`"}]}`), known, check)
	if r := d.Waivers[0].Reason; len(r) > MaxReason+len("…") || !strings.HasSuffix(r, "…") {
		t.Errorf("reason not clipped: %d bytes", len(r))
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"profile":"docs","waivers":[{"check":"1.14","reason":"r"}]}`))
	f.Add([]byte(`{"waivers":[{"check":"2.1","reason":"a"},{"check":"2.1"}],"profile":null}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := Parse(body, known, check)
		if err != nil {
			return
		}
		if d.Profile != "" && !known(d.Profile) {
			t.Fatalf("unknown profile kept: %q", d.Profile)
		}
		if len(d.Waivers) > MaxWaivers || len(d.Problems) > MaxProblems+1 {
			t.Fatalf("%d waivers, %d problems", len(d.Waivers), len(d.Problems))
		}
		for _, w := range d.Waivers {
			if !check(w.Check) || w.Reason == "" || len(w.Reason) > MaxReason+len("…") {
				t.Fatalf("bad waiver kept: %+v", w)
			}
		}
	})
}
