package signal

import (
	"bytes"
	"fmt"
	"mime"
	"strings"

	"github.com/agentready/agentready/engine/report"
)

// Verdict is one signal's outcome, shaped like a check result so the report
// can render both alike. Status is report.Pass, report.Partial or report.NA.
type Verdict struct {
	Status         report.Status `json:"status"`
	Message        string        `json:"message"`
	Recommendation string        `json:"recommendation,omitempty"`
	Details        []string      `json:"details,omitempty"`
	FoundAt        string        `json:"foundAt,omitempty"`
}

// Passed mirrors a check's `passed` field.
func (v Verdict) Passed() bool { return v.Status == report.Pass }

// DetailString joins Details the way a check's single `details` string reads.
func (v Verdict) DetailString() string { return strings.Join(v.Details, "; ") }

// NA, Partial and Pass build verdicts.
func NA(msg string, details ...string) Verdict {
	return Verdict{Status: report.NA, Message: msg, Details: details}
}

func Partial(msg, rec string, details ...string) Verdict {
	return Verdict{Status: report.Partial, Message: msg, Recommendation: rec, Details: details}
}

func Pass(msg string, details ...string) Verdict {
	return Verdict{Status: report.Pass, Message: msg, Details: details}
}

// Absent reports whether a response to a well-known URL means "nothing is
// published here", and says why in plain words. Many sites answer every path
// with 200 and their HTML home or error page, so a 2xx HTML body counts as
// absent too: grading it as a broken document would blame a site for a
// standard it never opted into.
func Absent(status int, contentType string, body []byte) (bool, string) {
	switch {
	case status == 0:
		return true, "no response"
	case status == 404 || status == 410:
		return true, fmt.Sprintf("the server answered %d", status)
	case status < 200 || status > 299:
		return true, fmt.Sprintf("the server answered %d, not a document", status)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return true, "the response body is empty"
	}
	if mt == "text/html" || mt == "application/xhtml+xml" || trimmed[0] == '<' {
		return true, "the server answered with an HTML page (a soft 404)"
	}
	return false, ""
}

// rawPhrases are fragments of Go library error text (encoding/json,
// encoding/base64, strconv, time, net, x509, yaml). A user-facing string that
// contains one leaked a library's message instead of explaining the problem.
var rawPhrases = []string{
	"invalid character", "cannot unmarshal", "unexpected end of JSON",
	"json: cannot", "json: unsupported", "json: Unmarshal", "json: invalid",
	"illegal base64", "strconv.", "parsing time", "yaml:", "x509:",
	"dial tcp", "no such host", "lookup ", "EOF", "invalid UTF-8", "runtime error",
}

// RawText returns the first library phrase s contains, or "". Tests of every
// signal parser run their messages and details through it.
func RawText(s string) string {
	for _, p := range rawPhrases {
		if strings.Contains(s, p) {
			return p
		}
	}
	return ""
}

// RawIn checks every user-facing string of a verdict.
func (v Verdict) RawIn() string {
	for _, s := range append([]string{v.Message, v.Recommendation}, v.Details...) {
		if p := RawText(s); p != "" {
			return p
		}
	}
	return ""
}
