package signal

import (
	"testing"

	"github.com/agentready/agentready/engine/report"
)

func TestAbsent(t *testing.T) {
	cases := []struct {
		status int
		ct     string
		body   string
		absent bool
	}{
		{404, "application/json", `{"keys":[]}`, true},
		{410, "", "", true},
		{500, "text/plain", "oops", true},
		{200, "text/html; charset=utf-8", "<!doctype html>", true},
		{200, "application/json", "  <html><body>Not found</body></html>", true}, // mislabelled soft 404
		{200, "application/json", " \n", true},
		{200, "application/json", `{"ucp":{}}`, false},
		{200, "", `{"keys":[]}`, false},
	}
	for _, c := range cases {
		got, why := Absent(c.status, c.ct, []byte(c.body))
		if got != c.absent || (got && why == "") {
			t.Errorf("%d %q %q: %v %q", c.status, c.ct, c.body, got, why)
		}
	}
}

func TestRawIn(t *testing.T) {
	v := Partial("not valid: invalid character '}' looking for beginning of object key string", "")
	if v.RawIn() != "invalid character" || v.Status != report.Partial || v.Passed() {
		t.Errorf("%+v", v)
	}
	if p := Pass("line 3, column 7: trailing comma before `}`", "a", "b").RawIn(); p != "" {
		t.Errorf("plain words flagged: %q", p)
	}
	if Pass("x", "a", "b").DetailString() != "a; b" {
		t.Error("details join")
	}
}
