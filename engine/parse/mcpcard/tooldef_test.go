package mcpcard

import (
	"encoding/json"
	"strings"
	"testing"
)

// One rule for what a valid tool definition is, in every shape agents use.
func TestReadToolDef(t *testing.T) {
	const desc = `"description":"Finds orders by customer."`
	cases := []struct {
		name, doc string
		eco       string
		shaped    bool
		problem   string
	}{
		{"mcp", `{"name":"find_orders",` + desc + `,"inputSchema":{"type":"object"}}`, "mcp", true, ""},
		{"anthropic", `{"name":"find_orders",` + desc + `,"input_schema":{"type":"object","properties":{}}}`, "anthropic", true, ""},
		{"openai", `{"type":"function","function":{"name":"find_orders",` + desc + `,"parameters":{"type":"object"}}}`, "openai", true, ""},
		{"openai legacy", `{"name":"find_orders",` + desc + `,"parameters":{"type":"object"}}`, "openai", true, ""},
		{"gemini", `{"name":"find_orders",` + desc + `,"parameters":{"type":"OBJECT"}}`, "gemini", true, ""},
		{"mcp name of 128", `{"name":"` + strings.Repeat("a", 128) + `",` + desc + `,"inputSchema":{"type":"object"}}`, "mcp", true, ""},
		{"openai name of 65", `{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `",` + desc + `,"parameters":{"type":"object"}}}`, "openai", true, "name missing or not a valid tool name"},
		{"name with a space", `{"name":"cancel order",` + desc + `,"inputSchema":{"type":"object"}}`, "mcp", true, "name missing or not a valid tool name"},
		{"no description", `{"name":"a","description":"  ","inputSchema":{"type":"object"}}`, "mcp", true, "no description"},
		{"string schema", `{"name":"a",` + desc + `,"inputSchema":{"type":"string"}}`, "mcp", true, "input schema is not an object schema"},
		{"schema without type", `{"name":"a",` + desc + `,"input_schema":{"properties":{}}}`, "anthropic", true, "input schema is not an object schema"},
		// Not written as a tool: a walk over arbitrary JSON skips these,
		// a declared tool list still says what they lack.
		{"name only", `{"name":"a",` + desc + `}`, "", false, "no input schema (inputSchema, input_schema or parameters)"},
		{"parameters without a description", `{"name":"a","parameters":{"type":"object"}}`, "openai", false, "no description"},
		{"a package.json", `{"name":"my-app","version":"1.0.0"}`, "", false, "no description"},
	}
	for _, c := range cases {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.doc), &m); err != nil {
			t.Fatal(err)
		}
		d, shaped := ReadToolDef(m)
		if d.Ecosystem != c.eco || shaped != c.shaped || d.Problem != c.problem || d.Valid() != (c.problem == "") {
			t.Errorf("%s: %+v shaped=%v; want %s, %v, %q", c.name, d, shaped, c.eco, c.shaped, c.problem)
		}
	}
}
