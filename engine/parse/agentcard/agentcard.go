package agentcard

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/agentready/agentready/engine/internal/jsonerr"
)

// Report is the validation result.
type Report struct {
	Valid       bool     `json:"valid"`
	Version     string   `json:"version,omitempty"` // "1.0" or "0.3" when valid
	Name        string   `json:"name,omitempty"`
	HasIdentity bool     `json:"hasNameAndDescription"`
	Skills      int      `json:"skills"`
	Missing     []string `json:"missing,omitempty"` // required members absent, for the closest version
	Findings    []string `json:"findings,omitempty"`
}

var common = []string{"name", "description", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"}

// Validate reads a card. err is set when the body is not a JSON object.
func Validate(body []byte) (*Report, error) {
	var card map[string]json.RawMessage
	if err := json.Unmarshal(body, &card); err != nil {
		return nil, errors.New("not a JSON object: " + jsonerr.Describe(body, err))
	}
	r := &Report{}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(card[k], &s)
		return s
	}
	r.Name = str("name")
	r.HasIdentity = r.Name != "" && str("description") != ""
	missing := func(keys []string) []string {
		var m []string
		for _, k := range keys {
			v, ok := card[k]
			if !ok || string(v) == "null" || string(v) == `""` {
				m = append(m, k)
			}
		}
		return m
	}
	base := missing(common)
	// A card is v1.0-shaped when it has supportedInterfaces, v0.3-shaped with url + protocolVersion.
	v10 := append([]string(nil), base...)
	if ifs, ok := card["supportedInterfaces"]; !ok {
		v10 = append(v10, "supportedInterfaces")
	} else {
		var list []map[string]any
		if json.Unmarshal(ifs, &list) != nil || len(list) == 0 {
			v10 = append(v10, "supportedInterfaces")
			r.Findings = append(r.Findings, "supportedInterfaces must be a non-empty array")
		} else {
			for i, it := range list {
				if s, _ := it["url"].(string); s == "" {
					r.Findings = append(r.Findings, fmt.Sprintf("supportedInterfaces[%d] has no url", i))
				}
				_, pb := it["protocolBinding"].(string)
				_, tr := it["transport"].(string)
				if !pb && !tr {
					r.Findings = append(r.Findings, fmt.Sprintf("supportedInterfaces[%d] has no protocolBinding", i))
				}
			}
		}
	}
	v03 := append([]string(nil), base...)
	for _, k := range []string{"url", "protocolVersion"} {
		if str(k) == "" {
			v03 = append(v03, k)
		}
	}
	skillProblems := checkSkills(card["skills"], &r.Skills)
	r.Findings = append(r.Findings, skillProblems...)
	switch {
	case len(v10) == 0 && len(skillProblems) == 0:
		r.Valid, r.Version = true, "1.0"
	case len(v03) == 0 && len(skillProblems) == 0:
		r.Valid, r.Version = true, "0.3"
	default:
		r.Missing = v10
		if len(v03) < len(v10) {
			r.Missing = v03
		}
	}
	sort.Strings(r.Missing)
	return r, nil
}

func checkSkills(raw json.RawMessage, n *int) []string {
	if len(raw) == 0 {
		return nil // reported as a missing member
	}
	var skills []map[string]any
	if err := json.Unmarshal(raw, &skills); err != nil {
		return []string{"skills must be an array of objects"}
	}
	*n = len(skills)
	var out []string
	if len(skills) == 0 {
		out = append(out, "skills is empty")
	}
	for i, s := range skills {
		for _, k := range []string{"id", "name", "description"} {
			if v, _ := s[k].(string); v == "" {
				out = append(out, fmt.Sprintf("skills[%d] has no %s", i, k))
			}
		}
		if tags, ok := s["tags"].([]any); !ok || len(tags) == 0 {
			out = append(out, fmt.Sprintf("skills[%d] has no tags", i))
		}
		if len(out) > 20 {
			break
		}
	}
	return out
}
