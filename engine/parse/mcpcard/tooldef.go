package mcpcard

import (
	"regexp"
	"strings"
)

// ToolDef is a tool definition in one of the shapes agent ecosystems
// publish: MCP's {name, description, inputSchema}, Anthropic's {name,
// description, input_schema}, OpenAI's {type: "function", function: {name,
// description, parameters}} (or the older bare {name, description,
// parameters}), and Gemini's function declarations ({name, description,
// parameters} with type OBJECT).
type ToolDef struct {
	Ecosystem   string // "mcp", "anthropic", "openai", "gemini"; "" when no schema member names one
	Name        string
	Description string
	// Problem says why it is not a valid tool definition ("" when it is).
	Problem string
}

// Valid reports a tool definition an agent can use.
func (t ToolDef) Valid() bool { return t.Problem == "" }

// ReadToolDef reads m, a decoded JSON object, as a tool definition: the one
// answer to "what is a valid tool definition" (a codebase's tool files, a
// site's declared tool schemas). Valid means a name agents accept (see
// ValidToolName), a description, and an input schema of type object.
// shaped reports that m is written as a tool definition (a function
// wrapper, an inputSchema or input_schema member, or parameters beside a
// name and a description), which a walk over arbitrary documents needs
// before it counts m as a tool; t is filled either way.
func ReadToolDef(m map[string]any) (t ToolDef, shaped bool) {
	if m["type"] == "function" {
		if f, ok := m["function"].(map[string]any); ok {
			m, t.Ecosystem, shaped = f, "openai", true
		}
	}
	schema, hasSchema := any(nil), true
	switch {
	case t.Ecosystem != "":
		schema = m["parameters"]
	case m["inputSchema"] != nil:
		t.Ecosystem, schema, shaped = "mcp", m["inputSchema"], true
	case m["input_schema"] != nil:
		t.Ecosystem, schema, shaped = "anthropic", m["input_schema"], true
	case m["parameters"] != nil:
		schema = m["parameters"]
		t.Ecosystem = "openai" // the older functions entries
		if p, _ := schema.(map[string]any); p != nil && p["type"] == "OBJECT" {
			t.Ecosystem = "gemini"
		}
		shaped = m["name"] != nil && m["description"] != nil
	default:
		hasSchema = false
	}
	t.Name, _ = m["name"].(string)
	t.Description, _ = m["description"].(string)
	obj, _ := schema.(map[string]any)
	typ, _ := obj["type"].(string)
	switch {
	case !ValidToolName(t.Ecosystem, t.Name):
		t.Problem = "name missing or not a valid tool name"
	case strings.TrimSpace(t.Description) == "":
		t.Problem = "no description"
	case !hasSchema:
		t.Problem = "no input schema (inputSchema, input_schema or parameters)"
	case !strings.EqualFold(typ, "object"):
		t.Problem = "input schema is not an object schema"
	}
	return t, shaped
}

var (
	mcpToolName   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	otherToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// ValidToolName reports a tool name the ecosystem accepts: 1–128 of A–Z,
// a–z, 0–9, _ . - for MCP (its specification's rule), 1–64 of them for the
// function-calling APIs (and when the ecosystem is unknown).
func ValidToolName(ecosystem, name string) bool {
	if ecosystem == "mcp" {
		return mcpToolName.MatchString(name)
	}
	return otherToolName.MatchString(name)
}
