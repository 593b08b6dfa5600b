// Package wellknown validates the small JSON and markdown documents sites
// publish for agents: ai.json, Agent Skills indexes, SKILL.md front matter,
// OAuth 2.0 authorization-server and protected-resource metadata, and x402
// payment requirements.
package wellknown
