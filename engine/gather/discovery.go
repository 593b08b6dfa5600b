package gather

import (
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/agentcard"
	"github.com/agentready/agentready/engine/parse/llmstxt"
	"github.com/agentready/agentready/engine/parse/wellknown"
)

// The discovery family: the documents a site publishes for agents to find
// it, each at a fixed path with at most one fallback: llms.txt, the A2A
// agent card, skill.md, /.well-known/ai.json and the Agent Skills index.
// Its checks are in engine/checks/discovery.go.

// LlmsTxt is the llms.txt judged (found, or the last tried) and its validation.
type LlmsTxt struct {
	Resp   *fetch.Response
	Report *llmstxt.Report
}

// AgentCardDoc is the A2A agent card.
type AgentCardDoc struct {
	Resp   *fetch.Response
	Legacy bool // found only at /.well-known/agent.json
	Report *agentcard.Report
	Err    error
}

// SkillFileDoc is /skill.md (or /SKILL.md) and its front matter.
type SkillFileDoc struct {
	Resp           *fetch.Response
	FrontMatter    map[string]any
	HasFrontMatter bool
}

// AISiteDoc is /.well-known/ai.json.
type AISiteDoc struct {
	Resp     *fetch.Response
	IsObject bool
	Valid    bool // names the site and its capabilities or skills
	Keys     []string
}

// SkillsIndexDoc is the Agent Skills index (v0.2, else v0.1).
type SkillsIndexDoc struct {
	Resp  *fetch.Response
	V01   bool
	Index *wellknown.SkillsIndex
	Err   error
}

var llmsGatherer = Define(Llms, "/llms.txt, then /.well-known/llms.txt, validated against llmstxt.org.", nil,
	func(c *Ctx) (*LlmsTxt, error) {
		r, _ := orFallback(c, fetchDoc(c, "/llms.txt", acceptText), "/.well-known/llms.txt", acceptText)
		out := &LlmsTxt{Resp: r}
		if r.Found() {
			out.Report = llmstxt.Validate(r.Body, baseOf(r))
		}
		return out, nil
	})

var agentCardGatherer = Define(AgentCard, "/.well-known/agent-card.json (A2A), then the legacy /.well-known/agent.json.", nil,
	func(c *Ctx) (*AgentCardDoc, error) {
		r, legacy := orFallback(c, fetchDoc(c, "/.well-known/agent-card.json", acceptJSON), "/.well-known/agent.json", acceptJSON)
		out := &AgentCardDoc{Resp: r, Legacy: legacy}
		if r.Found() {
			out.Report, out.Err = agentcard.Validate(r.Body)
		}
		return out, nil
	})

var skillFileGatherer = Define(SkillFile, "/skill.md, then /SKILL.md, with its YAML front matter.", nil,
	func(c *Ctx) (*SkillFileDoc, error) {
		r, _ := orFallback(c, fetchDoc(c, "/skill.md", acceptText), "/SKILL.md", acceptText)
		out := &SkillFileDoc{Resp: r}
		if r.Found() {
			out.FrontMatter, out.HasFrontMatter = wellknown.FrontMatter(r.Body)
		}
		return out, nil
	})

var aiSiteGatherer = Define(AISite, "/.well-known/ai.json.", nil,
	func(c *Ctx) (*AISiteDoc, error) {
		r := fetchDoc(c, "/.well-known/ai.json", acceptJSON)
		out := &AISiteDoc{Resp: r}
		if r.Found() {
			out.IsObject, out.Valid, out.Keys = wellknown.AISite(r.Body)
		}
		return out, nil
	})

var skillsIndexGatherer = Define(SkillsIndex, "/.well-known/agent-skills/index.json (v0.2), then /.well-known/skills/index.json (v0.1).", nil,
	func(c *Ctx) (*SkillsIndexDoc, error) {
		r, v01 := orFallback(c, fetchDoc(c, "/.well-known/agent-skills/index.json", acceptJSON), "/.well-known/skills/index.json", acceptJSON)
		out := &SkillsIndexDoc{Resp: r, V01: v01}
		if r.Found() {
			out.Index, out.Err = wellknown.ParseSkillsIndex(r.Body, v01)
		}
		return out, nil
	})
