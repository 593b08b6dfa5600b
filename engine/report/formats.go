package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// RuleInfo describes a check for formats that list rules (SARIF).
type RuleInfo struct {
	ID, Name, LooksFor, Rule, Fix string
	Level                         int
}

// SARIF renders checks as a SARIF 2.1.0 log: one rule per check, one result
// per check (kind pass/fail/notApplicable), with the evidence's file:line as
// the location, relative to root.
func SARIF(checks []Check, rules []RuleInfo, version, root string) ([]byte, error) {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID                   string            `json:"id"`
		Name                 string            `json:"name"`
		ShortDescription     msg               `json:"shortDescription"`
		FullDescription      msg               `json:"fullDescription"`
		Help                 msg               `json:"help"`
		DefaultConfiguration map[string]string `json:"defaultConfiguration"`
		Properties           map[string]any    `json:"properties"`
	}
	index := map[string]int{}
	var rs []rule
	for i, r := range rules {
		index[r.ID] = i
		rs = append(rs, rule{ID: r.ID, Name: pascal(r.Name), ShortDescription: msg{r.Name}, FullDescription: msg{r.LooksFor},
			Help: msg{r.Rule + " Fix: " + r.Fix}, DefaultConfiguration: map[string]string{"level": "warning"},
			Properties: map[string]any{"tags": []string{"agent-readiness", "level-" + strconv.Itoa(r.Level)}}})
	}
	var results []map[string]any
	for _, c := range checks {
		kind, level := "fail", "error"
		switch c.Status {
		case Pass:
			kind, level = "pass", "none"
		case NA:
			kind, level = "notApplicable", "none"
		case Partial:
			level = "warning"
		}
		text := c.Message
		if c.Recommendation != "" {
			text += " " + c.Recommendation
		}
		res := map[string]any{"ruleId": c.ID, "kind": kind, "level": level, "message": map[string]string{"text": text}}
		if i, ok := index[c.ID]; ok {
			res["ruleIndex"] = i
		}
		if file, line, ok := splitFileLine(c.FoundAt); ok {
			res["locations"] = []map[string]any{{"physicalLocation": map[string]any{
				"artifactLocation": map[string]any{"uri": file, "uriBaseId": "SRCROOT"},
				"region":           map[string]any{"startLine": line}}}}
		}
		results = append(results, res)
	}
	abs, _ := filepath.Abs(root)
	log := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []map[string]any{{
			"tool": map[string]any{"driver": map[string]any{"name": "agentready", "version": version,
				"informationUri": "https://github.com/agentready/agentready", "rules": rs}},
			"originalUriBaseIds": map[string]any{"SRCROOT": map[string]string{"uri": "file://" + filepath.ToSlash(abs) + "/"}},
			"results":            results,
		}},
	}
	return json.MarshalIndent(log, "", "  ")
}

func splitFileLine(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return s[:i], n, true
}

func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// JUnit renders checks as JUnit XML: a test case per check, fail and partial
// as failures, na as skipped.
func JUnit(suite string, checks []Check) ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	ts := testsuite{Name: suite, Tests: len(checks)}
	for _, c := range checks {
		tc := testcase{Name: c.ID + " " + c.Name, Classname: fmt.Sprintf("agentready.level%d", c.Level), SystemOut: c.Message}
		switch c.Status {
		case Fail, Partial:
			ts.Failures++
			tc.Failure = &failure{Message: c.Message, Type: string(c.Status), Body: strings.TrimSpace(c.Recommendation + "\n" + c.FoundAt + "\n" + c.Details.String())}
		case NA:
			ts.Skipped++
			tc.Skipped = &skipped{Message: c.Message}
		}
		ts.Cases = append(ts.Cases, tc)
	}
	b, err := xml.MarshalIndent(struct {
		XMLName xml.Name `xml:"testsuites"`
		Suite   testsuite
	}{Suite: ts}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
