package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
)

// Checks of the discovery family (engine/gather/discovery.go): llms.txt
// (1.1), the A2A agent card (1.2), skill.md (1.8), ai.json (1.9), the Agent
// Skills index (1.10), and CORS on every discovery document found (1.6).

func llmsTxt(in gather.Source) Outcome {
	l := gather.Get(in, gather.Llms)
	r := l.Resp
	if !r.Found() {
		return fail("No llms.txt was found at /llms.txt or /.well-known/llms.txt ("+absence(r)+").", "", probeOf(r))
	}
	rep := l.Report
	det := map[string]any{"title": rep.Title, "sections": len(rep.Sections), "links": rep.Links, "findings": first(rep.Findings, 20),
		"linksToLlmsFull": strings.Contains(string(r.Body), "llms-full.txt")}
	if rep.Valid {
		return pass(fmt.Sprintf("llms.txt is valid: %q with %s and %s.", rep.Title, plural(len(rep.Sections), "section", "sections"), plural(rep.Links, "link", "links")), det, at(r))
	}
	msg := "llms.txt exists but breaks the llmstxt.org format"
	for _, f := range rep.Findings {
		if f.Severity == "error" {
			if f.Line > 0 {
				msg += fmt.Sprintf(" (line %d: %s)", f.Line, f.Message)
			} else {
				msg += " (" + f.Message + ")"
			}
			break
		}
	}
	return partial(msg+".", "Fix the findings listed in details: the file must start with `# Title`, and list links as `- [name](url): notes` under `## Section` headings.", det, at(r))
}

func agentCard(in gather.Source) Outcome {
	doc := gather.Get(in, gather.AgentCard)
	r := doc.Resp
	if !r.Found() {
		return fail("No A2A Agent Card at /.well-known/agent-card.json or /.well-known/agent.json ("+absence(r)+").", "", probeOf(r))
	}
	if doc.Err != nil {
		return fail("The agent card is not a JSON object: "+shortErr(doc.Err)+".", "Serve valid JSON at /.well-known/agent-card.json.", nil)
	}
	rep := doc.Report
	switch {
	case rep.Valid && !doc.Legacy:
		return pass(fmt.Sprintf("A valid A2A v%s agent card for %q with %s.", rep.Version, rep.Name, plural(rep.Skills, "skill", "skills")), rep, at(r))
	case rep.Valid:
		return partial(fmt.Sprintf("A valid A2A v%s agent card exists, but only at the legacy path /.well-known/agent.json.", rep.Version),
			"Serve the same card at /.well-known/agent-card.json, the path A2A clients look up.", rep, at(r))
	case rep.HasIdentity:
		return partial("The agent card names itself but misses required members: "+strings.Join(rep.Missing, ", ")+".",
			"Add the missing members: "+strings.Join(rep.Missing, ", ")+" (see details for problems in skills and interfaces).", rep, at(r))
	}
	return fail("The JSON at the agent-card path is not an agent card (no name and description).", "", rep)
}

func cors(in gather.Source) Outcome {
	docs := []struct {
		name string
		r    *fetch.Response
	}{{"llms.txt", gather.Get(in, gather.Llms).Resp}, {"agent card", gather.Get(in, gather.AgentCard).Resp}, {"OpenAPI", gather.Get(in, gather.Spec).Resp},
		{"ai.json", gather.Get(in, gather.AISite).Resp}, {"skills index", gather.Get(in, gather.SkillsIndex).Resp},
		{"MCP server card", gather.Get(in, gather.MCPCard).Resp}, {"API catalog", gather.Get(in, gather.Catalog).Resp}}
	scanner := gather.SiteOf(in).ScannerOrigin
	var with, without []string
	for _, d := range docs {
		if !d.r.Found() {
			continue
		}
		acao := strings.TrimSpace(d.r.Header.Get("Access-Control-Allow-Origin"))
		if acao == "*" || (acao != "" && strings.EqualFold(acao, scanner)) {
			with = append(with, d.name)
		} else {
			without = append(without, d.name)
		}
	}
	det := map[string]any{"allowed": with, "missing": without}
	switch {
	case len(with)+len(without) == 0:
		return na("No discovery documents were found, so there is nothing for CORS to cover.")
	case len(without) == 0:
		return pass(fmt.Sprintf("All %s carry Access-Control-Allow-Origin.", plural(len(with), "discovery document", "discovery documents")), det, "")
	case len(with) > 0:
		return partial(fmt.Sprintf("%d of %d discovery documents carry Access-Control-Allow-Origin; missing on %s.", len(with), len(with)+len(without), strings.Join(without, ", ")), "", det, "")
	}
	return fail(fmt.Sprintf("None of the discovery documents (%s) carry Access-Control-Allow-Origin.", strings.Join(without, ", ")), "", det)
}

func skillFile(in gather.Source) Outcome {
	doc := gather.Get(in, gather.SkillFile)
	r := doc.Resp
	if !r.Found() {
		return fail("No /skill.md or /SKILL.md ("+absence(r)+").", "", probeOf(r))
	}
	fm, ok := doc.FrontMatter, doc.HasFrontMatter
	name, _ := fm["name"].(string)
	desc, _ := fm["description"].(string)
	if ok && name != "" && desc != "" {
		return pass(fmt.Sprintf("Skill file %q with front matter name and description.", name), map[string]any{"name": name}, at(r))
	}
	return partial("The skill file exists but has no YAML front matter with name and description.", "", map[string]any{"frontMatter": ok}, at(r))
}

func aiSite(in gather.Source) Outcome {
	doc := gather.Get(in, gather.AISite)
	r := doc.Resp
	if !r.Found() {
		return fail("No /.well-known/ai.json ("+absence(r)+").", "", probeOf(r))
	}
	obj, ok, keys := doc.IsObject, doc.Valid, doc.Keys
	switch {
	case ok:
		return pass("ai.json names the site and lists its capabilities or skills.", map[string]any{"keys": keys}, at(r))
	case obj:
		return partial("ai.json is a JSON object but lacks name plus capabilities or skills.", "", map[string]any{"keys": keys}, at(r))
	}
	return fail("/.well-known/ai.json is not a JSON object.", "Serve a JSON object at /.well-known/ai.json.", nil)
}

func skillsIndex(in gather.Source) Outcome {
	doc := gather.Get(in, gather.SkillsIndex)
	r := doc.Resp
	if !r.Found() {
		return fail("No Agent Skills index at /.well-known/agent-skills/index.json or /.well-known/skills/index.json ("+absence(r)+").", "", probeOf(r))
	}
	ix, err := doc.Index, doc.Err
	if err != nil {
		return partial("The skills index is not valid JSON: "+shortErr(err)+".", "", nil, at(r))
	}
	switch {
	case ix.Version == "0.2" && ix.Valid > 0:
		return pass(fmt.Sprintf("Agent Skills index v0.2 with %d valid of %s.", ix.Valid, plural(ix.Entries, "entry", "entries")), ix, at(r))
	case ix.Version == "0.1":
		return partial(fmt.Sprintf("Only a v0.1 skills index (%s); clients now read /.well-known/agent-skills/index.json (v0.2).", plural(ix.Entries, "entry", "entries")),
			"Publish a v0.2 index at /.well-known/agent-skills/index.json with `$schema`, and name, type, description, url, digest per skill.", ix, at(r))
	}
	return partial(fmt.Sprintf("The skills index has no valid entries (%s).", plural(ix.Entries, "entry", "entries")), "Give each skill name, type, description, url and a sha256 digest.", ix, at(r))
}
